#!/usr/bin/env python3
"""Runs PRESTO's benchmark suite beside its peers and regenerates every result from one run.

    benchmarks/run.py            full run (several minutes): writes benchmarks/results/,
                                 the plots in docs/benchmarks/ and the results section of
                                 docs/benchmarks.md
    benchmarks/run.py --quick    reduced counts (well under a minute, CI's smoke run):
                                 writes BUILD/benchmarks/quick-results/ only

Steps: builds presto_bench (ninja), builds and runs the Go peer (benchmarks/peers/go) when a
Go toolchain is installed, runs presto_bench with the Go results so that every ratio comes
from this one run, runs the apps and the echo servers (benchmarks/echo/echo_bench.py: PRESTO,
Go, Boost.Fiber + Asio under one client), then writes results.jsonl (one JSON line per
measurement and per ratio), table.md and SVG plots. Standard library only. Right after
presto_bench it runs benchmarks/psim_phold --no-sweep, whose ratios (PSIM's PHOLD targets)
join the target table; beside Figure 3's targets it prints benchmarks/figure3_floor (the product
as bare records: the floor) and benchmarks/figure3_split (where PRESTO's time goes in it).
"""

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "echo"))
import echo_bench  # noqa: E402  (benchmarks/echo/echo_bench.py: the echo servers)
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
BEGIN, END = "<!-- results:begin (benchmarks/run.py writes this section) -->", "<!-- results:end -->"

SYSTEMS = ["presto", "presto-lifo", "boost.context", "boost.fiber", "onetbb", "std", "go", "kernel-per-element"]
COLORS = {"presto": "#d62728", "presto-lifo": "#ff7f0e", "boost.context": "#7f7f7f", "boost.fiber": "#1f77b4", "std": "#2ca02c",
          "go": "#9467bd", "kernel-per-element": "#8c564b", "onetbb": "#17becf", "optimal": "#000000"}


def log(msg):
    print(f"run.py: {msg}", flush=True)


# Seconds each command may take (main() sets it from --timeout): a benchmark that hangs fails the
# run, naming itself, instead of holding it (and CI) forever. A hung spinlocks run once did.
TIMEOUT = None


class Watched:
    """A command run in its own process group, which is killed (the command and everything it
    started) when it outlives TIMEOUT or when run.py itself is interrupted. `with Watched(cmd,
    stdout=...) as p:` gives the Popen; leaving the block waits for it and exits run.py, naming
    the command, if it was killed for time."""

    def __init__(self, cmd, **kw):
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, text=True, start_new_session=True, **kw)
        self.expired = False
        self.timer = threading.Timer(TIMEOUT, self._expire) if TIMEOUT else None
        if self.timer:
            self.timer.start()

    def _expire(self):
        self.expired = True
        self._kill()

    def _kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def __enter__(self):
        return self.proc

    def __exit__(self, kind, value, tb):
        if kind is not None:
            self._kill()
        self.proc.__exit__(kind, value, tb)  # closes its pipes and waits
        if self.timer:
            self.timer.cancel()
        if self.expired:
            sys.exit(f"run.py: {' '.join(self.cmd)} did not finish within {TIMEOUT:g} s (--timeout) and was "
                     "killed: a hang? Run it alone to see.")
        return False


def run(cmd, **kw):
    log(" ".join(cmd))
    with Watched(cmd, **kw) as p:
        out, _ = p.communicate()
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd, out)
    return subprocess.CompletedProcess(cmd, p.returncode, out)


# ---------------------------------------------------------------- running

def build_suite(build_dir):
    run(["ninja", "-C", build_dir, "benchmarks/presto_bench", "benchmarks/sharing_job", "benchmarks/figure3_floor",
         "benchmarks/figure3_split"], stdout=sys.stderr)
    if shutil.which("pkg-config") and subprocess.run(["pkg-config", "--exists", "ck"]).returncode == 0:
        run(["ninja", "-C", build_dir, "benchmarks/spinlocks"], stdout=sys.stderr)  # needs Concurrency Kit
    # PSIM's PHOLD targets; optional like the apps: a build without it skips them (run_phold says so).
    cmd = ["ninja", "-C", build_dir, "benchmarks/psim_phold"]
    log(" ".join(cmd))
    if subprocess.run(cmd, stdout=sys.stderr).returncode != 0:
        log("benchmarks/psim_phold does not build here: the PSIM PHOLD targets are skipped")


def go_peer(args, build_dir, counts):
    """Builds and runs the Go peer; returns the path of its JSON lines, or None without Go."""
    go = shutil.which("go")
    if go is None:
        log("no Go toolchain on PATH: the Go peer is skipped (its ratios read 'not measured')")
        return None
    exe = os.path.join(build_dir, "benchmarks", "go-peer")
    env = dict(os.environ, GOTOOLCHAIN="local", GOPROXY="off", GOFLAGS="-mod=mod")
    run([go, "build", "-o", exe, "."], cwd=os.path.join(ROOT, "benchmarks", "peers", "go"), env=env)
    cmd = [exe, "-processors", str(args.processors), "-counts", counts] + (["-quick"] if args.quick else []) + \
        (["-doubling"] if args.doubling else [])
    out = run(cmd, stdout=subprocess.PIPE).stdout
    sys.stdout.write(out)
    path = os.path.join(build_dir, "benchmarks", "go.jsonl")
    with open(path, "w") as f:
        f.write(out)
    return path


def run_suite(args, build_dir, out_dir):
    bench = os.path.join(build_dir, "benchmarks", "presto_bench")
    common = ["--processors", str(args.processors)] + (["--quick"] if args.quick else []) + \
        (["--doubling"] if args.doubling else [])
    counts = run([bench, "--figure3-counts"] + common, stdout=subprocess.PIPE).stdout.strip()
    peers = go_peer(args, build_dir, counts)
    cmd = [bench] + common + (["--peers", peers] if peers else [])
    log(" ".join(cmd))
    lines = []
    with Watched(cmd, stdout=subprocess.PIPE) as p:
        for line in p.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            lines.append(line)
    if p.returncode != 0:
        sys.exit(f"run.py: presto_bench failed ({p.returncode})")
    measurements, ratios = [], []
    for line in lines:
        if line.startswith("{"):
            rec = json.loads(line)
            (ratios if "ratio" in rec else measurements).append(rec)
    if peers:
        with open(peers) as f:
            measurements += [json.loads(l) for l in f if l.startswith("{")]
    with open(os.path.join(out_dir, "results.jsonl"), "w") as f:
        for rec in measurements + ratios:
            f.write(json.dumps(rec) + "\n")
    return measurements, ratios


