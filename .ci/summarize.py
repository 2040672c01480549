#!/usr/bin/env python3
"""Prints the last line CI reads, 'N passed, N failed', from Meson test logs.

Each Catch2 executable counts as its test cases (from its 'test cases: ...' summary); every
other test (examples, apps) counts as one.
"""
import json
import re
import sys

passed = failed = 0
for build in sys.argv[1:]:
    try:
        lines = open(f"{build}/meson-logs/testlog.json").read().splitlines()
    except OSError:
        print(f"summarize: no test log in {build}", file=sys.stderr)
        failed += 1
        continue
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        ok = t["result"] in ("OK", "EXPECTEDFAIL", "SKIP")
        out = t.get("stdout", "") or ""
        all_passed = re.search(r"All tests passed \(\d+ assertions? in (\d+) test cases?\)", out)
        counts = re.search(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed", out)
        if all_passed:
            n = int(all_passed.group(1))
            passed += n if ok else 0
            failed += 0 if ok else 1
        elif counts:
            passed += int(counts.group(2))
            failed += int(counts.group(3)) + (0 if ok or int(counts.group(3)) else 1)
        else:
            passed += 1 if ok else 0
            failed += 0 if ok else 1
        if not ok:
            print(f"FAILED: {build}: {t['name']} ({t['result']})")
print(f"{passed} passed, {failed} failed")
