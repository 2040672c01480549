#!/usr/bin/env python3
"""Prints the ninja targets that the tests of the given suites need, one a line.

    test_targets.py BUILD_DIR SUITE...

CI builds only these in its sanitizer builds: a plain `ninja` there also compiles every other
target (the ~70 one-header compile checks, the gdb programs), which costs the ASan+UBSan build
most of its half hour on the 2-core VM and tests nothing a sanitizer can see.
"""
import json
import os
import subprocess
import sys


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", build, what], stdout=subprocess.PIPE, text=True, check=True).stdout
    return json.loads(out)


def main():
    build, suites = sys.argv[1], set(sys.argv[2:])
    files = {t["id"]: t["filename"] for t in introspect(build, "--targets")}
    needed = set()
    for test in introspect(build, "--tests"):
        if not suites.intersection(s.split(":", 1)[-1] for s in test["suite"]):
            continue
        for target in test.get("depends", []):
            for f in files.get(target, []):
                needed.add(os.path.relpath(f, os.path.abspath(build)))
    if not needed:
        sys.exit(f"test_targets.py: no test of the suites {sorted(suites)} in {build}")
    print("\n".join(sorted(needed)))


main()
