#!/usr/bin/env python3
"""Summarizes an Nsight Compute per-instruction export of one kernel:

  ncu --clock-control none --section SourceCounters --section WarpStateStats -o prof <app>
  ncu -i prof.ncu-rep --page source --print-source sass --csv > sass.csv
  tools/ncu_stalls.py sass.csv [executions-per-iteration]

Prints the stall reasons over all warp samples, the instructions with the most samples,
where the samples of the wgmma loop fall (the instructions executed as often as the most
executed wgmma, in address order, cut at each wgmma, wgmma wait and barrier try-wait: a
warp that waits between a K block's wgmma instructions delays their issue), how often each
barrier's try-wait had to be retried (ptxas places the retry loops after the kernel's last
EXIT: a try-wait there runs once per retry, one before it once per wait; a barrier whose
waits nearly all retry is one its warps arrive at before it completes), and, given how many
times the main loop body executes (e.g. tiles x K blocks x warps), the instruction mix of
the loop body.
"""
import collections
import csv
import re
import sys


def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0


BRANCH = re.compile(r"\bBRA(?:\.\S+)*\s+(0x[0-9a-fA-F]+)")
WGMMA = re.compile(r"\b[A-Z]?GMMA\.")
CUTS = re.compile(r"\b[A-Z]?GMMA\.|WARPGROUP\.DEPBAR|TRYWAIT")
TRYWAIT_OPERANDS = re.compile(r"TRYWAIT\s+\S+,\s*(.*)$")


def address(text):
    try:
        return int(text.strip(), 16)
    except ValueError:
        return None


def main(path, per_iteration=None):
    rows = list(csv.reader(open(path)))
    header_at = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
    hdr, data = rows[header_at], rows[header_at + 1:]
    col = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    total = sum(num(r[col["Warp Stall Sampling (All Samples)"]]) for r in data) or 1.0
    sums = {s: sum(num(r[col[s]]) for r in data) for s in stalls}
    print("stall reasons (share of all warp samples):")
    for s, v in sorted(sums.items(), key=lambda x: -x[1])[:8]:
        print(f"  {s:26s} {100 * v / total:5.1f}%")
    print("instructions with the most samples (address; a branch also shows the instruction it")
    print("goes to, e.g. the try-wait of a barrier loop with the barrier's shared address):")
    by_address = {address(r[col["Address"]]): r for r in data if address(r[col["Address"]]) is not None}
    top = sorted(data, key=lambda r: -num(r[col["Warp Stall Sampling (All Samples)"]]))[:10]
    for r in top:
        reasons = sorted(((num(r[col[s]]), s) for s in stalls), reverse=True)[:2]
        print(f"  {100 * num(r[col['Warp Stall Sampling (All Samples)']]) / total:5.1f}%  "
              f"{r[col['Address']]:>16s}  {r[col['Source']][:60]:60s} {', '.join(x[1][6:] for x in reasons)}")
        target = BRANCH.search(r[col["Source"]])
        if target and address(target.group(1)) in by_address:
            print(f"{'':25s}-> {by_address[address(target.group(1))][col['Source']][:80]}")
    wgmma_rows = [r for r in data if WGMMA.search(r[col["Source"]])]
    if wgmma_rows:
        rate = max(num(r[col["Instructions Executed"]]) for r in wgmma_rows)
        loop = [r for r in data if address(r[col["Address"]]) is not None
                and abs(num(r[col["Instructions Executed"]]) - rate) <= 0.1 * rate]
        loop.sort(key=lambda r: address(r[col["Address"]]))
        share = sum(num(r[col["Warp Stall Sampling (All Samples)"]]) for r in loop)
        print(f"wgmma loop: {len(loop)} instructions executed as often as the busiest wgmma "
              f"({rate:.0f}), {100 * share / total:.1f}% of the samples; by segment (cut after each")
        print("wgmma, wgmma wait and try-wait; the segment's first instruction):")
        segment = []
        for r in loop + [None]:
            if r is not None:
                segment.append(r)
            if segment and (r is None or CUTS.search(r[col["Source"]])):
                samples = sum(num(x[col["Warp Stall Sampling (All Samples)"]]) for x in segment)
                print(f"  {len(segment):4d} instructions {100 * samples / total:5.1f}%  "
                      f"{segment[0][col['Source']].strip()[:60]}")
                segment = []
    exits = [a for a, r in by_address.items() if re.search(r"\bEXIT\b", r[col["Source"]])]
    waits = [(a, TRYWAIT_OPERANDS.search(r[col["Source"]]), r) for a, r in by_address.items()]
    waits = [(a, m.group(1).strip(), r) for a, m, r in waits if m]
    if exits and waits:
        last_exit = max(exits)
        first, retry = collections.Counter(), collections.Counter()
        for a, key, r in waits:
            (retry if a > last_exit else first)[key] += num(r[col["Instructions Executed"]])
        tries, retries = sum(first.values()), sum(retry.values())
        print(f"barrier waits: {tries:.0f} first tries, {retries:.0f} retries "
              f"({100 * retries / (tries or 1):.1f} %); the barriers retried most (operands: first tries, retries):")
        for key, n in retry.most_common(6):
            print(f"  {key[:40]:40s} {first[key]:10.0f} {n:10.0f}")
    if per_iteration:
        ops = collections.Counter()
        for r in data:
            if abs(num(r[col["Instructions Executed"]]) - per_iteration) <= 0.03 * per_iteration:
                words = r[col["Source"]].split()
                op = words[1] if words and words[0].startswith("@") else (words[0] if words else "?")
                ops[op.split(".")[0]] += 1
        print(f"loop body: {sum(ops.values())} instructions per warp per iteration:",
              ", ".join(f"{k} {v}" for k, v in ops.most_common(12)))


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) == 3 else None)
