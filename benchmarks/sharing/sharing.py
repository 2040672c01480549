#!/usr/bin/env python3
"""Competing jobs on this machine (issue #15; docs/guide/sharing.md): PRESTO parallel jobs and
serial CPU-bound jobs, each its own process, run together under each allocation policy, beside
the same jobs run one after another; wall and CPU time against the ideal (the ASAT thesis's
metric: total work / machine capacity).

    benchmarks/sharing/sharing.py [--quick] [--build-dir build] [--json FILE] [--table FILE]

Scenarios, on a machine of C hardware threads (every parallel job asks for C processors):
  parallel+serial  one parallel job and C-1 serial jobs (the thesis's "parallel job plus serial
                   load"); the parallel job runs at `--nice` (default 2) under every policy, as
                   the thesis ran ASAT jobs slightly below the other load
  parallel x C     C parallel jobs of equal priority and no other load (the thesis's competing
                   ASAT jobs, §4.7)
Every job does the same work W (sharing_job's units). The work is measured in this run as the
CPU time of one serial job alone: ideal wall = jobs x W / C, ideal CPU = jobs x W. "one after
another" runs the same jobs alone in turn (parallel jobs with the fixed policy); "wall / one
after another" is the ratio least disturbed by other users of the machine.
"fixed, hard spin" is the fixed policy with idle processors that never park (the thesis's
run-times spun; PRESTO's park after ~256 us).
Each configuration runs once per round, the configurations interleaved (--rounds, default 3),
and the figures are medians. Prints the table and one JSON line per scenario and policy.
Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import time

# (row label, --policy, --idle-spin): PRESTO's idle processors poll ~256 us and then park;
# "fixed, hard spin" polls for ~1000 s instead, as the thesis's run-times spun ("hard spin").
POLICIES = [("fixed", "fixed", None), ("fixed, hard spin", "fixed", 10**9), ("asat", "asat", None),
            ("load", "load", None), ("hybrid", "hybrid", None)]


def job_cmd(exe, args, parallel, policy, processors, label, idle_spin=None):
    cmd = [exe, "--regions", str(args.regions), "--indices", str(args.indices), "--grain", str(args.grain),
           "--label", label]
    if parallel:
        cmd += ["--processors", str(processors), "--policy", policy, "--schedule", args.schedule]
        if idle_spin is not None:
            cmd += ["--idle-spin", str(idle_spin)]
    else:
        cmd += ["--serial"]
    return cmd


def run_together(cmds, nices):
    """Starts every command at once; returns (makespan seconds, [their JSON records])."""
    env = dict(os.environ)
    env.pop("PRESTO_ALLOCATION", None)  # each job's --policy decides
    start = time.monotonic()
    procs = [subprocess.Popen(["nice", "-n", str(n)] + c if n else c, stdout=subprocess.PIPE, text=True, env=env)
             for c, n in zip(cmds, nices)]
    records = []
    for p, c in zip(procs, cmds):
        out, _ = p.communicate()
        if p.returncode != 0:
            sys.exit(f"sharing.py: {' '.join(c)} failed with status {p.returncode}")
        records.append(json.loads(out.strip().splitlines()[-1]))
    return time.monotonic() - start, records


def one_after_another(args, exe, cpus, parallel_jobs, jobs):
    """Each job alone in turn (parallel jobs with the fixed policy)."""
    wall = cpu = 0.0
    for k in range(jobs):
        w, recs = run_together([job_cmd(exe, args, k < parallel_jobs, "fixed", cpus, "alone")], [0])
        wall += w
        cpu += recs[0]["cpu_s"]
    return {"wall": wall, "cpu": cpu, "par_processors": float(cpus)}


def together(args, exe, cpus, parallel_jobs, serial_jobs, nice, policy, idle_spin):
    """Every job at once; the parallel jobs under `policy`."""
    cmds = [job_cmd(exe, args, True, policy, cpus, f"parallel {k}", idle_spin) for k in range(parallel_jobs)]
    cmds += [job_cmd(exe, args, False, policy, cpus, f"serial {k}") for k in range(serial_jobs)]
    wall, recs = run_together(cmds, [nice] * parallel_jobs + [0] * serial_jobs)
    par = recs[:parallel_jobs]
    return {"wall": wall, "cpu": sum(r["cpu_s"] for r in recs),
            "par_processors": sum(r["mean_processors"] for r in par) / len(par)}


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def scenario(args, exe, cpus, name, parallel_jobs, serial_jobs, nice, work):
    """Runs every configuration once per round, the configurations interleaved so that a change
    in the machine's other load touches them all alike; each figure is the median of the rounds."""
    jobs = parallel_jobs + serial_jobs
    ideal_wall = jobs * work / cpus
    configs = [("one after another", lambda: one_after_another(args, exe, cpus, parallel_jobs, jobs))]
    configs += [(row, lambda p=policy, i=idle_spin: together(args, exe, cpus, parallel_jobs, serial_jobs, nice, p, i))
                for row, policy, idle_spin in POLICIES]
    runs = {row: [] for row, _ in configs}
    for _ in range(args.rounds):
        for row, run in configs:
            runs[row].append(run())
    seq = median([r["wall"] for r in runs["one after another"]])
    out = []
    for row, _ in configs:
        wall = median([r["wall"] for r in runs[row]])
        cpu = median([r["cpu"] for r in runs[row]])
        out.append({"name": "sharing", "scenario": name, "policy": row, "jobs": jobs, "cpus": cpus, "rounds": args.rounds,
                    "work_s": round(work, 4), "ideal_wall_s": round(ideal_wall, 4), "wall_s": round(wall, 4),
                    "cpu_s": round(cpu, 4), "wall_ratio": round(wall / ideal_wall, 3),
                    "wall_vs_one_after_another": round(wall / seq, 3),
                    "cpu_ratio": round(cpu / (jobs * work), 3),
                    "wall_min_max_s": [round(min(r["wall"] for r in runs[row]), 3),
                                       round(max(r["wall"] for r in runs[row]), 3)],
                    "parallel_mean_processors": round(median([r["par_processors"] for r in runs[row]]), 3)})
    return out


