#!/usr/bin/python3
"""The analytical model against the simulator, from 'meshpipe bench --fidelity --json FILE', as a PNG.

  scripts/plot_fidelity.py FIDELITY.json [-o fidelity.png]

Left: the model's period over the simulated steady period of optimal's plan, per case, against the
simulated period (log scale), a marker per mesh and a colour per SRAM size, with the 5 % and 15 % bands.
Right: optimal's simulated throughput as a share of the best plan any method found, per case.
Uses Debian's python3-matplotlib (run it with /usr/bin/python3); no display needed.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MARKERS = {"mesh4x4": "o", "mesh8x8": "s", "mesh16x16": "^", "mesh32x32": "D"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="the file 'meshpipe bench --fidelity --json' wrote")
    ap.add_argument("-o", "--output", default="fidelity.png", help="the PNG to write (default fidelity.png)")
    a = ap.parse_args()
    try:
        with open(a.json) as f:
            d = json.load(f)
        cases = [c for c in d["cases"] if c.get("done")]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"plot_fidelity: {a.json}: not a fidelity result ({e})")
    if not cases:
        sys.exit(f"plot_fidelity: {a.json}: no case ran")
    srams = sorted({c["chip"].split("-")[1] for c in cases}, key=lambda s: float(s.rstrip("Mi")))
    colours = {s: plt.cm.viridis(i / max(1, len(srams) - 1)) for i, s in enumerate(srams)}
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [3, 2]})
    for c in cases:
        mesh, sram = c["chip"].split("-")
        left.scatter(c["simulated_period_s"] * 1e6, c["ratio"], marker=MARKERS.get(mesh, "x"), color=colours[sram],
                     s=28, alpha=0.8)
    left.set_xscale("log")
    for lo, hi, alpha in ((0.85, 1.15, 0.08), (0.95, 1.05, 0.15)):
        left.axhspan(lo, hi, color="tab:green", alpha=alpha, lw=0)
    left.axhline(1, color="grey", lw=0.8)
    left.set_xlabel("simulated steady period of optimal's plan (us)")
    left.set_ylabel("model period / simulated period")
    n = len(cases)
    w5 = sum(abs(c["ratio"] - 1) <= 0.05 for c in cases)
    w15 = sum(abs(c["ratio"] - 1) <= 0.15 for c in cases)
    left.set_title(f"{n} cases: {w5} within 5 %, {w15} within 15 %")
    handles = [plt.Line2D([], [], marker=m, ls="", color="grey", label=k) for k, m in MARKERS.items()]
    handles += [plt.Line2D([], [], marker="o", ls="", color=colours[s], label=s + "B SRAM") for s in srams]
    left.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    shares = sorted(100 * c["samples_per_s"]["optimal"] / max(c["samples_per_s"].values()) for c in cases)
    right.plot(range(1, n + 1), shares, marker=".", ls="")
    right.axhline(100 / 1.03, color="tab:red", lw=0.8, ls="--", label="3 % below the best")
    right.set_xlabel("cases, sorted")
    right.set_ylabel("optimal's simulated throughput, % of the best method's")
    right.set_ylim(min(85, shares[0] - 2), 101)
    right.legend(loc="lower right", fontsize=8)
    right.set_title(f"optimal within 3 % of the best on {sum(s >= 100 / 1.03 for s in shares)} of {n}")
    fig.tight_layout()
    fig.savefig(a.output, dpi=110)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
