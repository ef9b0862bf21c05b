#!/usr/bin/python3
"""Heat map of one simulated run on the mesh, as a PNG file.

  scripts/plot_heatmap.py SIM.json [--chip CHIP.json] [-o heatmap.png] [--title TEXT]

SIM.json is the simulator's result as 'meshpipe simulate --json' prints it (the object with "period_s",
"stages" and "links"; it may sit inside a larger object, as in 'meshpipe partition --json').  Its "mesh"
object gives the mesh and the DRAM ports; --chip (the chip file the run simulated) is needed only for a
result without one.  Each mesh cell is a core, coloured by its busy fraction in the steady state: its
stage's (compute_s + dram_s) per micro-batch over period_s, the share of the period it computes,
all-gathers or waits for weights from DRAM; the label is the stage and that percentage, and thick lines
separate the stages' core groups.  The listed links (the busiest ones) are arrows between
neighbouring cores, coloured and sized by utilisation; DRAM ports are triangles labelled with theirs.
Core ids are in snake order (row 0 left to right, row 1 right to left, ...), as in meshpipe.
Uses Debian's python3-matplotlib (run it with /usr/bin/python3); no display needed.
"""
import argparse
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import cm, colors  # noqa: E402

LINK = re.compile(r"^(?:x(\d+)y(\d+)|dram(\d+))>(?:x(\d+)y(\d+)|dram(\d+))$")


def find_result(doc):
    """The first object (depth first) that has period_s, stages and links."""
    if isinstance(doc, dict):
        if all(k in doc for k in ("period_s", "stages", "links")):
            return doc
        for v in doc.values():
            found = find_result(v)
            if found:
                return found
    elif isinstance(doc, list):
        for v in doc:
            found = find_result(v)
            if found:
                return found
    return None


def snake_xy(core, width):
    y = core // width
    x = core % width if y % 2 == 0 else width - 1 - core % width
    return x, y


def load(args):
    try:
        with open(args.sim) as f:
            res = find_result(json.load(f))
    except (OSError, ValueError) as e:
        sys.exit(f"plot_heatmap: {args.sim}: is not JSON ({e})")
    if res is None:
        sys.exit(f"plot_heatmap: {args.sim}: no simulator result (an object with period_s, stages, links)")
    if args.chip:
        try:
            with open(args.chip) as f:
                chip = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"plot_heatmap: {args.chip}: is not JSON ({e})")
        width, height = chip["mesh"]["width"], chip["mesh"]["height"]
        ports = [tuple(p) for p in chip.get("dram", {}).get("ports", [])]
    elif "mesh" in res:
        width, height = res["mesh"]["width"], res["mesh"]["height"]
        ports = [tuple(p) for p in res["mesh"].get("dram_ports", [])]
    else:
        sys.exit(f"plot_heatmap: {args.sim}: the result names no mesh (from an older meshpipe?): give the chip "
                 f"file with --chip")
    return res, width, height, ports


