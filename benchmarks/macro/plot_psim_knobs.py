#!/usr/bin/env python3
"""Plots psim_phold's knob sweep (--csv FILE) as an SVG, with no dependencies.

    build/benchmarks/psim_phold --csv knobs.csv
    benchmarks/macro/plot_psim_knobs.py knobs.csv docs/guide/psim-knobs.svg

One panel per protocol, against lookahead (relative to the mean delay 1), one line per remote
fraction: the speed-up of PSIM on 2 processors over PSIM on 1 (solid), and PSIM on 1 processor
over the sequential simulator (dashed: what the protocol costs). Where the product of the two
stays below 1, conservative simulation does not pay on two processors.
"""
import csv
import math
import sys

COLORS = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"]


def main(source, target):
    rows = list(csv.DictReader(open(source)))
    protocols = sorted({r["protocol"] for r in rows}, reverse=True)
    remotes = sorted({float(r["remote"]) for r in rows})
    lookaheads = sorted({float(r["lookahead"]) for r in rows})
    pw, ph, ml, mt, mb = 420, 300, 60, 40, 50
    width, height = ml + len(protocols) * (pw + 30), mt + ph + mb + 30
    ymax = max(2.0, max(max(float(r["p2_eps"]) / float(r["p1_eps"]), float(r["p1_eps"]) / float(r["seq_eps"]))
                        for r in rows) * 1.1)
    lx0, lx1 = math.log10(lookaheads[0]), math.log10(lookaheads[-1])

    def x(v, panel):
        return ml + panel * (pw + 30) + (math.log10(v) - lx0) / max(lx1 - lx0, 1e-9) * pw

    def y(v):
        return mt + ph - v / ymax * ph

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (width, height), '<rect width="100%" height="100%" fill="white"/>']
    for panel, protocol in enumerate(protocols):
        x0 = ml + panel * (pw + 30)
        out.append('<text x="%d" y="%d" font-size="13" text-anchor="middle">PHOLD on PSIM, %s</text>'
                   % (x0 + pw / 2, mt - 15, protocol))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (x0, mt, pw, ph))
        for t in range(0, int(ymax) + 1):
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>'
                       % (x0, x0 + pw, y(t), y(t), "#888" if t == 1 else "#eee"))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (x0 - 5, y(t) + 4, t))
        for la in lookaheads:
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>' % (x(la, panel), mt + ph + 15, la))
        out.append('<text x="%d" y="%d" text-anchor="middle">lookahead (mean delay = lookahead + 1)</text>'
                   % (x0 + pw / 2, mt + ph + 32))
        for i, remote in enumerate(remotes):
            pts = sorted((float(r["lookahead"]), float(r["p1_eps"]), float(r["p2_eps"]), float(r["seq_eps"]))
                         for r in rows if r["protocol"] == protocol and float(r["remote"]) == remote)
            color = COLORS[i % len(COLORS)]
            for dash, ratio in (("", lambda p: p[2] / p[1]), ("5,4", lambda p: p[1] / p[3])):
                path = " ".join("%.1f,%.1f" % (x(p[0], panel), y(ratio(p))) for p in pts)
                out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>'
                           % (path, color, dash))
            if panel == 0:
                out.append('<text x="%d" y="%d" fill="%s">remote %g</text>' % (x0 + 8, mt + 15 + 14 * i, color, remote))
    out.append('<text x="15" y="%d" transform="rotate(-90 15 %d)" text-anchor="middle">solid: P=2 / P=1; dashed: P=1 / sequential</text>' % (mt + ph / 2, mt + ph / 2))
    out.append("</svg>")
    open(target, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_psim_knobs.py KNOBS.csv OUT.svg")
    main(sys.argv[1], sys.argv[2])
