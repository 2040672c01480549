#!/usr/bin/env python3
"""presto-timeline's test: draws a small hand-written trace and checks the SVG (it parses; one
lane per processor, a rectangle per slice, an arrow per flow pair, a legend entry per thread,
a labelled time axis), and that malformed traces are rejected with a message naming the fault.

Usage: timeline_test.py PATH/TO/presto-timeline PATH/TO/sample_trace.json

sample_trace.json (hand-written; docs/guide/timeline-sample.svg is drawn from it): two
processors; threads 1, 2 and 7 run in four slices (thread 7's too narrow for its label); two
wake-ups (flow pairs), one flow start without its finish, and events of kinds the tool ignores.
"""

import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"

MALFORMED = [
    ("{not json", "Expecting property name"),
    (json.dumps({"events": []}), "expected an object with a 'traceEvents' list"),
    (json.dumps({"traceEvents": [{"name": "x"}]}), "event 0: expected an object with a string 'ph'"),
    (json.dumps({"traceEvents": [{"ph": "X", "tid": 0, "ts": "soon", "dur": 1}]}), "event 0 ('X'): 'ts' must be a number"),
    (json.dumps({"traceEvents": [{"ph": "X", "tid": "cpu0", "ts": 1, "dur": 1}]}), "'tid' must be an integer"),
    (json.dumps({"traceEvents": [{"ph": "X", "tid": 0, "ts": 1, "dur": -2}]}), "negative 'dur'"),
    (json.dumps({"traceEvents": [{"ph": "s", "tid": 0, "ts": 1}]}), "flow event without an 'id'"),
]


def run(tool, *args):
    return subprocess.run([sys.executable, tool, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=60)


def check(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)


def main():
    tool, trace = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        svg = os.path.join(tmp, "out.svg")
        result = run(tool, trace, "-o", svg)
        check(result.returncode == 0, "presto-timeline failed: %s" % result.stderr)
        check("2 lane(s), 4 slice(s), 2 arrow(s), 1 unpaired flow event(s) ignored" in result.stdout,
              "unexpected summary: %r" % result.stdout)
        root = ET.parse(svg).getroot()
        check(root.tag == SVG + "svg", "the root element is %s, not svg" % root.tag)

        def of_class(tag, cls):
            return [e for e in root.iter(SVG + tag) if e.get("class") == cls]

        rects, lines = list(root.iter(SVG + "rect")), list(root.iter(SVG + "line"))
        check(len(of_class("rect", "lane")) == 2, "expected 2 lanes")
        check(len(of_class("rect", "slice")) == 4, "expected 4 slice rectangles")
        check(len(of_class("rect", "legend")) == 3, "expected 3 legend entries (threads 1, 2, 7)")
        check(len(rects) == 2 + 4 + 3, "expected 9 rect elements, got %d" % len(rects))
        ticks = of_class("line", "tick")
        check(len(of_class("line", "flow")) == 2, "expected 2 flow arrows")
        check(len(of_class("line", "axis")) == 1, "expected one axis line")
        check(len(lines) == 2 + 1 + len(ticks), "unexpected extra line elements")
        texts = [e.text for e in root.iter(SVG + "text")]
        check("processor 0" in texts and "processor 1" in texts, "lane labels missing: %s" % texts)
        check("worker" in texts and "main" in texts, "slice labels missing")
        check("a-name-far-too-long-for-its-slice" not in texts, "a label wider than its slice was drawn")
        check("thread 7" in texts, "legend text missing")
        check("0 ms" in texts and "2.5 ms" in texts, "the axis of a 2.5 ms trace is not labelled in ms: %s" % texts)
        slices = of_class("rect", "slice")
        check(slices[0].get("fill") == slices[3].get("fill") != slices[1].get("fill"),
              "thread 1's slices do not share a colour distinct from thread 2's")

        for text, message in MALFORMED:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                f.write(text)
            result = run(tool, bad, "-o", os.path.join(tmp, "bad.svg"))
            check(result.returncode != 0, "accepted malformed input %r" % text)
            check(result.stderr.startswith("presto-timeline: ") and message in result.stderr,
                  "input %r: message %r does not say %r" % (text, result.stderr, message))
            check(not os.path.exists(os.path.join(tmp, "bad.svg")), "wrote an SVG for malformed input")
        result = run(tool, os.path.join(tmp, "missing.json"))
        check(result.returncode != 0 and "No such file" in result.stderr, "a missing file is not reported")
    print("timeline test: SVG checked (2 lanes, 4 slices, 2 arrows, %d ticks); %d malformed inputs rejected"
          % (len(ticks), len(MALFORMED)))


main()
