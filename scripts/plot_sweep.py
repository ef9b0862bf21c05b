#!/usr/bin/python3
"""Plots of a 'meshpipe sweep' CSV, as PNG files.

  scripts/plot_sweep.py RESULTS.csv [-o DIR] [--prefix NAME]

writes DIR/NAME_mesh.png   throughput against mesh size (cores), one panel per model, a colour per
                           method and a line style per combination of the other varied keys;
       DIR/NAME_pareto.png throughput against total SRAM, one panel per model, every case a point
                           (hollow when the plan does not fit SRAM and streams weights from DRAM),
                           the Pareto front (no other case has as little SRAM and more throughput)
                           joined by a line.
Uses Debian's python3-matplotlib (run it with /usr/bin/python3); no display needed.
"""
import argparse
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

FIXED = ["graph", "method", "feasible", "stages", "model_period_s", "samples_per_s", "latency_s", "busiest_link",
         "busiest_link_utilisation", "total_sram_bytes", "cores", "solve_s"]
STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def read_rows(path):
    try:
        f = open(path, newline="")
    except OSError as e:
        sys.exit(f"plot_sweep: {path}: {e.strerror}")
    with f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        if not header or header[0] != "case" or any(col not in header for col in FIXED):
            sys.exit(f"plot_sweep: {path}: not a meshpipe sweep CSV (header {header[:4]}...)")
        axes = header[1:header.index("graph")]
        rows = []
        for r in reader:
            for col in ("samples_per_s", "total_sram_bytes", "cores"):
                r[col] = float(r[col])
            r["feasible"] = r["feasible"] == "1"
            rows.append(r)
    if not rows:
        sys.exit(f"plot_sweep: {path}: no rows to plot")
    return axes, rows


def sort_key(value):
    """Numbers by value, WxH meshes by cores, anything else as text."""
    try:
        return (0, float(value), "")
    except ValueError:
        if "x" in value:
            w, _, h = value.partition("x")
            if w.isdigit() and h.isdigit():
                return (0, float(int(w) * int(h)), value)
        return (1, 0.0, value)


def ordered(values):
    return sorted(set(values), key=sort_key)


def plot_mesh(axes, rows, out):
    graphs = ordered(r["graph"] for r in rows)
    methods = ordered(r["method"] for r in rows)
    others = [a for a in axes if a != "mesh"]
    combos = ordered(";".join(f"{a}={r[a]}" for a in others) for r in rows)
    fig, panels = plt.subplots(1, len(graphs), figsize=(6.2 * len(graphs), 4.6), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, g in zip(panels[0], graphs):
        for mi, m in enumerate(methods):
            for ci, combo in enumerate(combos):
                pts = sorted((r["cores"], r["samples_per_s"], r.get("mesh", ""))
                             for r in rows if r["graph"] == g and r["method"] == m
                             and ";".join(f"{a}={r[a]}" for a in others) == combo)
                if not pts:
                    continue
                label = m + (f"  {combo}" if combo else "")
                ax.plot([p[0] for p in pts], [p[1] for p in pts], STYLES[ci % len(STYLES)],
                        marker=MARKERS[mi % len(MARKERS)], color=colours[mi % len(colours)], label=label)
        cores = ordered(str(int(r["cores"])) for r in rows if r["graph"] == g)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks([float(c) for c in cores])
        if "mesh" in axes:
            names = {int(r["cores"]): r["mesh"] for r in rows if r["graph"] == g}
            ax.set_xticklabels([f"{names[int(c)]}\n{c}" for c in cores])
        else:
            ax.set_xticklabels(cores)
        ax.set_xlabel("mesh (cores)")
        ax.set_ylabel("simulated throughput (samples/s)")
        ax.set_title(f"{g}: throughput against mesh size")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def pareto(points):
    """The points no other point dominates (less or equal SRAM and more or equal throughput, one strictly)."""
    front, best = [], -1.0
    for sram, thr in sorted(points, key=lambda p: (p[0], -p[1])):
        if thr > best:
            front.append((sram, thr))
            best = thr
    return front


def plot_pareto(rows, out):
    graphs = ordered(r["graph"] for r in rows)
    methods = ordered(r["method"] for r in rows)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, panels = plt.subplots(1, len(graphs), figsize=(6.2 * len(graphs), 4.6), squeeze=False)
    mib = 1024.0 * 1024.0
    for ax, g in zip(panels[0], graphs):
        mine = [r for r in rows if r["graph"] == g]
        for mi, m in enumerate(methods):
            for fits in (True, False):
                pts = [(r["total_sram_bytes"] / mib, r["samples_per_s"]) for r in mine
                       if r["method"] == m and r["feasible"] == fits]
                if not pts:
                    continue
                c = colours[mi % len(colours)]
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=36, marker=MARKERS[mi % len(MARKERS)],
                           facecolors=c if fits else "none", edgecolors=c, alpha=0.85,
                           label=m + ("" if fits else " (does not fit SRAM)"))
        front = pareto([(r["total_sram_bytes"] / mib, r["samples_per_s"]) for r in mine])
        ax.plot([p[0] for p in front], [p[1] for p in front], "-", color="black", linewidth=1.5, zorder=0,
                drawstyle="steps-post", label="Pareto front")
        ax.scatter([p[0] for p in front], [p[1] for p in front], s=140, facecolors="none", edgecolors="black",
                   linewidths=1.5, zorder=3)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("total on-chip SRAM (MiB)")
        ax.set_ylabel("simulated throughput (samples/s)")
        ax.set_title(f"{g}: throughput against SRAM")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description="Plot a meshpipe sweep CSV to PNG files.")
    ap.add_argument("csv")
    ap.add_argument("-o", "--outdir", default=".")
    ap.add_argument("--prefix", default="sweep")
    args = ap.parse_args()
    axes, rows = read_rows(args.csv)
    os.makedirs(args.outdir, exist_ok=True)
    mesh_png = os.path.join(args.outdir, f"{args.prefix}_mesh.png")
    pareto_png = os.path.join(args.outdir, f"{args.prefix}_pareto.png")
    plot_mesh(axes, rows, mesh_png)
    plot_pareto(rows, pareto_png)
    print(f"plot_sweep: {len(rows)} rows -> {mesh_png}, {pareto_png}")


if __name__ == "__main__":
    main()
