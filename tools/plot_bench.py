#!/usr/bin/env python3
"""Plots `fp8gemm bench --json` output: TFLOPS per shape for fp8gemm and cuBLASLt.

Usage: tools/plot_bench.py bench.json plot.png   (needs matplotlib)
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    with open(src) as f:
        data = json.load(f)
    rows = data["rows"]
    ms = sorted({r["m"] for r in rows})
    fig, axes = plt.subplots(len(ms), 1, figsize=(12, 3.2 * len(ms)), squeeze=False)
    for ax, m in zip(axes[:, 0], ms):
        group = [r for r in rows if r["m"] == m]
        labels = [f'{r["n"]}x{r["k"]}' for r in group]
        x = range(len(group))
        ours = [r["tflops"] for r in group]
        theirs = [r["cublaslt_tflops"] for r in group]
        ax.bar([i - 0.2 for i in x], ours, 0.4, label="fp8gemm")
        ax.bar([i + 0.2 for i in x], theirs, 0.4, label="cuBLASLt (block-scaled)")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels)
        ax.set_ylabel("TFLOPS")
        ax.set_title(f"M = {m}  (N x K)")
        # Headroom above the tallest bar for the legend and the value labels.
        ax.set_ylim(0, 1.3 * max([v for v in ours + theirs if v] or [1]))
        ax.legend(loc="upper left", ncol=2)
        for i, v in enumerate(ours):
            ax.text(i - 0.2, v, f"{v:.0f}", ha="center", va="bottom", fontsize=7)
    fig.suptitle(f'{data["device"]}, {data["date"]}, fp8gemm {data["library_version"]}, '
                 f'cuBLASLt {data["cublaslt_version"]}')
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
