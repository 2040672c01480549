#!/usr/bin/env python3
"""--processors has one meaning in every app (support/command_line.hpp): 0 is one processor
per hardware thread, and a count beyond 64 times the hardware threads is refused at once with
exit status 2 and a message, never tried (100,000 OS threads would hang the program).

    processors_test.py APP...      (each app's path)
"""
import os
import subprocess
import sys

huge = str(64 * (os.cpu_count() or 1) + 1)
failed = False
for app in sys.argv[1:]:
    name = os.path.basename(app)
    p = subprocess.run([app, "--processors", huge], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=60)
    ok = p.returncode == 2 and "more than 64 times" in p.stderr and "--processors = " + huge in p.stderr
    print(f"{'ok' if ok else 'FAILED'}: {name} --processors {huge}: status {p.returncode}, {p.stderr.strip()[:200]!r}")
    failed |= not ok
# 0 in the two apps whose default is not "all": they run on every hardware thread.
for app in sys.argv[1:]:
    name = os.path.basename(app)
    args = {"presto-qnet": ["--end", "2100", "--replications", "10"], "presto-live-scheduler": ["--jobs", "4"]}.get(name)
    if args is None:
        continue
    p = subprocess.run([app, "--processors", "0", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    ok = p.returncode == 0
    print(f"{'ok' if ok else 'FAILED'}: {name} --processors 0: status {p.returncode}")
    if not ok:
        print(p.stdout)
    failed |= not ok
sys.exit(1 if failed else 0)
