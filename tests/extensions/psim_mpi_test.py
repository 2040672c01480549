#!/usr/bin/env python3
"""Launches psim_mpi_test with mpirun on localhost and checks what every rank reports.

usage: psim_mpi_test.py MPIRUN PROGRAM RANKS PROCESSORS CASE [PROTOCOL]

CASE histories: every rank exits 0 and rank 0 reports each model identical to the sequential
simulator's. past, mismatch, protocols, partition: every rank exits with an error naming the fault (and
no rank hangs). kill: rank 1 dies by SIGKILL; mpirun must end every rank and exit non-zero,
naming rank 1, within the timeout. PROTOCOL (null or window; default null) is the protocol
across ranks. Exit 77 (skipped) with a message when mpirun is missing.
"""
import os
import shutil
import subprocess
import sys

TIMEOUT = 60  # seconds: a run that hangs fails here instead of hanging the suite

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
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired as e:
        print(e.stdout or "", e.stderr or "")
        print(f"FAIL: mpirun did not end within {TIMEOUT} s (a hang)")
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
