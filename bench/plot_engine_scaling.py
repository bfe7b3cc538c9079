#!/usr/bin/env python3
"""Plots cost per admission against queue depth from engine_bench's JSON output as an SVG.

Usage:
  engine_bench --benchmark_filter='BM_AdmissionCycle|BM_WorkloadLifecycle|BM_Submit' \
      --benchmark_repetitions=3 --benchmark_out=engine.json --benchmark_out_format=json
  python3 bench/plot_engine_scaling.py engine.json docs/engine_scaling.svg

Standard library only (no matplotlib or gnuplot on the build machines). Uses the median
aggregate when repetitions were run, else the single run. The x axis is log10(pending); a
dashed grey line shows what logarithmic growth from the smallest depth would look like.
"""

import json
import math
import sys

SERIES = [
    ("BM_AdmissionCycle", "s/admission", "cycle (PlanCycle+ApplyCycle) per admission", "#1f77b4"),
    ("BM_WorkloadLifecycle", "s/workload", "Submit+cycle+Finish+Delete per workload", "#d62728"),
    ("BM_Submit", "s/submit", "Submit alone", "#2ca02c"),
]


def load(path):
    with open(path) as f:
        data = json.load(f)
    points = {}
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        agg = b.get("aggregate_name")
        if agg not in (None, "", "median"):
            continue
        family, _, arg = name.partition("/")
        arg = arg.split("/")[0]
        for fam, counter, _, _ in SERIES:
            if family == fam and counter in b:
                key = (fam, int(arg))
                # Prefer the median aggregate over individual repetitions.
                if agg == "median" or key not in points:
                    points[key] = b[counter] * 1e9  # ns
    return points


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    points = load(sys.argv[1])
    depths = sorted({d for (_, d) in points})
    if not depths:
        sys.exit("no BM_AdmissionCycle/BM_WorkloadLifecycle/BM_Submit results in " + sys.argv[1])
    ymax = max(points.values()) * 1.25
    w, h, left, right, top, bottom = 760, 440, 80, 250, 40, 60
    pw, ph = w - left - right, h - top - bottom
    lx0, lx1 = math.log10(depths[0]) - 0.2, math.log10(depths[-1]) + 0.2

    def x(d):
        return left + (math.log10(d) - lx0) / (lx1 - lx0) * pw

    def y(v):
        return top + ph - v / ymax * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="14">Engine cost per admission vs pending '
           f'workloads (1,000 ClusterQueues, 100 cohorts)</text>',
           f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" stroke="black"/>']
    for d in depths:
        out.append(f'<line x1="{x(d):.1f}" y1="{top + ph}" x2="{x(d):.1f}" y2="{top + ph + 5}" '
                   f'stroke="black"/>')
        out.append(f'<text x="{x(d):.1f}" y="{top + ph + 20}" text-anchor="middle">{d:,}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 15}" text-anchor="middle">pending workloads '
               f'(log scale)</text>')
    step = 10 ** math.floor(math.log10(ymax / 5))
    for mult in (1, 2, 5):
        if ymax / (step * mult) <= 8:
            step *= mult
            break
    v = 0.0
    while v <= ymax:
        out.append(f'<line x1="{left - 5}" y1="{y(v):.1f}" x2="{left + pw}" y2="{y(v):.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
        v += step
    out.append(f'<text transform="translate(20,{top + ph / 2}) rotate(-90)" '
               f'text-anchor="middle">ns per admission (median)</text>')
    legend_y = top + 10
    for fam, _, label, color in SERIES:
        pts = [(d, points[(fam, d)]) for d in depths if (fam, d) in points]
        if not pts:
            continue
        path = " ".join(f"{x(d):.1f},{y(v):.1f}" for d, v in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for d, v in pts:
            out.append(f'<circle cx="{x(d):.1f}" cy="{y(v):.1f}" r="3.5" fill="{color}"/>')
            out.append(f'<text x="{x(d) + 6:.1f}" y="{y(v) - 6:.1f}" fill="{color}">{v:.0f}</text>')
        # Logarithmic reference: cost(d) = cost(d0) * log2(d) / log2(d0).
        d0, v0 = pts[0]
        ref = " ".join(f"{x(d):.1f},{y(v0 * math.log2(d) / math.log2(d0)):.1f}" for d, _ in pts)
        out.append(f'<polyline points="{ref}" fill="none" stroke="{color}" stroke-opacity="0.35" '
                   f'stroke-dasharray="5,4"/>')
        out.append(f'<rect x="{left + pw + 15}" y="{legend_y - 9}" width="12" height="12" '
                   f'fill="{color}"/>')
        out.append(f'<text x="{left + pw + 32}" y="{legend_y + 1}">{label}</text>')
        legend_y += 20
    out.append(f'<text x="{left + pw + 15}" y="{legend_y + 6}" fill="#666">dashed: c0 x log(n) / '
               f'log(n0)</text>')
    out.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
