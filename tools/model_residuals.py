#!/usr/bin/env python3
"""Where the dense cost model misprices which tiles, on the recorded sweeps (no GPU).

Usage: tools/model_residuals.py [--scorer PATH] [--card TEXT] [--by m|k|waves] [--min-count N]
                                SWEEP [SWEEP ...]

Runs `fp8gemm_planner_score --predictions` on the sweep files (tests/data/*-sweep-*.txt) and,
per card pool, sets every timed kernel's measured time beside the model's prediction for it.
A problem's own scale (the card's clock, a process's drift, what the model leaves out for all
of its kernels alike) is taken out: a kernel's residual is log(measured / predicted) minus the
median of that over the kernels of its problem. So a residual says how much dearer (> 1) or
cheaper (< 1) the kernel ran than the model priced it against the others of its problem, which
is what the planner's ranking depends on.

For each tile class (block_m x block_n, and `mcA` / `mcB` / `sk2` / `ts1` where they apply) the
tool prints the number of timed kernels, the geometric mean of their residuals as a factor and
its 10th / 90th percentiles, then the same split by M (--by m, the default), by K (--by k) or by
the waves of tiles (--by waves; 132 SMs, clusters not counted). Classes with fewer than
--min-count kernels (default 5) are left out. Problems with fewer than three ranked kernels
timed are left out (their median says little). --card keeps the pools whose card name contains
the text (e.g. H100).

Exit status: 0, or 2 on bad use, when the scorer fails, or when no kernel is left.
"""
import argparse
import collections
import math
import os
import re
import signal
import statistics
import subprocess
import sys

# (low, high, label), inclusive.
M_BINS = [(1, 128, "M <= 128"), (129, 512, "M 129-512"), (513, 1536, "M 513-1536"), (1537, 4096, "M 1537-4096"),
          (4097, math.inf, "M > 4096")]
K_BINS = [(1, 2048, "K <= 2048"), (2049, 4096, "K 2049-4096"), (4097, 8192, "K 4097-8192"), (8193, math.inf, "K > 8192")]
WAVE_BINS = [(0, 1, "waves <= 1"), (1e-9 + 1, 4, "waves 1-4"), (1e-9 + 4, 16, "waves 4-16"), (1e-9 + 16, math.inf, "waves > 16")]


def tile_class(kernel):
    """'bm128_bn192' plus the variant marks that change the kernel's cost."""
    m = re.search(r"_bm(\d+)_bn(\d+)_s(\d+)_g(\d+)", kernel)
    if not m:
        return None, None, None
    bm, bn = int(m.group(1)), int(m.group(2))
    name = f"{bm}x{bn}"
    for mark, text in (("_mcA", " mcA"), ("_mcB", " mcB"), ("_sk2", " sk2"), ("_ts1", " ts1")):
        if mark in kernel:
            name += text
    return name, bm, bn


def default_scorer():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(here), "build", "tools", "fp8gemm_planner_score")


def read_predictions(scorer, sweeps):
    try:
        run = subprocess.run([scorer, "--predictions", *sweeps], capture_output=True, text=True)
    except OSError as e:
        print(f"model_residuals: cannot run the scorer {scorer}: {e} (build it, or give --scorer)", file=sys.stderr)
        sys.exit(2)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        print(f"model_residuals: {scorer} --predictions failed (exit {run.returncode})", file=sys.stderr)
        sys.exit(2)
    rows = []
    for line in run.stdout.splitlines():
        card, _, rest = line.partition(" | ")
        fields = rest.split()
        if len(fields) != 7:
            print(f"model_residuals: unexpected scorer line: {line!r}", file=sys.stderr)
            sys.exit(2)
        m, n, k = (int(x) for x in fields[:3])
        rows.append((card, m, n, k, fields[3], float(fields[4]), float(fields[5]), int(fields[6])))
    return rows


def residuals(rows, card_filter):
    by_problem = collections.defaultdict(list)
    for card, m, n, k, kernel, measured, predicted, _rank in rows:
        if card_filter and card_filter not in card:
            continue
        if measured > 0 and predicted > 0:
            by_problem[(card, m, n, k)].append((kernel, math.log(measured / predicted)))
    out = []
    for (card, m, n, k), kernels in by_problem.items():
        if len(kernels) < 3:
            continue
        centre = statistics.median(r for _, r in kernels)
        for kernel, r in kernels:
            out.append((card, m, n, k, kernel, r - centre))
    return out


def bin_label(value, bins):
    """(bin index, label) of the bin holding value."""
    for i, (lo, hi, label) in enumerate(bins):
        if lo <= value <= hi:
            return i, label
    return len(bins), "?"


def summary(values):
    values = sorted(values)
    q = lambda p: values[min(len(values) - 1, int(p * (len(values) - 1) + 0.5))]
    gm = math.exp(sum(values) / len(values))
    return f"{len(values):4d}  {gm:6.3f}  {math.exp(q(0.1)):6.3f} {math.exp(q(0.9)):6.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sweeps", nargs="+")
    ap.add_argument("--scorer", default=default_scorer())
    ap.add_argument("--card", default="")
    ap.add_argument("--by", choices=("m", "k", "waves"), default="m")
    ap.add_argument("--min-count", type=int, default=5)
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    res = residuals(read_predictions(args.scorer, args.sweeps), args.card)
    if not res:
        print("model_residuals: no kernel left (no pool matched, or no problem timed three ranked kernels)",
              file=sys.stderr)
        sys.exit(2)
    classes = collections.defaultdict(list)
    split = collections.defaultdict(lambda: collections.defaultdict(list))
    for card, m, n, k, kernel, r in res:
        name, bm, bn = tile_class(kernel)
        if name is None:
            continue
        classes[name].append(r)
        if args.by == "m":
            label = bin_label(m, M_BINS)
        elif args.by == "k":
            label = bin_label(k, K_BINS)
        else:
            waves = math.ceil(m / bm) * math.ceil(n / bn) / 132
            label = bin_label(waves, WAVE_BINS)
        split[name][label].append(r)
    cards = sorted({r[0] for r in res})
    print(f"pools: {', '.join(cards)}; {len(res)} timed kernels of "
          f"{len({r[:4] for r in res})} problems; residual = measured / predicted against the problem's median")
    print(f"{'tile':16s} {'n':>4s}  {'gmean':>6s}  {'p10':>6s} {'p90':>6s}   by {args.by}: gmean (n)")
    order = sorted(classes, key=lambda c: (tuple(int(x) for x in c.split()[0].split("x")), c))
    for name in order:
        if len(classes[name]) < args.min_count:
            continue
        parts = "  ".join(f"{label}: {math.exp(sum(v) / len(v)):.3f} ({len(v)})"
                          for (_, label), v in sorted(split[name].items()))
        print(f"{name:16s} {summary(classes[name])}   {parts}")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    sys.exit(main())
