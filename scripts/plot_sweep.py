#!/usr/bin/python3
"""Plots of a 'meshpipe sweep' CSV, as PNG files.

  scripts/plot_sweep.py RESULTS.csv [-o DIR] [--prefix NAME] [--x KEY] [--lines KEY] [--panels KEY]
                        [--where KEY=VALUE]... [--y COLUMN] [--no-pareto]

writes DIR/NAME_<x>.png    the simulated throughput (samples/s; --y picks another column) against the
                           column --x names (default: the first --vary key with more than one value),
                           one line per value of --lines (default: method) with a legend outside the
                           axes, one panel per value of --panels (default: graph) and, when other
                           keys vary too, one row of panels per combination of their values (--where
                           KEY=VALUE keeps only the rows of that value);
       DIR/NAME_power.png  (a sweep of a chip with energy figures) throughput against average power,
                           one panel per graph, every case a point coloured by its core count, the front
                           (no case draws as little power and gives more throughput) as a step line,
                           its cases ringed in black (not with --no-pareto);
       DIR/NAME_pareto.png throughput against total SRAM, one panel per graph, every case a point
                           coloured by its NoC link bandwidth (hollow when the plan does not fit SRAM
                           and streams from DRAM), each bandwidth's own front (no case of that
                           bandwidth has as little SRAM and more throughput) as a step line, and the
                           cases no other case beats on SRAM, NoC bandwidth and throughput at once
                           (the front over all three) ringed in black (not with --no-pareto).
KEY is any column: a --vary key (mesh, core.sram_bytes, noc.bandwidth, ...), graph, method, batch,
cores, total_sram_bytes, noc_bandwidth, stages, and with energy figures energy_j_per_sample,
power_w, samples_per_j, tops_per_w.  Values sort as numbers ("WxH" meshes by cores).
Prints what it drew, one line per file.  Uses Debian's python3-matplotlib (run it with
/usr/bin/python3); no display needed.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

FIXED = ["graph", "batch", "method", "feasible", "stages", "model_period_s", "samples_per_s", "latency_s",
         "busiest_link", "busiest_link_utilisation", "total_sram_bytes", "noc_bandwidth", "cores", "solve_s"]
NUMERIC = ["batch", "stages", "model_period_s", "samples_per_s", "latency_s", "busiest_link_utilisation",
           "total_sram_bytes", "noc_bandwidth", "cores", "solve_s"]
ENERGY = ["energy_j_per_sample", "power_w", "samples_per_j", "tops_per_w"]  # with a chip's energy figures
LABELS = {"energy_j_per_sample": "energy per sample (J)", "power_w": "average power (W)",
          "samples_per_j": "samples per joule", "tops_per_w": "effective TOPS/W",
          "samples_per_s": "simulated throughput (samples/s)", "model_period_s": "model period (s per micro-batch)",
          "latency_s": "latency of one micro-batch (s)", "total_sram_bytes": "total on-chip SRAM (bytes)",
          "noc_bandwidth": "NoC link bandwidth (bytes/s)", "cores": "cores", "mesh": "mesh (cores)"}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
MAX_ROWS = 12
SUFFIXES = [("Ki", 2.0 ** 10), ("Mi", 2.0 ** 20), ("Gi", 2.0 ** 30), ("Ti", 2.0 ** 40), ("k", 1e3), ("M", 1e6),
            ("G", 1e9), ("T", 1e12)]


def fail(msg):
    sys.exit(f"plot_sweep: {msg}")


def read_rows(path):
    """(the --vary keys, the rows as dicts; NUMERIC columns as floats)."""
    try:
        f = open(path, newline="")
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    with f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        if not header or header[0] != "case" or any(col not in header for col in FIXED):
            fail(f"{path}: not a meshpipe sweep CSV of this version (header {header[:4]}...; expected the columns "
                 f"case, the --vary keys, {', '.join(FIXED)})")
        axes = header[1:header.index("graph")]
        numeric = NUMERIC + [col for col in ENERGY if col in header]
        rows = []
        for r in reader:
            for col in numeric:
                r[col] = float(r[col])
            r["feasible"] = r["feasible"] == "1"
            rows.append(r)
    if not rows:
        fail(f"{path}: no rows to plot")
    return axes, rows


def sort_key(value):
    """Numbers by value, WxH meshes by cores, anything else as text; tuples element by element."""
    if isinstance(value, tuple):
        return tuple(sort_key(v) for v in value)
    if isinstance(value, float):
        return (0, value, "")
    for suffix, scale in SUFFIXES:  # as meshpipe sweep reads them: 2Mi, 3.2G
        if value.endswith(suffix):
            try:
                return (0, float(value[:-len(suffix)]) * scale, value)
            except ValueError:
                break
    try:
        return (0, float(value), "")
    except ValueError:
        w, x, h = value.partition("x")
        if x and w.isdigit() and h.isdigit():
            return (0, float(int(w) * int(h)), value)
        return (1, 0.0, value)


def ordered(values):
    return sorted(set(values), key=sort_key)


def text(value):
    return f"{value:g}" if isinstance(value, float) else str(value)


def pareto(points):
    """The points (cost, value) no other point dominates: less or equal cost and more or equal value,
    one of them strictly.  Equal points are all kept."""
    front, best = [], None
    for cost, value in sorted(points, key=lambda p: (p[0], -p[1])):
        if best is None or value > best[1] or (value == best[1] and cost == best[0]):
            front.append((cost, value))
            if best is None or value > best[1]:
                best = (cost, value)
    return front


def pareto3(points):
    """The indices of the points (sram, bandwidth, value) that no other point dominates on all three:
    less or equal SRAM, less or equal bandwidth and more or equal value, one of them strictly."""
    keep = []
    for i, (s, b, v) in enumerate(points):
        if not any(s2 <= s and b2 <= b and v2 >= v and (s2 < s or b2 < b or v2 > v)
                   for j, (s2, b2, v2) in enumerate(points) if j != i):
            keep.append(i)
    return keep


def choose(axes, rows, args):
    """The x key, the line key, the panel key and the row keys (the other keys that vary)."""
    columns = set(rows[0].keys())
    for name, key in (("--x", args.x), ("--lines", args.lines), ("--panels", args.panels)):
        if key is not None and key not in columns:
            fail(f"{name} {key}: no such column (columns: {', '.join(k for k in rows[0] if k != 'case')})")
    varied = [a for a in axes if len(set(r[a] for r in rows)) > 1]
    x = args.x
    if x is None:
        x = next((a for a in varied if a not in (args.lines, args.panels)), None)
        if x is None:
            x = "cores" if len(set(r["cores"] for r in rows)) > 1 else "method"
    lines = args.lines if args.lines is not None else ("method" if x != "method" else "graph")
    panels = args.panels if args.panels is not None else ("graph" if "graph" not in (x, lines) else None)
    used = {x, lines, panels}
    others = [k for k in varied + ["graph", "method", "batch"]
              if k not in used and len(set(r[k] for r in rows)) > 1]
    return x, lines, panels, list(dict.fromkeys(others))


def plot_lines(axes, rows, args, out):
    x, lines, panels, others = choose(axes, rows, args)
    y = args.y
    combos = ordered(tuple(text(r[k]) for k in others) for r in rows) if others else [()]
    if len(combos) > MAX_ROWS:
        fail(f"{len(combos)} combinations of {', '.join(others)} would make {len(combos)} rows of panels: keep "
             f"fewer with --where KEY=VALUE, or name one of them in --lines / --panels")
    cols = ordered(r[panels] for r in rows) if panels else [None]
    xs = ordered(r[x] for r in rows)
    line_values = ordered(r[lines] for r in rows)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 5.2 * len(cols) + 1.6
    fig, grid = plt.subplots(len(combos), len(cols), figsize=(width, 3.4 * len(combos) + 0.7), squeeze=False,
                             sharex=True)
    handles = {}
    numeric_x = all(sort_key(v)[0] == 0 for v in xs)
    pos = {v: (sort_key(v)[1] if numeric_x else i) for i, v in enumerate(xs)}
    for ri, combo in enumerate(combos):
        for ci, col in enumerate(cols):
            ax = grid[ri][ci]
            mine = [r for r in rows if (panels is None or r[panels] == col)
                    and tuple(text(r[k]) for k in others) == combo]
            for li, lv in enumerate(line_values):
                pts = sorted((pos[r[x]], r[y], r["feasible"]) for r in mine if r[lines] == lv)
                if not pts:
                    continue
                c = colours[li % len(colours)]
                (h,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=c,
                               marker=MARKERS[li % len(MARKERS)], markersize=6, label=text(lv))
                hollow = [p for p in pts if not p[2]]
                if hollow:
                    ax.scatter([p[0] for p in hollow], [p[1] for p in hollow], s=70, facecolors="white",
                               edgecolors=c, zorder=3, marker=MARKERS[li % len(MARKERS)])
                handles.setdefault(text(lv), h)
            if numeric_x and len(xs) > 1 and min(pos.values()) > 0 and max(pos.values()) / min(pos.values()) >= 8:
                ax.set_xscale("log", base=2)
            ax.set_xticks([pos[v] for v in xs])
            names = [text(v) for v in xs]
            if x == "mesh":  # "8x8" over its core count
                names = [f"{v}\n{int(sort_key(v)[1])}" for v in xs]
            ax.set_xticklabels(names, rotation=30 if len(xs) > 6 else 0)
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            if y == "samples_per_s":
                ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
            title = [f"{panels}={text(col)}" if panels not in (None, "graph") else text(col) if col else ""]
            title += [f"{k}={v}" for k, v in zip(others, combo)]
            ax.set_title(", ".join(t for t in title if t), fontsize=9)
            if ri == len(combos) - 1:
                ax.set_xlabel(LABELS.get(x, x))
            if ci == 0:
                ax.set_ylabel(LABELS.get(y, y))
    fig.legend(list(handles.values()), list(handles.keys()), title=LABELS.get(lines, lines), loc="center right",
               fontsize=8, title_fontsize=8, frameon=False)
    fig.suptitle(f"{LABELS.get(y, y)} against {x}, a line per {lines} (hollow: does not fit SRAM)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 1.5 / width, 0.97))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"plot_sweep: {out}: x {x} ({len(xs)} values), a line per {lines} ({len(handles)} in the legend, outside "
          f"the axes), {len(combos) * len(cols)} panels ({panels or '-'}" + (f" x {', '.join(others)})" if others
                                                                            else ")"))


def plot_pareto(rows, out):
    graphs = ordered(r["graph"] for r in rows)
    bandwidths = ordered(r["noc_bandwidth"] for r in rows)
    methods = ordered(r["method"] for r in rows)
    cmap = plt.get_cmap("viridis")
    colour = {b: cmap(0.15 + 0.7 * i / max(1, len(bandwidths) - 1)) for i, b in enumerate(bandwidths)}
    width = 5.6 * len(graphs) + 2.0
    fig, panels = plt.subplots(1, len(graphs), figsize=(width, 4.6), squeeze=False)
    mib = 1024.0 * 1024.0
    on_front = 0
    for ax, g in zip(panels[0], graphs):
        mine = [r for r in rows if r["graph"] == g]
        for r in mine:
            c = colour[r["noc_bandwidth"]]
            ax.scatter([r["total_sram_bytes"] / mib], [r["samples_per_s"]], s=34,
                       marker=MARKERS[methods.index(r["method"]) % len(MARKERS)],
                       facecolors=c if r["feasible"] else "none", edgecolors=c, alpha=0.9)
        for b in bandwidths:
            front = pareto([(r["total_sram_bytes"] / mib, r["samples_per_s"]) for r in mine if r["noc_bandwidth"] == b])
            if front:
                ax.plot([p[0] for p in front], [p[1] for p in front], "-", color=colour[b], linewidth=1.3,
                        drawstyle="steps-post", zorder=1)
        keep = pareto3([(r["total_sram_bytes"], r["noc_bandwidth"], r["samples_per_s"]) for r in mine])
        on_front += len(keep)
        ax.scatter([mine[i]["total_sram_bytes"] / mib for i in keep], [mine[i]["samples_per_s"] for i in keep], s=150,
                   facecolors="none", edgecolors="black", linewidths=1.4, zorder=3)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("total on-chip SRAM (MiB)")
        ax.set_ylabel("simulated throughput (samples/s)")
        ax.set_title(f"{g}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    handles = [plt.Line2D([], [], color=colour[b], marker="o", linestyle="-", label=f"{b / 1e9:g} GB/s")
               for b in bandwidths]
    handles += [plt.Line2D([], [], color="grey", marker=MARKERS[i % len(MARKERS)], linestyle="none", label=m)
                for i, m in enumerate(methods)]
    handles += [plt.Line2D([], [], color="grey", marker="o", markerfacecolor="none", linestyle="none",
                           label="does not fit SRAM"),
                plt.Line2D([], [], color="black", marker="o", markerfacecolor="none", markersize=11, linestyle="none",
                           label="front over SRAM,\nNoC bandwidth and\nthroughput")]
    fig.legend(handles=handles, loc="center right", fontsize=8, title="NoC link bandwidth\n(lines: its front)",
               title_fontsize=8, frameon=False)
    fig.suptitle("throughput against SRAM and NoC bandwidth", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 1.9 / width, 0.96))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"plot_sweep: {out}: {len(rows)} cases, {len(bandwidths)} NoC bandwidths, {on_front} on the front over "
          f"SRAM, NoC bandwidth and throughput")


def plot_power(rows, out):
    graphs = ordered(r["graph"] for r in rows)
    cores = ordered(r["cores"] for r in rows)
    methods = ordered(r["method"] for r in rows)
    cmap = plt.get_cmap("viridis")
    colour = {c: cmap(0.15 + 0.7 * i / max(1, len(cores) - 1)) for i, c in enumerate(cores)}
    width = 5.6 * len(graphs) + 2.0
    fig, panels = plt.subplots(1, len(graphs), figsize=(width, 4.6), squeeze=False)
    on_front = 0
    for ax, g in zip(panels[0], graphs):
        mine = [r for r in rows if r["graph"] == g]
        for r in mine:
            c = colour[r["cores"]]
            ax.scatter([r["power_w"]], [r["samples_per_s"]], s=34,
                       marker=MARKERS[methods.index(r["method"]) % len(MARKERS)],
                       facecolors=c if r["feasible"] else "none", edgecolors=c, alpha=0.9)
        front = pareto([(r["power_w"], r["samples_per_s"]) for r in mine])
        on_front += len(front)
        ax.plot([p[0] for p in front], [p[1] for p in front], "-", color="black", linewidth=1.2,
                drawstyle="steps-post", zorder=1)
        ax.scatter([p[0] for p in front], [p[1] for p in front], s=150, facecolors="none", edgecolors="black",
                   linewidths=1.4, zorder=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel(LABELS["power_w"])
        ax.set_ylabel(LABELS["samples_per_s"])
        ax.set_title(f"{g}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    handles = [plt.Line2D([], [], color=colour[c], marker="o", linestyle="none", label=f"{c:g} cores") for c in cores]
    handles += [plt.Line2D([], [], color="grey", marker=MARKERS[i % len(MARKERS)], linestyle="none", label=m)
                for i, m in enumerate(methods)]
    handles += [plt.Line2D([], [], color="grey", marker="o", markerfacecolor="none", linestyle="none",
                           label="does not fit SRAM"),
                plt.Line2D([], [], color="black", marker="o", markerfacecolor="none", markersize=11, linestyle="-",
                           label="front: no case\nwith less power and\nmore throughput")]
    fig.legend(handles=handles, loc="center right", fontsize=8, frameon=False)
    fig.suptitle("throughput against average power", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 1.9 / width, 0.96))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"plot_sweep: {out}: {len(rows)} cases, {len(cores)} core counts, {on_front} on the throughput-power front")


def main():
    ap = argparse.ArgumentParser(description="Plot a meshpipe sweep CSV to PNG files.")
    ap.add_argument("csv")
    ap.add_argument("-o", "--outdir", default=".")
    ap.add_argument("--prefix", default="sweep")
    ap.add_argument("--x", help="the x axis: a column (default: the first --vary key with several values)")
    ap.add_argument("--lines", help="one line per value of this column (default: method)")
    ap.add_argument("--panels", help="one panel per value of this column (default: graph)")
    ap.add_argument("--where", action="append", default=[], metavar="KEY=VALUE", help="keep only these rows")
    ap.add_argument("--y", default="samples_per_s", choices=NUMERIC + ENERGY,
                    help="the y axis (default: samples_per_s)")
    ap.add_argument("--no-pareto", action="store_true", help="do not draw NAME_pareto.png")
    args = ap.parse_args()
    axes, rows = read_rows(args.csv)
    if args.y not in rows[0]:
        fail(f"--y {args.y}: the sweep has no such column (its chip has no energy figures)")
    for w in args.where:
        key, eq, value = w.partition("=")
        if not eq or key not in rows[0]:
            fail(f"--where {w}: expected KEY=VALUE with KEY a column")
        rows = [r for r in rows if text(r[key]) == value or str(r[key]) == value]
        if not rows:
            fail(f"--where {w}: no row has that value")
    os.makedirs(args.outdir, exist_ok=True)
    x = choose(axes, rows, args)[0]
    plot_lines(axes, rows, args, os.path.join(args.outdir, f"{args.prefix}_{x.replace('.', '_')}.png"))
    if not args.no_pareto:
        plot_pareto(rows, os.path.join(args.outdir, f"{args.prefix}_pareto.png"))
        if "power_w" in rows[0]:
            plot_power(rows, os.path.join(args.outdir, f"{args.prefix}_power.png"))


if __name__ == "__main__":
    main()