def append_results(out_dir, recs):
    """Appends JSON records to results.jsonl, which run_suite started."""
    with open(os.path.join(out_dir, "results.jsonl"), "a") as f:
        for rec in recs:
            f.write(json.dumps(rec) + "\n")


def run_phold(args, build_dir, out_dir):
    """Runs benchmarks/psim_phold --no-sweep (PSIM's PHOLD on 1 and 2 processors beside PSIM's
    sequential simulator, in the same run); appends its ratio lines (the PSIM PHOLD targets), the
    host's round trips around its 2-processor runs and where those runs' time goes to results.jsonl
    and returns the three lists, or ([], [], []) when it was not built."""
    exe = os.path.join(build_dir, "benchmarks", "psim_phold")
    if not os.path.exists(exe):
        log("benchmarks/psim_phold not built: the PSIM PHOLD targets are skipped")
        return [], [], []
    out = run([exe, "--no-sweep"] + (["--quick"] if args.quick else []), stdout=subprocess.PIPE).stdout
    sys.stdout.write(out)
    recs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    ratios = [rec for rec in recs if "ratio" in rec]
    host = [rec for rec in recs if rec.get("system") == "host"]
    split = [rec for rec in recs if "psim_split" in rec]
    append_results(out_dir, ratios + host + split)
    return ratios, host, split


