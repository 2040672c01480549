#!/usr/bin/env python3
"""Plots thread_management's CSV (--csv FILE) as an SVG, with no dependencies.

    build/benchmarks/thread_management --csv benchmarks/results/thread_management.csv
    benchmarks/micro/plot_thread_management.py benchmarks/results/thread_management.csv \\
        docs/benchmarks/thread_management.svg

Two panels against the number of processors, one line per alternative: the rate of null
threads created, started and finished (thousands per second; Anderson, Lazowska and Levy's
Fig. 3.2) and the latency of a thread's start (nanoseconds; the left end of their Fig. 3.4).
The title says the load average the figures were taken under.
"""
import csv
import math
import sys

COLORS = {"single-lock": "#d95f02", "multiple-locks": "#7570b3", "local-free-lists": "#e7298a",
          "idle-queue": "#66a61e", "local-ready-queues": "#1b9e77"}


def main(source, target):
    rows = [r for r in csv.DictReader(open(source)) if r["alternative"] in COLORS]
    procs = sorted({int(r["processors"]) for r in rows})
    load = max(float(r["load_average"]) for r in rows)
    hw = rows[0]["hardware_threads"]
    panels = [("null threads created, started and finished (thousands/s)", "threads_per_s", 1e-3),
              ("start latency: fork to first instruction (ns)", "start_latency_ns", 1)]
    pw, ph, ml, mt, mb, gap = 400, 280, 60, 50, 50, 70
    width, height = ml + len(panels) * (pw + gap), mt + ph + mb + 20

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (width, height), '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="13" text-anchor="middle">Thread-management alternatives on %s hardware '
           'threads (load average %.1f%s)</text>' % (width / 2, hw, load, ", LOADED" if load > 2 else "")]

    def x(p, panel):
        x0 = ml + panel * (pw + gap)
        if len(procs) == 1:
            return x0 + pw / 2
        return x0 + 20 + procs.index(p) / (len(procs) - 1) * (pw - 40)

    for panel, (title, key, scale) in enumerate(panels):
        x0 = ml + panel * (pw + gap)
        ymax = max(float(r[key]) * scale for r in rows) * 1.15
        magnitude = 10 ** math.floor(math.log10(ymax / 6))
        step = next(m * magnitude for m in (1, 2, 5, 10) if ymax / (m * magnitude) <= 7)

        def y(v):
            return mt + ph - v / ymax * ph

        out.append('<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>' % (x0 + pw / 2, mt - 10, title))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (x0, mt, pw, ph))
        t = 0.0
        while t <= ymax:
            out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>' % (x0, x0 + pw, y(t), y(t)))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (x0 - 5, y(t) + 4, t))
            t += step
        for p in procs:
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(p, panel), mt + ph + 15, p))
        out.append('<text x="%d" y="%d" text-anchor="middle">processors</text>' % (x0 + pw / 2, mt + ph + 32))
        for i, (name, color) in enumerate(COLORS.items()):
            pts = sorted((int(r["processors"]), float(r[key]) * scale) for r in rows if r["alternative"] == name)
            if not pts:
                continue
            path = " ".join("%.1f,%.1f" % (x(p, panel), y(v)) for p, v in pts)
            out.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' % (path, color))
            for p, v in pts:
                out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(p, panel), y(v), color))
            if panel == 0:
                out.append('<text x="%d" y="%d" fill="%s">%s</text>' % (x0 + 8, mt + 15 + 14 * i, color, name))
    out.append("</svg>")
    open(target, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_thread_management.py RESULTS.csv OUT.svg")
    main(sys.argv[1], sys.argv[2])
