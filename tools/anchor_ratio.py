#!/usr/bin/env python3
"""Bench rows against one library's figures in the anchors: per row and per form, the row's
TFLOPS over that library's TFLOPS on the anchors' card.

Usage:
  tools/anchor_ratio.py [--anchors docs/reference/anchors-h200.json] [--column fp8gemm]
                        JSON [JSON ...]

The JSON files are `fp8gemm bench --json` output (dense, --wgrad and --grouped rows alike).
--column picks the anchors' figures: fp8gemm (the default: the build the anchors measured,
named in their "about"), deepgemm, or cublaslt (dense rows only, against the cuBLASLt time the
row carries: bench without --no-cublas).

What it is for: the grouped and weight-gradient bars compare our TFLOPS with DeepGEMM's on
the anchors' card, and cards of one model differ by several per cent under the power cap.
Bench files of the anchors' own fp8gemm build, run on another card under the anchors'
condition and read with --column fp8gemm, say form by form how fast that card runs the same
kernels as the anchors' card did (1.0: as fast); the same for today's build says how far it
has moved from the anchors' build on that card. Build the anchors' build in a worktree
(`git worktree add DIR <commit>`, then its `fp8gemm_cli` target) and run both builds in
alternating processes (tools/ab-bench.sh takes each build's own CLI from its directory).

Rows whose shape the anchors do not list are left out. Files not of the anchors' condition
(flush, pause, kernel time) or grouped rows of another problem size than the reference run's
are named under "note:" (older builds time calls by events and draw the grouped sizes: their
ratios are then within a few per cent, not exact). Exit status: 0, or 2 for unreadable input
or when no row matches the anchors.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from acceptance import (InputError, geomean, key_of, label, load_rows)  # noqa: E402

FORMS = [("dense", "dense"), ("wgrad", "weight gradient"), ("grouped_contiguous", "contiguous"),
         ("grouped_masked", "masked"), ("k_grouped", "k-grouped")]


def anchor_tflops(entry, column):
    """The TFLOPS of `column` on the anchors' card: DeepGEMM's TFLOPS x time is the problem's
    work, the same for every library."""
    us = entry.get(f"{column}_us")
    if not us or "deepgemm_tflops" not in entry or "deepgemm_us" not in entry:
        return None
    return entry["deepgemm_tflops"] * entry["deepgemm_us"] / us


def row_ratio(r, entry, column):
    if column == "cublaslt":
        ours = r.get("cublaslt_us")
        return entry["cublaslt_us"] / ours if ours and entry.get("cublaslt_us") else None
    theirs = anchor_tflops(entry, column)
    return r["tflops"] / theirs if theirs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", metavar="JSON", help="fp8gemm bench --json output")
    ap.add_argument("--anchors", default="docs/reference/anchors-h200.json")
    ap.add_argument("--column", choices=["fp8gemm", "deepgemm", "cublaslt"], default="fp8gemm")
    args = ap.parse_args()
    try:
        with open(args.anchors) as f:
            anchors = json.load(f)
        notes = []
        rows = load_rows(args.files, anchors, notes)
    except (OSError, ValueError) as e:
        print(f"anchor_ratio.py: {args.anchors}: {e}", file=sys.stderr)
        return 2
    except InputError as e:
        print(f"anchor_ratio.py: {e}", file=sys.stderr)
        return 2
    print(f"rows' TFLOPS / the anchors' {args.column} TFLOPS ({anchors.get('card', '?')}; "
          f"the time's inverse for cuBLASLt), per form: geometric mean (rows), lowest, highest")
    matched = 0
    for kind, name in FORMS:
        table = anchors.get(kind, {})
        found = {}
        for r in rows:
            if r["kind"] == kind and key_of(r) in table:
                ratio = row_ratio(r, table[key_of(r)], args.column)
                if ratio is not None:
                    found.setdefault(key_of(r), []).append((label(r), ratio))
        if not found:
            continue
        per_row = [(items[0][0], geomean([v for _, v in items])) for key in table if (items := found.get(key))]
        ratios = [v for _, v in per_row]
        matched += len(per_row)
        print(f"{name}: {geomean(ratios):.3f} ({len(ratios)} rows), lowest {min(ratios):.3f}, highest {max(ratios):.3f}")
        for text, v in per_row:
            print(f"   {text}: {v:.3f}")
    for n in notes:
        print(f"note: {n}")
    if matched == 0:
        print(f"anchor_ratio.py: no row of {', '.join(args.files)} has a {args.column} figure in {args.anchors}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