def phold_split_table(split):
    """psim_phold's accounting of the PHOLD targets' runs: per protocol and processor count, the
    time an event, the processor time beyond the work, the work's share, the processors' share in
    idle(), and what the protocol did."""
    rows = ["| protocol | processors | ns an event | processor ns beyond the work | the work's share | "
            "the processors' share idle | LP blocks | of those, rewaits | yields | null messages | of those, taken asleep "
            "| dispatches | processor parks | deadlock breaks | LPs asleep on average |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in split:
        beyond = r["ns_per_event"] * r["processors"] - r["work_ns"]
        rows.append(f"| {r['psim_split']} | {r['processors']} | {r['ns_per_event']:.0f} | {beyond:.0f} | "
                    f"{100 * r['work_share']:.0f}% | {100 * r['idle_share']:.0f}% | {r['blocks']:.3f} | "
                    f"{r['rewaits']:.3f} | {r['yields']:.3f} | {r['null_messages']:.2f} | {r['passed_on']:.3f} | {r['dispatches']:.3f} | {r['parks']:.4f} | "
                    f"{r['deadlock_breaks']:.4f} | {r['lps_asleep']:.1f} of {r['lps']} |")
    return "\n".join(rows)


def host_line(suite_ms, phold_host, split_host):
    """The host's cross-core cache-line round trips of this run (support/harness.hpp,
    core_round_trip): the multi-processor ratios move with them."""
    def trips(ms):
        return [f"{m['ns_per_op']:.0f} ns" for m in ms if m.get("system") == "host"]
    parts = []
    if trips(suite_ms):
        parts.append(" before and after the suite: " + ", ".join(trips(suite_ms)))
    if trips(phold_host):
        parts.append(" around PSIM's 2-processor runs: " + ", ".join(trips(phold_host)))
    if trips(split_host):
        parts.append(" around figure3_split: " + ", ".join(trips(split_host)))
    if not parts:
        return ""
    return ("The host's cross-core latency, a cache-line round trip between two pinned OS threads,"
            + ";".join(parts) + ". The multi-processor ratios move with it (docs/benchmarks.md, "
            "\"Where a target is missed\").")


def run_json_rows(args, build_dir, out_dir, name, skipped):
    """Runs benchmarks/NAME (--quick with ours), echoes its output, appends its JSON lines to
    results.jsonl and returns them; [] with a note naming what is `skipped` where it was not built."""
    exe = os.path.join(build_dir, "benchmarks", name)
    if not os.path.exists(exe):
        log(f"benchmarks/{name} not built: {skipped} is skipped")
        return []
    out = run([exe] + (["--quick"] if args.quick else []), stdout=subprocess.PIPE).stdout
    sys.stdout.write(out)
    rows = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    append_results(out_dir, rows)
    return rows


def run_floor(args, build_dir, out_dir):
    """benchmarks/figure3_floor: Figure 3's product as 40,000 bare records, no threads (what any
    design could reach on this machine)."""
    return run_json_rows(args, build_dir, out_dir, "figure3_floor", "Figure 3's floor")


def run_split(args, build_dir, out_dir):
    """benchmarks/figure3_split: Figure 3's product with PRESTO threads, each element's kernel
    timed on the processor that runs it. Returns its rows and the host's round trips around them."""
    rows = run_json_rows(args, build_dir, out_dir, "figure3_split", "where Figure 3's time goes")
    return [r for r in rows if "split" in r], [r for r in rows if r.get("system") == "host"]


def split_table(split):
    """figure3_split's rows: per thread count and processor, the kernel and the time outside it (ms)."""
    rows = ["| threads | wall (untimed) | processor | elements | kernel | between elements (an element) "
            "| before the first | after the last |", "|---|---|---|---|---|---|---|---|"]
    for r in split:
        for q in range(r["processors"]):
            n = r["elements"][q]
            each = f" ({r['between_ms'][q] * 1e6 / (n - 1):.0f} ns)" if n > 1 else ""
            rows.append(f"| {r['split']:,} | {r['wall_ms']:.3g} ms ({r['untimed_ms']:.3g}) | {q} | {n:,.0f} | "
                        f"{r['kernel_ms'][q]:.3g} ms | {r['between_ms'][q]:.3g} ms{each} | {r['before_ms'][q]:.3g} ms | "
                        f"{r['after_ms'][q]:.3g} ms |")
    return "\n".join(rows)


def floor_table(floor, ratios):
    """Figure 3's 2-processor targets beside the floor's rows, each as medians: 2 parts, 40,000,
    their ratio, for the tight kernel the 40,000 against each element's kernel alone, and the
    host's cross-core round trip taken just before each floor row."""
    rows = ["| how 40,000 elements run, 2 processors | 2 parts | 40,000 parts | ratio (target ≤ 1.15×) "
            "| 40,000 / the kernel per element alone (target ≤ 1.15×) | host's round trip before it |",
            "|---|---|---|---|---|---|"]
    to_alone = next((r for r in ratios if r["ratio"].startswith("Fig. 3") and "kernel per element" in r["ratio"]),
                    None)
    for r in ratios:
        if r["ratio"].startswith("Fig. 3") and r["ratio"].endswith("/ 2 threads"):
            tight = "tight" in r["ratio"]
            kernel = "tight kernel" if tight else "paper's kernel"
            alone = f"{to_alone['value']:.3g}×" if tight and to_alone else "—"
            rows.append(f"| PRESTO threads, {kernel} (the targets above) | {fmt_quantity(r['baseline'], r['unit'])} "
                        f"| {fmt_quantity(r['presto'], r['unit'])} | {r['value']:.3g}× | {alone} | — |")
    for f in floor:
        if "kernel_alone_ms" in f:
            rows.append(f"| no records, tight kernel: each element's kernel in turn, 2 OS threads | — | "
                        f"{f['kernel_alone_ms']:.3g} ms | — | 1× | — |")
            continue
        kernel = "tight kernel" if f.get("kernel") == "tight" else "paper's kernel"
        alone = f"{f['ratio_to_alone']:.3g}×" if "ratio_to_alone" in f else "—"
        records = f.get("records", 40000)
        made = f" (records for {records:,} of the 40,000 parts)" if records < 40000 else ""
        trip = f"{f['round_trip_ns']:.0f} ns" if f.get("round_trip_ns") else "—"
        rows.append(f"| bare records, {kernel}: {f['floor']}{made} | {f['median_ms'][0]:.3g} ms | "
                    f"{f['median_ms'][1]:.3g} ms | {f['ratio']:.3g}× | {alone} | {trip} |")
    return "\n".join(rows)


def run_spinlocks(args, build_dir, out_dir):
    """Runs benchmarks/micro/spinlocks (built only with Concurrency Kit); returns its measurements
    and its comment lines (the predictions it prints), or ([], []) when it was not built."""
    exe = os.path.join(build_dir, "benchmarks", "spinlocks")
    if not os.path.exists(exe):
        log("benchmarks/spinlocks not built (Concurrency Kit missing): spinning and blocking skipped")
        return [], []
    out = run([exe] + (["--quick"] if args.quick else []), stdout=subprocess.PIPE).stdout
    sys.stdout.write(out)
    ms = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    notes = [l[2:] for l in out.splitlines() if l.startswith("# ")]
    with open(os.path.join(out_dir, "spinlocks.jsonl"), "w") as f:
        f.write("\n".join(json.dumps(m) for m in ms) + "\n")
    return ms, notes


LOCK_COLORS = {"tas": "#8c564b", "ttas": "#e377c2", "ttas-static": "#bcbd22", "ttas-exp": "#17becf",
               "ticket": "#1f77b4", "anderson": "#2ca02c", "mcs": "#d62728", "clh": "#9467bd", "presto": "#000000",
               "block": "#1f77b4", "spin": "#d62728", "spin-then-block-10us": "#2ca02c", "competitive": "#000000"}


def spinlock_plots(ms, plot_dir):
    """Anderson's curves and the wait-policy plots; returns [(file name, caption)]."""
    os.makedirs(plot_dir, exist_ok=True)
    made = []
    for suffix, title in (("", "presto::locks"), ("ck-", "Concurrency Kit")):
        series = []
        for m_sys in sorted({m["system"] for m in ms if m["name"] == "anderson"}):
            if m_sys.startswith("ck-") != (suffix == "ck-"):
                continue
            base = m_sys[3:] if suffix else m_sys
            color = LOCK_COLORS.get(base.replace("fas-eb", "ttas-exp").replace("fas", "tas").replace("ticket-pb", "ticket"), "#7f7f7f")
            s = [(m["param"], m["ns_per_op"]) for m in ms if m["name"] == "anderson" and m["system"] == m_sys]
            series.append((m_sys, color, s, False))
        name = f"anderson_{'ck' if suffix else 'presto'}.svg"
        if svg_chart(os.path.join(plot_dir, name), f"Anderson's curves: {title}", "spinning threads (one per processor)",
                     "ns per critical section (log)", series, logy=True):
            made.append((name, f"Time per critical section against spinning threads, {title}; beyond the hardware "
                         "threads the machine is multiprogrammed."))
    for bench, what in (("lock_wait", "presto::Lock under contention, 2 processors"),
                        ("barrier", "presto::Barrier, 2 processors")):
        for dist, dname in (("exp", "exponential"), ("hv", "high-variance")):
            key = f"{bench}_{dist}"
            series = []
            for pol in ("block", "spin", "spin-then-block-10us", "competitive"):
                s = [(m["param"], m["ns_per_op"] / 1e3) for m in ms if m["name"] == key and m["system"] == pol]
                if s:
                    series.append((pol, LOCK_COLORS[pol], s, pol == "competitive"))
            name = f"{key}.svg"
            if svg_chart(os.path.join(plot_dir, name), f"{what}, {dname} times", "threads",
                         "us per " + ("critical section" if bench == "lock_wait" else "phase"), series):
                made.append((name, f"Wait policies: {what}, {dname} hold/compute times."))
    return made


# ---------------------------------------------------------------- tables

def find(ms, name, system, processors, param=0):
    for m in ms:
        if (m["name"], m["system"], m["processors"], m["param"]) == (name, system, processors, param):
            return m
    return None


def fmt_quantity(v, unit):
    if unit == "bytes":
        return f"{v / 1024:.1f} KiB"
    for scale, suffix in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if v >= scale:
            return f"{v / scale:.3g} {suffix}"
    return f"{v:.3g} ns"


def fmt_value(m):
    spread = "" if m["repetitions"] < 2 else f" ±{m['spread_pct']:.0f}%"
    return fmt_quantity(m["ns_per_op"], m["unit"]) + spread


def ratio_table(ratios):
    rows = ["| target | PRESTO | baseline | ratio | target | met |", "|---|---|---|---|---|---|"]
    for r in ratios:
        absolute = r["baseline"] == 0
        base = "—" if absolute else fmt_quantity(r["baseline"], r["unit"])
        met = "yes" if r["met"] else "**NO**"
        if not r["met"]:
            off = r["value"] / r["target"] if r["at_most"] else r["target"] / r["value"]
            met += f" (off by {off:.2f}×)"
        value, target = (fmt_quantity(r["value"], r["unit"]), fmt_quantity(r["target"], r["unit"])) if absolute \
            else (f"{r['value']:.3g}×", f"{r['target']:g}×")
        rows.append(f"| {r['ratio']} | {fmt_quantity(r['presto'], r['unit'])} | {base} | {value} | "
                    f"{'≤' if r['at_most'] else '≥'} {target} | {met} |")
    return "\n".join(rows)


# What each workload is, in the order of the comparison table.
WORKLOADS = [
    ("yield", "yield ping-pong, per switch"),
    ("fork_join", "fork + join of an empty thread"),
    ("create_destroy", "Table II: create + destroy, per thread"),
    ("lock_test", "Table III lock_test: lock + unlock (presto::Lock, std::mutex, fibers::mutex, sync.Mutex)"),
    ("monitor_test", "Table III monitor_test: Monitor entry + exit"),
    ("spin_test", "Table III spin_test: Spinlock lock + unlock"),
    ("atom_test", "Table III atom_test: atomic increment"),
    ("switch_test", "Table III switch_test: condition ping-pong, per hand-off (Go: unbuffered channel)"),
    ("condition_turns", "condition turns, the monitor entered for each turn, per hand-off"),
    ("skynet", "skynet, per thread (param: leaves)"),
    ("matmul_speedup", "Fig. 2: matrix multiplication, one thread per processor (param: n)"),
    ("matmul200_tight", "Fig. 3's end points, tight kernel (param: threads; kernel-per-element: no threads)"),
    ("blocked_memory", "resident memory per blocked thread, its handle kept and joined at the end (param: threads)"),
    ("blocked_memory_detached", "the same, the thread detached at its fork"),
    ("blocked_memory_16k_stacks", "the same as the first with 16 KiB stacks"),
]


def comparison_table(ms):
    rows = ["| workload | procs | " + " | ".join(SYSTEMS) + " |", "|---|---|" + "---|" * len(SYSTEMS)]
    for name, what in WORKLOADS:
        keys = sorted({(m["processors"], m["param"]) for m in ms if m["name"] == name})
        for procs, param in keys:
            cells = []
            for system in SYSTEMS:
                m = find(ms, name, system, procs, param)
                cells.append(fmt_value(m) if m else "")
            label = what + (f" [{param:,}]" if param else "")
            rows.append(f"| {label} | {procs} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


# ---------------------------------------------------------------- plots (plain SVG)

def svg_chart(path, title, xlabel, ylabel, series, logx=False, logy=False):
    """series: list of (label, color, [(x, y), ...], dashed)."""
    W, H, L, R, T, B = 720, 440, 80, 190, 40, 55
    pts = [p for _, _, s, _ in series for p in s]
    if not pts:
        return False
    fx = (lambda v: math.log10(v)) if logx else (lambda v: v)
    fy = (lambda v: math.log10(v)) if logy else (lambda v: v)
    xs, ys = [fx(x) for x, _ in pts], [fy(y) for _, y in pts]
    x0, x1 = min(xs), max(xs)
    y0, y1 = (min(ys), max(ys)) if logy else (0.0, max(ys) * 1.08)
    if x1 == x0:
        x1 = x0 + 1
    if y1 == y0:
        y1 = y0 + 1
    px = lambda x: L + (fx(x) - x0) / (x1 - x0) * (W - L - R)
    py = lambda y: H - B - (fy(y) - y0) / (y1 - y0) * (H - T - B)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{(W - R + L) / 2}" y="22" text-anchor="middle" font-size="15">{title}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
           f'<text x="{(W - R + L) / 2}" y="{H - 12}" text-anchor="middle">{xlabel}</text>',
           f'<text transform="translate(18,{(H - B + T) / 2}) rotate(-90)" text-anchor="middle">{ylabel}</text>']

    def ticks(lo, hi, log_axis):
        if log_axis:
            return [10 ** e for e in range(math.floor(lo), math.ceil(hi) + 1) if lo - 1e-9 <= e <= hi + 1e-9]
        step = 10 ** math.floor(math.log10((hi - lo) / 5 or 1))
        for m in (1, 2, 5, 10):
            if (hi - lo) / (step * m) <= 6:
                step *= m
                break
        first = math.ceil(lo / step) * step
        return [first + i * step for i in range(int((hi - first) / step) + 1)]

    for t in ticks(x0, x1, logx):
        out.append(f'<line x1="{px(t):.1f}" y1="{H - B}" x2="{px(t):.1f}" y2="{H - B + 5}" stroke="black"/>'
                   f'<text x="{px(t):.1f}" y="{H - B + 18}" text-anchor="middle">{t:g}</text>')
    for t in ticks(y0, y1, logy):
        out.append(f'<line x1="{L - 5}" y1="{py(t):.1f}" x2="{W - R}" y2="{py(t):.1f}" stroke="#ddd"/>'
                   f'<text x="{L - 8}" y="{py(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    for i, (label, color, s, dashed) in enumerate(series):
        s = sorted(s)
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        poly = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s)
        out.append(f'<polyline points="{poly}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}"/>' for x, y in s]
        ly = T + 10 + 20 * i
        out.append(f'<line x1="{W - R + 15}" y1="{ly}" x2="{W - R + 40}" y2="{ly}" stroke="{color}" stroke-width="2"{dash}/>'
                   f'<text x="{W - R + 45}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def plots(ms, plot_dir):
    """Writes the SVG plots; returns [(file name, caption)]."""
    os.makedirs(plot_dir, exist_ok=True)
    made = []

    def curve(name, system, procs=None, x="param", y=lambda m: m["ns_per_op"] / 1e6):
        s = [(m[x], y(m)) for m in ms if m["name"] == name and m["system"] == system
             and (procs is None or m["processors"] == procs)]
        return s

    # Figure 2: speed-up over one processor.
    series = []
    for system in ("presto", "std"):
        s = curve("matmul_speedup", system, x="processors")
        one = dict(s).get(1)
        if one:
            series.append((f"{system} (measured)", COLORS[system], [(p, one / t) for p, t in s], False))
    procs = sorted({m["processors"] for m in ms if m["name"] == "matmul_speedup"})
    if procs:
        series.append(("optimal", COLORS["optimal"], [(p, p) for p in procs], True))
    n = next((m["param"] for m in ms if m["name"] == "matmul_speedup"), 0)
    if svg_chart(os.path.join(plot_dir, "fig2_speedup.svg"), f"Fig. 2: {n}×{n} matrix multiplication speed-up",
                 "processors (one thread each)", "speed-up over 1 processor", series):
        made.append(("fig2_speedup.svg", "Figure 2: speed-up with one thread per processor (std::thread is the "
                     "paper's direct-on-the-OS line)."))

    # Figure 3: time against thread count, one curve per system and processor count.
    series = []
    dashes = {1: False, 2: True}
    for system in ("presto", "boost.fiber", "onetbb", "std", "go"):
        for p in sorted({m["processors"] for m in ms if m["name"] == "matmul200"}):
            s = curve("matmul200", system, p)
            if s:
                series.append((f"{system}, {p} proc", COLORS[system], s, dashes.get(p, p % 2 == 0)))
    if svg_chart(os.path.join(plot_dir, "fig3_threads.svg"), "Fig. 3: 200×200 matrix multiplication",
                 "threads (log)", "time (ms, log)", series, logx=True, logy=True):
        made.append(("fig3_threads.svg", "Figure 3: time of a 200×200 multiplication as the thread count grows "
                     "to 40,000 (one thread per element). Solid: 1 processor, dashed: 2."))

    # Skynet: total time against processors.
    series = []
    for system in ("presto", "presto-lifo", "boost.fiber", "onetbb", "go"):
        s = curve("skynet", system, x="processors", y=lambda m: m["ns_per_op"] * m["operations"] / 1e6)
        if s:
            series.append((system, COLORS[system], s, False))
    leaves = next((m["param"] for m in ms if m["name"] == "skynet"), 0)
    if svg_chart(os.path.join(plot_dir, "skynet.svg"), f"skynet {leaves:,} leaves", "processors",
                 "total time (ms, log)", series, logy=True):
        made.append(("skynet.svg", f"skynet: {leaves:,} leaves, {sum(leaves // 10 ** k for k in range(7) if leaves // 10 ** k):,} "
                     "threads in all; total time against processors."))

    # Thread-count scaling: skynet's cost per thread as the tree grows, on all processors.
    pmax = max((m["processors"] for m in ms if m["name"] == "skynet"), default=0)
    series = []
    for system in ("presto", "presto-lifo", "boost.fiber", "onetbb", "go"):
        s = curve("skynet", system, pmax, y=lambda m: m["ns_per_op"])
        if s:
            series.append((system, COLORS[system], s, False))
    if svg_chart(os.path.join(plot_dir, "skynet_scaling.svg"), f"skynet on {pmax} processors: cost per thread",
                 "leaves (log)", "ns per thread (log)", series, logx=True, logy=True):
        made.append(("skynet_scaling.svg", "Thread-count scaling: skynet's time per thread as the tree grows from "
                     "a hundred-odd threads to over a million; in the smallest trees, starting and halting the run "
                     "(waking and parking the processors) dominates."))

    # Processor scaling: Table II, time to create and destroy 100,000 threads.
    series = []
    for system in ("presto", "std"):
        s = curve("create_destroy", system, x="processors", y=lambda m: m["ns_per_op"] * 100_000 / 1e6)
        if s:
            series.append((system, COLORS[system], s, False))
    if svg_chart(os.path.join(plot_dir, "table2_create_destroy.svg"), "Table II: create and destroy 100,000 threads",
                 "processors", "elapsed (ms, log)", series, logy=True):
        made.append(("table2_create_destroy.svg", "Table II: elapsed time to create and destroy 100,000 threads "
                     "(std::thread measured on fewer and scaled to 100,000)."))
    return made


# ---------------------------------------------------------------- applications

# The seeds' applications (apps/), each run with --json: (program, what it reproduces, full
# arguments, --quick arguments (None: not run in that kind of run); "{procs}" stands for the
# processor counts 1, 2, 4 ... N).
# Their JSON lines carry name, system (the strategy or variant), processors and param like
# presto_bench's, plus the app's own figures.
APPS = [
    ("presto-dynprog", "Parallel DP: LCS (Tables 1-2; param: string length)",
     ["--problem", "lcs", "--length", "1000,4000", "--processors", "{procs}"],
     ["--problem", "lcs", "--length", "300", "--repeat", "1", "--processors", "{procs}"]),
    ("presto-dynprog", "Parallel DP: exact MVA, 4 classes (Tables 3-4: 12 each; param: lattice points)",
     ["--problem", "mva", "--population", "12,12,12,12", "--processors", "{procs}"],
     ["--problem", "mva", "--population", "4,4,4,4", "--repeat", "1", "--processors", "{procs}"]),
    ("presto-dynprog", "Parallel DP: exact MVA, 2 classes (Table 5: 200 x 200; param: lattice points)",
     ["--problem", "mva", "--population", "200,200", "--processors", "{procs}"],
     ["--problem", "mva", "--population", "30,30", "--repeat", "1", "--processors", "{procs}"]),
    ("presto-linesolver", "Pipelined line solver (virtual time; proc = pipeline nodes; synthetic param: work units, "
     "tridiagonal: systems, grain: systems per message)", [], ["--work", "8"]),
    ("presto-mva", "Approximate MVA: time of each approximation and its error vs exact MVA (param: population scale)",
     [], ["--scales", "1,4", "--replications", "4", "--end", "1100"]),
    # PSIM across MPI ranks (built where MPI is found; launches itself with mpirun per rank
    # count). ns per event; its JSON carries events/s, the ratio to the sequential simulator run
    # on rank 0 in the same job, and the per-event costs (docs/guide/psim.md, "Across machines").
    ("presto-phold-mpi", "PSIM over MPI: PHOLD, 64 LPs, lookahead 1, no work (param: ranks, 1 processor each)",
     ["--ranks", "1,2,4"], ["--ranks", "1,2", "--lps", "16", "--end", "200", "--repeat", "1"]),
    ("presto-phold-mpi", "PSIM over MPI: the protocol across ranks, null messages and windows side by side "
     "(param: ranks; system '... ranks, windows' for windows)",
     ["--ranks", "1,2,4", "--protocol", "null,window"],
     ["--ranks", "1,2", "--protocol", "null,window", "--lps", "16", "--end", "200", "--repeat", "1"]),
    ("presto-phold-mpi", "PSIM over MPI: windows with 10 us of work per event (param: ranks)",
     ["--ranks", "1,2,4", "--protocol", "window", "--work-us", "10", "--end", "100"], None),
    ("presto-phold-mpi", "PSIM over MPI: the lookahead knob, lookahead 4 (param: ranks)",
     ["--ranks", "1,2,4", "--lookahead", "4"], None),
    ("presto-phold-mpi", "PSIM over MPI: the batching knob, one record per MPI message (param: ranks)",
     ["--ranks", "2,4", "--batch", "1"], None),
    ("presto-phold-mpi", "PSIM over MPI: 10 us of work per event (param: ranks)",
     ["--ranks", "1,2,4", "--work-us", "10", "--end", "100"], None),
]


def processor_counts(n):
    """1, 2, 4, ... up to n, and n."""
    counts, p = [], 1
    while p < n:
        counts.append(p)
        p *= 2
    return counts + [n]


def build_apps(build_dir):
    """Builds the apps APPS names; returns those that exist (apps may be disabled: -Dapps=false)."""
    built = []
    for program in sorted({a[0] for a in APPS} | {"presto-procsched"}):
        target = os.path.join("apps", program)
        if subprocess.run(["ninja", "-C", build_dir, target], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            built.append(program)
        else:
            log(f"{target} does not build here (apps disabled?): its results are skipped")
    return built


def run_apps(args, build_dir, built):
    """Runs every app of APPS that exists; returns their measurements, each tagged with its group."""
    ms = []
    procs = ",".join(str(p) for p in processor_counts(args.processors))
    for program, group, full, quick in APPS:
        exe = os.path.join(build_dir, "apps", program)
        if program not in built and not os.path.exists(exe):
            continue
        if (quick if args.quick else full) is None:  # not part of this kind of run
            continue
        cmd = [exe] + [a.replace("{procs}", procs) for a in (quick if args.quick else full)] + ["--json"]
        out = run(cmd, stdout=subprocess.PIPE).stdout
        sys.stdout.write(out)
        for line in out.splitlines():
            if line.startswith("{"):
                rec = json.loads(line)
                rec["group"] = group
                ms.append(rec)
    return ms


def apps_table(ms):
    """One table per group: each variant's time and speed-ups (honest: over the sequential
    program; relative: over the same program on 1 processor) at every processor count."""
    parts = []
    for group in dict.fromkeys(m["group"] for m in ms):
        rows = [m for m in ms if m["group"] == group]
        procs = sorted({m["processors"] for m in rows})
        parts += [f"#### {group}", "", "| variant | param | " + " | ".join(f"{p} proc" for p in procs) + " |",
                  "|---|---|" + "---|" * len(procs)]
        for system, param in dict.fromkeys((m["system"], m["param"]) for m in rows):
            cells = []
            for p in procs:
                m = next((m for m in rows if (m["system"], m["param"], m["processors"]) == (system, param, p)), None)
                if m is None:
                    cells.append("")
                elif "honest_speedup" in m and m["system"] != "sequential":
                    cells.append(f"{fmt_value(m)}; {m['honest_speedup']:.2f}× / {m['relative_speedup']:.2f}×")
                elif "error_pct" in m:
                    cells.append(f"{fmt_value(m)}; error {m['error_pct']:.3f}% (exact {m['exact_ms']:.3g} ms)")
                else:
                    cells.append(fmt_value(m))
            rows_label = f"{param:,}" if param else ""
            parts.append(f"| {system} | {rows_label} | " + " | ".join(cells) + " |")
        parts.append("")
    return "\n".join(parts)


# ---------------------------------------------------------------- Zahorjan and McCann (PSIM model)

PROCSCHED_WORKLOADS = ["MVA(2,2)", "FJ(3)", "VFJ(3)", "MVA(10,10)", "FJ(11)", "VFJ(11)", "mixed"]
PROCSCHED_POLICIES = {"RTC": "#1f77b4", "Round-Robin": "#2ca02c", "Dynamic": "#d62728"}


def run_procsched(args, build_dir, out_dir):
    """Runs presto-procsched's sweep (every point simulated sequentially and by PSIM on 2
    processors, which must agree: a mismatch fails the run); returns its JSON records, or []
    when the app is not built."""
    exe = os.path.join(build_dir, "apps", "presto-procsched")
    if not os.path.exists(exe):
        log("apps/presto-procsched not built (apps disabled?): the processor-scheduling study is skipped")
        return []
    if args.quick:
        sweep = ["--workloads", "MVA(2,2),FJ(11)", "--loads", "0.5", "--overheads", "0,1", "--end", "1100",
                 "--warmup", "100"]
    else:
        sweep = ["--workloads", ",".join(PROCSCHED_WORKLOADS), "--loads", "0.25,0.5,0.75",
                 "--overheads", "0,0.25,0.5,0.75,1,1.5,2"]
    out = run([exe, *sweep, "--processors", "2", "--json"], stdout=subprocess.PIPE).stdout
    ms = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    with open(os.path.join(out_dir, "procsched.jsonl"), "w") as f:
        f.write("".join(json.dumps(m) + "\n" for m in ms))
    return ms


def procsched_unstable(m):
    """A point whose queue grew without bound (presto-procsched's verdict)."""
    return m["unstable"]


def procsched_table(ms):
    """Per load: mean response time for each workload and policy against O († = unstable)."""
    parts = []
    overheads = sorted({m["overhead"] for m in ms})
    for load in sorted({m["load"] for m in ms}):
        parts += [f"#### U = {load:g}: mean response time (time units; † = unstable: the queue kept growing)", "",
                  "| workload | policy | " + " | ".join(f"O = {o:g}" for o in overheads) + " |",
                  "|---|---|" + "---:|" * len(overheads)]
        for w in dict.fromkeys(m["workload"] for m in ms):
            for pol in PROCSCHED_POLICIES:
                cells = []
                for o in overheads:
                    m = next((m for m in ms if (m["workload"], m["policy"], m["load"], m["overhead"]) == (w, pol, load, o)),
                             None)
                    cells.append("" if m is None else f"{m['response']:.2f}" + ("†" if procsched_unstable(m) else ""))
                if any(cells):
                    parts.append(f"| {w} | {pol} | " + " | ".join(cells) + " |")
        parts.append("")
    return "\n".join(parts)


def procsched_plots(ms, plot_dir):
    """Response time against O at each load (the paper's Figures 3 to 5) and against load at
    O = 0.25 and 1; unstable points are left out. Returns [(file name, caption)]."""
    os.makedirs(plot_dir, exist_ok=True)
    made = []
    stable = [m for m in ms if not procsched_unstable(m)]
    slug = lambda w: w.lower().replace("(", "").replace(")", "").replace(",", "_")
    def chart(w, x, fixed, values, what, name, caption):
        """One curve per policy and value of `fixed` (solid, then dashed) against `x`; points
        beyond three times RTC's worst are off the scale."""
        pick = lambda pol, v: [(m[x], m["response"]) for m in stable
                               if (m["workload"], m["policy"], m[fixed]) == (w, pol, v)]
        cap = 3 * max([y for v in values for _, y in pick("RTC", v)] or [math.inf])
        series = []
        for pol, color in PROCSCHED_POLICIES.items():
            for v, dashed in zip(values, (False, True)):
                s = [(px, y) for px, y in pick(pol, v) if y <= cap]
                if len(s) > 1:
                    series.append((f"{pol}, {'U' if fixed == 'load' else 'O'} = {v:g}", color, s, dashed))
        if svg_chart(os.path.join(plot_dir, name), f"{w}: mean response time against {what} (P = 20)",
                     {"overhead": "reallocation overhead O (task times)", "load": "load U"}[x], "mean response time",
                     series):
            made.append((name, f"{w}: mean response time against {what}, {caption}; unstable points and points "
                         "beyond three times RTC's worst left out."))

    for w in dict.fromkeys(m["workload"] for m in ms):
        chart(w, "overhead", "load", (0.5, 0.75), "O", f"procsched_{slug(w)}_overhead.svg",
              "at 50% (solid) and 75% (dashed) load")
        chart(w, "load", "overhead", (0.25, 1.0), "load", f"procsched_{slug(w)}_load.svg",
              "at O = 0.25 (solid) and O = 1 (dashed)")
    return made

# ---------------------------------------------------------------- sharing a machine

def run_sharing(args, build_dir, out_dir):
    """Competing jobs under each allocation policy (benchmarks/sharing/sharing.py): appends its
    JSON lines to results.jsonl and returns its markdown table ("" when sharing_job is missing)."""
    exe = os.path.join(build_dir, "benchmarks", "sharing_job")
    if not os.path.exists(exe):
        log("benchmarks/sharing_job is not built: the sharing experiment is skipped")
        return ""
    table = os.path.join(out_dir, "sharing.md")
    run([sys.executable, os.path.join(ROOT, "benchmarks", "sharing", "sharing.py"), "--build-dir", build_dir,
         "--json", os.path.join(out_dir, "results.jsonl"), "--table", table] + (["--quick"] if args.quick else []),
        stdout=sys.stderr)
    with open(table) as f:
        return f.read()


# ---------------------------------------------------------------- docs

def machine():
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
            mem = f", {kib / 2 ** 20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} hardware threads{mem}, Linux {platform.release()}"


def report(ms, ratios, made, plot_rel, quick, note, app_ms=(), procsched_ms=(), sharing="", echo_ms=(), floor=(),
           split=(), phold_split=()):
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"Measured {when} on {machine()}" + (" (--quick: reduced counts)" if quick else "") + "."
             + (f" {note}" if note else ""), "",
             "### Targets (PRESTO beside each peer, same run)", "", ratio_table(ratios), ""]
    if floor:
        parts += ["### Figure 3's floor on this machine (same run)", "",
                  "`benchmarks/figure3_floor` computes Figure 3's product as 40,000 bare records with no threads: "
                  "a fork writes a record, the joiner calls a still-queued one, and a second OS thread steals and "
                  "calls the rest (docs/design/lazy-forks.md), with each of the two kernels of Figure 3's "
                  "targets. Its best ratio is about as low as any runtime that forks 40,000 pieces of work can go "
                  "here. The last two rows of each kernel make no record for a fork that finds 1,024 queued and "
                  "not taken: it runs its part at once, by a plain call (which a thread's fork may not do) or on a "
                  "stack of its own (docs/design/lazy-forks.md, \"A fork that runs its part at once\"); medians. "
                  "Built in the core with a record for every part, as a handle needs, the stack's design was "
                  "slower than PRESTO's queue (docs/design/lazy-forks.md, \"Built and measured, 2026-12-07\"). "
                  "The deque's thief takes at most 128 records a steal in the row that says so, as PRESTO's "
                  "thieves do. Each row gives the host's cross-core round trip taken just before it: the locked "
                  "deque's rows move with it, the array's much less.",
                  "", floor_table(floor, ratios), ""]
    if split:
        parts += ["### Where Figure 3's time goes (same run)", "",
                  "`benchmarks/figure3_split` runs Figure 3's product with PRESTO threads (the paper's kernel) and "
                  "times each element's kernel on the processor that runs it: per processor, the time in the kernel, "
                  "between its elements (the runtime's forks, joins, steals and dispatches, and any wait), before "
                  "its first element and after its last (to the product's end). Medians; the wall time in "
                  "brackets is the same product untimed.", "", split_table(split), ""]
    if phold_split:
        work = phold_split[0]["work_ns"]
        parts += ["### Where PSIM's PHOLD time goes (same run)", "",
                  "`benchmarks/psim_phold` accounts for the runs of the PSIM PHOLD targets with 1 us of work an "
                  f"event ({work:.0f} ns: the sequential simulator's time an event with the work, less without). Per "
                  "event: the median time, the processors' time beyond the work (the protocol, the switches and "
                  "any idle polling), the work's share of the processors' time, and, from one more run whose "
                  "processors time their idle() (a Processor subclass), the processors' share of their time "
                  "spent there (polling for work or parked), how often an LP went to sleep (and of those, went "
                  "back to sleep right after a wake-up that left its next message unsafe: ProcessStats::rewaits), "
                  "yielded instead, raised an input's clock by a null message (and of those, took it asleep, still "
                  "held back by the same link, its bound passed on to its own waiters by the sender: "
                  "ProcessStats::passed_on), was put on a "
                  "processor, and how often a processor parked or a deadlock was broken; last, how many LPs were asleep on average. 2 processors meet the "
                  "1.6x target when their processor time an event is at most 1.25x one processor's (2 / 1.6).",
                  "", phold_split_table(phold_split), ""]
    parts += ["### Every measurement (median of the repetitions ± spread = (max − min) / median)", "",
              comparison_table(ms), "", "### Plots", ""]
    for name, caption in made:
        parts += [f"![{caption}]({plot_rel}/{name})", "", f"*{caption}*", ""]
    if app_ms:
        parts += ["### Applications (the seeds' measured programs; time ± spread; speed-ups honest / relative)", "",
                  apps_table(app_ms)]
    if procsched_ms:
        parts += ["### Processor scheduling (Zahorjan and McCann, simulated with PSIM; see docs/guide/zahorjan-mccann.md)",
                  "", procsched_table(procsched_ms)]
    if sharing:
        parts += ["### Sharing a machine (competing jobs, each a process; docs/guide/sharing.md)", "", sharing]
    if echo_ms:
        parts += ["", "### Echo servers (benchmarks/echo: a thread, goroutine or fiber per connection; 64-byte "
                  "round trips in a closed loop, one run each; the same client, presto-echo-load, on the same "
                  "machine)", "", echo_bench.echo_table(echo_ms)]
    return "\n".join(parts)


def update_doc(section):
    with open(DOC) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit(f"run.py: {DOC} lacks the results markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(DOC, "w") as f:
        f.write(head + BEGIN + "\n" + section + "\n" + END + tail)
    log(f"updated {os.path.relpath(DOC, ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="reduced counts (CI smoke run); leaves docs alone")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", help="results directory (default: benchmarks/results, or BUILD/benchmarks/"
                    "quick-results with --quick)")
    ap.add_argument("--processors", type=int, default=os.cpu_count(), help="curves run on 1..N processors")
    ap.add_argument("--doubling", action="store_true", help="the suite's curves run on 1, 2, 4, ..., N processors "
                    "(the applications' always do)")
    ap.add_argument("--no-build", action="store_true", help="do not run ninja first")
    ap.add_argument("--no-echo", action="store_true", help="skip the echo servers (benchmarks/echo)")
    ap.add_argument("--timeout", type=float, help="seconds any one command may take before it is killed and "
                    "the run fails (default: 600 with --quick, 3600 without; 0: no limit)")
    ap.add_argument("--note", default="", help="a remark printed under the date (e.g. how quiet the machine was)")
    ap.add_argument("--only-procsched", action="store_true", help="run only the processor-scheduling study "
                    "(presto-procsched): procsched.jsonl and procsched.md in the results directory, plots in "
                    "docs/benchmarks/ (with --quick: in the results directory); docs/benchmarks.md left alone")
    args = ap.parse_args()
    global TIMEOUT
    TIMEOUT = args.timeout if args.timeout is not None else (600 if args.quick else 3600)
    build_dir = os.path.abspath(args.build_dir)
    out_dir = args.out or (os.path.join(build_dir, "benchmarks", "quick-results") if args.quick
                           else os.path.join(ROOT, "benchmarks", "results"))
    os.makedirs(out_dir, exist_ok=True)
    if args.only_procsched:
        if not args.no_build:
            run(["ninja", "-C", build_dir, "apps/presto-procsched"], stdout=sys.stderr)
        procsched_ms = run_procsched(args, build_dir, out_dir)
        plot_dir = os.path.join(out_dir, "plots") if args.quick else os.path.join(ROOT, "docs", "benchmarks")
        made = procsched_plots(procsched_ms, plot_dir)
        with open(os.path.join(out_dir, "procsched.md"), "w") as f:
            f.write(procsched_table(procsched_ms) + "\n")
        log(f"results in {os.path.relpath(out_dir, ROOT)}; {len(made)} plots in {os.path.relpath(plot_dir, ROOT)}")
        return
    built = []
    if not args.no_build:
        build_suite(build_dir)
        built = build_apps(build_dir)
    ms, ratios = run_suite(args, build_dir, out_dir)
    phold_ratios, phold_host, phold_split = run_phold(args, build_dir, out_dir)
    ratios += phold_ratios
    app_ms = run_apps(args, build_dir, built)
    procsched_ms = run_procsched(args, build_dir, out_dir)
    append_results(out_dir, app_ms)
    spin_ms, spin_notes = run_spinlocks(args, build_dir, out_dir)
    floor = run_floor(args, build_dir, out_dir)
    split, split_host = run_split(args, build_dir, out_dir)
    sharing = run_sharing(args, build_dir, out_dir)
    echo_ms = [] if args.no_echo else echo_bench.run_echo(args.quick, args.processors, build_dir,
                                                                 ninja=not args.no_build)
    append_results(out_dir, echo_ms)
    full = not args.quick and args.out is None
    plot_dir = os.path.join(ROOT, "docs", "benchmarks") if full else os.path.join(out_dir, "plots")
    made = plots(ms, plot_dir) + spinlock_plots(spin_ms, plot_dir) + procsched_plots(procsched_ms, plot_dir)
    if spin_notes:
        note = args.note.rstrip()
        args.note = (note + ("" if note.endswith((".", "!", "?", ")")) else ".") + " " if note else "") + \
            "Spinning and blocking: " + "; ".join(
            n for n in spin_notes if "prediction" in n) + "."
    plot_rel = "benchmarks" if full else "plots"
    host = host_line(ms, phold_host, split_host)
    if host:
        args.note = (args.note.rstrip() + " " if args.note.strip() else "") + host
    section = report(ms, ratios, made, plot_rel, args.quick, args.note, app_ms, procsched_ms, sharing, echo_ms, floor,
                     split, phold_split)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(section + "\n")
    if full:
        update_doc(section)
    log(f"results in {os.path.relpath(out_dir, ROOT)}; plots in {os.path.relpath(plot_dir, ROOT)}")
    if host:
        log(host)
    missed = [r["ratio"] for r in ratios if not r["met"]]
    log(f"{len(ratios) - len(missed)} of {len(ratios)} targets met" + (f"; NOT met: {'; '.join(missed)}" if missed else ""))


if __name__ == "__main__":
    main()
