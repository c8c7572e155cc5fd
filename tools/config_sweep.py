#!/usr/bin/env python3
"""Turns `fp8gemm bench --json` files of explicit configs into the sweep file a heuristics test reads.

Usage: tools/config_sweep.py "<card>, <date>, library at <commit>, <command>" A.json [B.json ...] \\
         > tests/data/dense-sweep-h100.txt

Every timed row (a kernel given by `--config`, a dense problem) becomes "M N K kernel us", the
time averaged over the files that timed it (rounds, which must share the card and the timing
condition); skipped configs (no time) and grouped or weight-gradient rows are left out; exit
status 2 on bad input. Rows of the library's own choice belong in no such file: it may run on
fewer SMs than an explicit config (docs/PERFORMANCE.md, "Balanced grid"). The test
Heuristics.DensePicksOnTheRecordedSweep ranks each problem's timed kernels with the cost model
and bounds the regret of its picks.
"""
import json
import sys
from collections import defaultdict


def fail(message):
    print(f"config_sweep.py: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) < 3:
        fail("usage: " + __doc__.split("Usage: ", 1)[1].split("\n\n", 1)[0])
    times = defaultdict(list)
    first = None  # (path, card, condition without the configs) of the first file
    for path in sys.argv[2:]:
        try:
            with open(path) as f:
                doc = json.load(f)
            condition = dict(doc.get("condition", {}))
            configs = condition.pop("configs", None)
            alike = (doc.get("device"), condition)
            if not configs:
                fail(f"{path}: not a run of explicit configs (--config); the library's own picks do not belong here")
            if first is None:
                first = (path,) + alike
            elif alike != first[1:]:
                fail(f"{path}: measured on another card or under another condition than {first[0]}")
            for row in doc["rows"]:
                if row.get("kind", "dense") != "dense" or row.get("us", 0) <= 0:
                    continue
                kernel = row["kernel"]
                if not kernel.startswith("gemm"):  # an explicit config is named by its config alone
                    kernel = f"gemm1d2d_n{row['n']}_k{row['k']}_{kernel}"
                times[(row["m"], row["n"], row["k"], kernel)].append(row["us"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            fail(f"{path}: not a bench --json file ({e!r})")
    if not times:
        fail("no timed dense rows in the input")
    print(f"# Explicit configs on one {sys.argv[1]}")
    print("# (mean kernel us per call over the files that timed it). Columns: M N K kernel us")
    for (m, n, k, kernel), us in sorted(times.items()):
        print(f"{m} {n} {k} {kernel} {sum(us) / len(us):.2f}")


if __name__ == "__main__":
    main()
