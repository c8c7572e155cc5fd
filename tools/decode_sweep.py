#!/usr/bin/env python3
"""Turns the log of `fp8gemm -v tune` into the sweep file the heuristics test reads.

Usage: fp8gemm -v tune --shapes shapes/dense-decode.json --candidates 64 2>&1 \\
         | tools/decode_sweep.py "<card>, <date>, library at <commit>" > tests/data/decode-sweep-h200.txt

Every line "tuning gemm1d2d M=.. N=.. K=..: <kernel> <us> us" becomes "M N K kernel us";
candidates that were skipped (no time) are left out. The test
Heuristics.DecodePicksOnTheRecordedSweep ranks each problem's timed kernels with the cost
model and bounds the regret of its picks.
"""
import re
import sys

LINE = re.compile(r"tuning \S+ M=(\d+) N=(\d+) K=(\d+): (\S+) ([\d.]+) us")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = [m.groups() for m in map(LINE.search, sys.stdin) if m]
    if not rows:
        sys.exit("no timed candidates in the input (run tune with -v)")
    print(f"# Decode sweep on one {sys.argv[1]}: every candidate the tuner timed with")
    print("# `fp8gemm -v tune --shapes shapes/dense-decode.json --candidates 64` (median us per call).")
    print("# Columns: M N K kernel us")
    for r in rows:
        print(" ".join(r))


if __name__ == "__main__":
    main()
