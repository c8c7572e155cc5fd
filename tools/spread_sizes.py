#!/usr/bin/env python3
"""Per-group sizes with a given total, spread as a U[0.7, 1.3] x expected draw is spread.

Usage: tools/spread_sizes.py GROUPS EXPECTED TOTAL

Group i (of g) gets the quantile expected x (0.7 + 0.6 (i + 0.5) / g), all scaled so that they
sum to TOTAL (the rounding remainder one unit each to the largest), listed smallest, largest,
second smallest, ... Prints the list as JSON. The shape sets' "rows" and "ks" lists were made
with it, from the totals of the reference run in docs/reference/anchors-h200.json (its TFLOPS x
time / (2 N K) for each grouped row: the same problem for every (N, K) of a [groups, expected]).
"""
import json
import sys


def spread(groups, expected, total):
    raw = [expected * (0.7 + 0.6 * (i + 0.5) / groups) for i in range(groups)]
    scale = total / sum(raw)
    sizes = [int(r * scale) for r in raw]
    for i in range(total - sum(sizes)):
        sizes[groups - 1 - i % groups] += 1
    order = []
    lo, hi = 0, groups - 1
    while lo <= hi:
        order.append(lo)
        if hi != lo:
            order.append(hi)
        lo, hi = lo + 1, hi - 1
    return [sizes[i] for i in order]


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        groups, expected, total = (int(x) for x in argv[1:])
    except ValueError:
        print("GROUPS, EXPECTED and TOTAL must be integers", file=sys.stderr)
        return 2
    if groups < 1 or expected < 1 or total < 0:
        print("GROUPS and EXPECTED must be positive, TOTAL 0 or more", file=sys.stderr)
        return 2
    sizes = spread(groups, expected, total)
    assert sum(sizes) == total
    print(json.dumps(sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
