#!/usr/bin/env python3
"""Launches psim_mpi_test with mpirun on localhost and checks what every rank reports.

usage: psim_mpi_test.py MPIRUN PROGRAM RANKS PROCESSORS CASE [PROTOCOL]

CASE histories: every rank exits 0 and rank 0 reports each model identical to the sequential
simulator's. past, mismatch, protocols, partition: every rank exits with an error naming the fault (and
no rank hangs). kill: rank 1 dies by SIGKILL; mpirun must end every rank and exit non-zero,
naming rank 1, within the timeout. PROTOCOL (null or window; default null) is the protocol
across ranks. Exit 77 (skipped) with a message when mpirun is missing.

A run that outlives the timeout (PSIM_MPI_TEST_TIMEOUT seconds, default 60) fails as a hang:
the backtraces of its ranks are printed (by gdb, where installed), then every process of the
run is killed.
"""
import os
import shutil
import signal
import subprocess
import sys

TIMEOUT = float(os.environ.get("PSIM_MPI_TEST_TIMEOUT", "60"))  # a hang fails here, not the suite's timeout


def session(sid):
    """The processes of session `sid`: mpirun and its ranks."""
    ps = subprocess.run(["ps", "-o", "pid=", "-s", str(sid)], capture_output=True, text=True)
    return sorted(int(p) for p in ps.stdout.split())


def backtraces(pids):
    """Every thread's backtrace in each of `pids`, by gdb."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "(no backtraces: gdb is not installed)"
    out = []
    for pid in pids:
        try:
            bt = subprocess.run([gdb, "-p", str(pid), "-batch", "-ex", "thread apply all bt 30"],
                                capture_output=True, text=True, timeout=10)
            frames = [l for l in bt.stdout.splitlines() if l.startswith(("#", "Thread "))]
            out.append(f"--- process {pid}:\n" + "\n".join(frames))
        except subprocess.TimeoutExpired:
            out.append(f"--- process {pid}: gdb did not attach within 10 s")
    return "\n".join(out)


def run_to_end(cmd, env):
    """Runs cmd in a session of its own; on a hang, shows where its ranks are and kills them all."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT)
        return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    except subprocess.TimeoutExpired:
        pids = session(proc.pid)
        print(f"FAIL: mpirun did not end within {TIMEOUT:g} s (a hang); where its processes are:")
        print(backtraces([p for p in pids if p != proc.pid]), flush=True)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        stdout, stderr = proc.communicate()
        print(stdout, stderr)
        return None

EXPECT = {
    "past": "sent a message into the past",
    "mismatch": "the ranks hold different models",
    "protocols": "the ranks hold different models",
    "partition": "the partition puts logical process",
}


def main():
    mpirun, program, ranks, processors, case = sys.argv[1:6]
    protocol = sys.argv[6] if len(sys.argv) > 6 else "null"
    if not shutil.which(mpirun):
        print(f"psim_mpi: skipped: {mpirun} not found (Debian: apt install openmpi-bin)")
        return 77
    cmd = [mpirun, "--oversubscribe", "-n", ranks]
    if os.geteuid() == 0:
        cmd.insert(1, "--allow-run-as-root")
    cmd += [program, "--processors", processors, "--protocol", protocol, case]
    env = dict(os.environ, OMPI_MCA_btl="self,vader", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    # Under AddressSanitizer: Open MPI's plugins leak at exit from libraries already unloaded,
    # which no suppression can name; the leak check is off for these programs (not the rest).
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""), "detect_leaks=0"]))
    print("+", " ".join(cmd), flush=True)
    run = run_to_end(cmd, env)
    if run is None:
        return 1
    out = run.stdout + run.stderr
    print(out)
    n = int(ranks)
    lines = [l for l in run.stdout.splitlines() if l.startswith("rank ")]
    if case == "histories":
        ok = run.returncode == 0 and sum(": ok" in l and "identical" not in l for l in lines) == n \
            and sum("identical" in l for l in lines) == 4
        print("PASS" if ok else f"FAIL: exit {run.returncode}, expected every rank ok and 4 models identical")
        return 0 if ok else 1
    if case == "kill":
        ok = run.returncode != 0 and "rank 1" in out and ("signal 9" in out or "Killed" in out)
        print("PASS" if ok else f"FAIL: exit {run.returncode}, expected mpirun to name rank 1 killed by signal 9")
        return 0 if ok else 1
    errors = [l for l in lines if ": error: " in l]
    ok = run.returncode != 0 and len(errors) == n and all(EXPECT[case] in l for l in errors)
    print("PASS" if ok else f"FAIL: exit {run.returncode}, expected all {n} ranks to report '{EXPECT[case]}'")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
