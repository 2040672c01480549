#!/usr/bin/env python3
"""Prints the last line CI reads, 'N passed, N failed', from Meson test logs.

Each Catch2 executable counts as its test cases (from its 'test cases: ...' summary); every
other test (examples, apps) counts as one. A failed test is named with the start of its first
failure (Catch2's test case, expression and INFO), so that the end of CI's output says why.
"""
import json
import re
import sys


def first_failure(out, before=8, after=14):
    """The lines around the first Catch2 'FAILED:' in `out`, or its last lines if none."""
    lines = out.splitlines()
    at = next((i for i, line in enumerate(lines) if "FAILED:" in line), None)
    shown = lines[-after:] if at is None else lines[max(0, at - before):at + after]
    return "\n".join("    " + line for line in shown if line.strip(" -.="))  # no rulers


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
            print(first_failure(out + "\n" + (t.get("stderr", "") or "")))
print(f"{passed} passed, {failed} failed")
