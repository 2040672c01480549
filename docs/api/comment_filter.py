#!/usr/bin/env python3
"""Doxygen input filter: PRESTO's headers state their contracts in plain `//` comments before
each declaration; Doxygen reads only `///`. This prints the header with every comment that
starts a line turned into `///`, so the contracts become the API reference. Comments after
code on the same line stay plain."""
import re
import sys

LINE_COMMENT = re.compile(r"^(\s*)//(?=\s|$)")
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    for line in f:
        sys.stdout.write(LINE_COMMENT.sub(r"\1///", line, count=1))