def main():
    ap = argparse.ArgumentParser(description="Mesh heat map of a simulated run.")
    ap.add_argument("sim")
    ap.add_argument("--chip", help="the chip file the run simulated (default: the result's own \"mesh\")")
    ap.add_argument("-o", "--output", default="heatmap.png")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    res, width, height, ports = load(args)
    period = float(res["period_s"])
    busy = [[0.0] * width for _ in range(height)]
    stage_of = [[-1] * width for _ in range(height)]
    fracs = []
    for si, st in enumerate(res["stages"]):
        frac = (float(st["compute_s"]) + float(st.get("dram_s", 0.0))) / period if period > 0 else 0.0
        # "cores": [first, last] as meshpipe writes it (first_core/n_cores accepted too)
        first, last = st["cores"] if "cores" in st else (st["first_core"], st["first_core"] + st["n_cores"] - 1)
        for core in range(first, last + 1):
            if core >= width * height:
                sys.exit(f"plot_heatmap: core {core} of stage {si} is not on a {width}x{height} mesh (wrong --chip?)")
            x, y = snake_xy(core, width)
            busy[y][x] = frac
            stage_of[y][x] = si
            fracs.append(frac)

    cell = 0.9 if width * height <= 64 else 0.55
    fig, ax = plt.subplots(figsize=(max(6.0, width * cell + 2.6), max(4.5, height * cell + 1.4)))
    heat = ax.imshow(busy, cmap="YlOrRd", vmin=0.0, vmax=1.0, origin="upper",
                     extent=(-0.5, width - 0.5, height - 0.5, -0.5))
    fig.colorbar(heat, ax=ax, fraction=0.046, pad=0.03,
                 label="core busy in the steady state: (compute + DRAM wait) / period")
    small = width * height > 64
    for y in range(height):
        for x in range(width):
            label = f"s{stage_of[y][x]}" if small else f"s{stage_of[y][x]}\n{100 * busy[y][x]:.0f}%"
            ax.text(x, y, label, ha="center", va="center", fontsize=5 if small else 7,
                    color="white" if busy[y][x] > 0.6 else "black")
            # thick borders between stages
            if x + 1 < width and stage_of[y][x] != stage_of[y][x + 1]:
                ax.plot([x + 0.5, x + 0.5], [y - 0.5, y + 0.5], color="black", linewidth=2.2)
            if y + 1 < height and stage_of[y][x] != stage_of[y + 1][x]:
                ax.plot([x - 0.5, x + 0.5], [y + 0.5, y + 0.5], color="black", linewidth=2.2)

    link_map = cm.get_cmap("Blues")
    # the colour scale ends at the busiest listed link (at least 10%), so that quiet runs stay visible
    top = max([float(k["utilisation"]) for k in res["links"]] + [0.1])
    norm = colors.Normalize(vmin=0.0, vmax=top)
    dram_util = {}
    for link in res["links"]:
        m = LINK.match(link.get("link", link.get("name", "")))
        if not m:
            continue
        u = float(link["utilisation"])
        shade = u / top
        if m.group(3) is not None or m.group(6) is not None:  # a DRAM port
            port = int(m.group(3) if m.group(3) is not None else m.group(6))
            dram_util[port] = max(dram_util.get(port, 0.0), u)
            continue
        x0, y0, x1, y1 = int(m.group(1)), int(m.group(2)), int(m.group(4)), int(m.group(5))
        # the two directions of a link side by side
        ox, oy = (0.0, 0.12 if x1 > x0 else -0.12) if y0 == y1 else (0.12 if y1 > y0 else -0.12, 0.0)
        ax.annotate("", xy=(x1 - 0.3 * (x1 - x0) + ox, y1 - 0.3 * (y1 - y0) + oy),
                    xytext=(x0 + 0.3 * (x1 - x0) + ox, y0 + 0.3 * (y1 - y0) + oy),
                    arrowprops=dict(arrowstyle="-|>", color=link_map(0.3 + 0.7 * shade), lw=0.8 + 2.5 * shade,
                                    mutation_scale=8 + 8 * shade))
    for i, (px, py) in enumerate(ports):
        ax.scatter([px - 0.32], [py - 0.32], marker="^", s=60, color="tab:purple", edgecolors="white", zorder=4)
        ax.text(px - 0.2, py - 0.3, f"DRAM{i}" + (f" {100 * dram_util[i]:.0f}%" if i in dram_util else ""),
                ha="left", va="center", fontsize=5.5, color="tab:purple", zorder=4,
                bbox=dict(facecolor="white", alpha=0.75, pad=0.6, edgecolor="none"))
    sm = cm.ScalarMappable(norm=norm, cmap=link_map)
    fig.colorbar(sm, ax=ax, orientation="horizontal", fraction=0.05, pad=0.1,
                 label="link utilisation (arrows: the busiest links the run lists)")
    ax.set_xticks(range(width))
    ax.set_yticks(range(height))
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    thr = res.get("samples_per_s")
    title = args.title or f"{width}x{height} mesh, {len(res['stages'])} stages"
    if thr:
        title += f", {float(thr):.4g} samples/s"
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    plt.close(fig)
    mean = sum(fracs) / len(fracs) if fracs else 0.0
    print(f"plot_heatmap: {width}x{height} mesh, {len(res['stages'])} stages, {len(res['links'])} links, cores busy "
          f"{100 * mean:.1f}% of the period on average -> {args.output}")


if __name__ == "__main__":
    main()