def loadavg():
    """The 1-minute load average and the running count of /proc/loadavg, as text."""
    try:
        with open("/proc/loadavg") as f:
            fields = f.read().split()
        return f"load average {fields[0]}, {fields[3].split('/')[0]} running"
    except (OSError, IndexError):
        return "load unknown"


def table(records):
    lines = ["| scenario | policy | wall / ideal | CPU / ideal | wall / one after another | parallel jobs' mean processors "
             "| wall (s): median [min, max] | ideal wall (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['scenario']} | {r['policy']} | {r['wall_ratio']:.2f}× | {r['cpu_ratio']:.2f}× | "
                     f"{r['wall_vs_one_after_another']:.2f}× | "
                     f"{r['parallel_mean_processors']:.2f} | {r['wall_s']:.2f} [{r['wall_min_max_s'][0]:.2f}, {r['wall_min_max_s'][1]:.2f}] | "
                     f"{r['ideal_wall_s']:.2f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny jobs (a smoke run; ASAT barely evaluates)")
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "build"))
    ap.add_argument("--regions", type=int, help="parallel regions per job (default 200; 20 with --quick)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds; figures are medians (default 3; 1 with --quick)")
    ap.add_argument("--indices", type=int, default=64, help="indices per region")
    ap.add_argument("--grain", type=int, default=100, help="work units per index (~1-2 us each)")
    ap.add_argument("--schedule", default="static", choices=["static", "guided"])
    ap.add_argument("--nice", type=int, default=2, help="niceness of the parallel job beside serial load")
    ap.add_argument("--cpus", type=int, default=os.cpu_count(), help="machine capacity C (default: all)")
    ap.add_argument("--json", help="append the JSON lines to this file")
    ap.add_argument("--table", help="write the markdown table to this file")
    args = ap.parse_args()
    if args.regions is None:
        args.regions = 20 if args.quick else 200
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    exe = os.path.join(os.path.abspath(args.build_dir), "benchmarks", "sharing_job")
    if not os.path.exists(exe):
        sys.exit(f"sharing.py: {exe} is missing: ninja -C {args.build_dir} benchmarks/sharing_job")
    cpus = max(1, args.cpus)
    before = loadavg()
    _, (alone,) = run_together([job_cmd(exe, args, False, "fixed", cpus, "work")], [0])
    work = alone["cpu_s"]
    records = scenario(args, exe, cpus, "parallel+serial", 1, cpus - 1, args.nice, work)
    records += scenario(args, exe, cpus, f"parallel x {cpus}", cpus, 0, 0, work)
    for r in records:
        print(json.dumps(r), flush=True)
    note = (f"Machine: {cpus} hardware threads; before the run: {before}; after: {loadavg()} "
            f"(other programs' threads compete with the jobs; W = {work:.2f} s; medians of {args.rounds} "
            f"interleaved rounds).")
    text = table(records) + "\n\n" + note
    print(text)
    if args.json:
        with open(args.json, "a") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
