#!/usr/bin/env python3
"""Per-shape medians of a tools/ab-bench.sh run: one table per shape set, a column per build.

Usage: tools/ab_summary.py [--base NAME] [--by-kernel] OUT_DIR [OUT_DIR ...]

Reads every OUT_DIR/<set>-<build>-<round>.json that ab-bench.sh wrote (several directories
pool their rounds, e.g. two device runs of the same builds). For each shape it prints each
build's median TFLOPS over its rounds (with the number of rounds), and every build after the
first as a ratio of its median to the first build's; the last line of a table is the
geometric mean of those medians and ratios. TFLOPS, not times: grouped shapes draw their row
or column counts per process, so the same row of two processes may have different sizes.
Where one process timed several configs of a shape (`bench --config A --config B`), each
kernel is a row of its own, named after it (a config's name holds no N or K, so the rows of
two builds match).
The first build is the one named first on ab-bench.sh's command line (the order of the
files' first rounds), unless --base NAME says otherwise. (Build names, the variant
directories' base names, must not contain '-': the file names are split at the last two.)
--by-kernel: the columns are the kernels named in the rows instead of the builds, for runs that
compare configs inside one process (`bench --config A --config B`, one JSON per round); the
files' <build> part is then only a label, and --base names a kernel (a config name such as
bm128_bn192_s4_g8_ts).
Each table then gives each build's spread between rounds: per shape (max - min) / median of its
rounds, the median of that over the shapes and the largest with its shape. A ratio smaller than
the spread of the shape's rows is not a measured difference; take more rounds.
Where the rows carry each timed call (`call_us`: bench rows timed without cuBLASLt in
alternation), a line per table gives each build's spread within a process: per shape and
round (p90 - p10) / median of its calls, the median of that over shapes and rounds and the
largest. Set beside the spread between rounds it tells whether a build's rounds differ
because whole processes ran slow (between > within) or because single calls did.
Where the rows carry the SM clock read after their timed calls (`sm_mhz`, `sm_clock_held`),
each table ends with a line per column: the median clock over its rows and rounds and the mean
share of readings with the clock held down (power cap, heat): a hint whether a build met a
throttled card (the readings come after the calls, not from inside the kernels).
"""
import glob
import json
import math
import os
import re
import statistics
import sys


def shape_key(row):
    if row.get("groups"):
        return (row["kind"], row["groups"], row.get("expected_m", 0), row["n"], row.get("k") if row["kind"] != "k_grouped" else 0,
                row["m"] if row["kind"] == "k_grouped" else 0)
    return (row["kind"], row["m"], row["n"], row["k"])


def shape_name(key):
    key, kernel = key
    suffix = f" [{kernel}]" if kernel else ""
    return plain_shape_name(key) + suffix


def plain_shape_name(key):
    if len(key) == 6:
        kind, groups, expected, n, k, m = key
        if kind == "k_grouped":
            return f"{kind} {groups} x {m}x{n}, K {expected}"
        return f"{kind} {groups} x {expected}, {n}x{k}"
    kind, m, n, k = key
    return f"{kind} {m}x{n}x{k}"


def main(argv):
    base = None
    by_kernel = "--by-kernel" in argv
    if by_kernel:
        argv.remove("--by-kernel")
    if "--base" in argv:
        i = argv.index("--base")
        base = argv[i + 1]
        del argv[i:i + 2]
    if not argv:
        sys.stderr.write(__doc__)
        return 2
    pattern = re.compile(r"^(?P<set>.+)-(?P<build>[^-]+)-(?P<round>\d+)\.json$")
    # set -> build -> shape -> [tflops]; builds in the order of their first file's mtime
    data, first_seen = {}, {}
    clocks = {}  # set -> build -> ([sm_mhz], [sm_clock_held])
    within = {}  # set -> build -> shape -> [(p90 - p10) / median of one process's calls]
    for d in argv:
        for path in glob.glob(os.path.join(d, "*.json")):
            m = pattern.match(os.path.basename(path))
            if not m:
                continue
            with open(path) as f:
                rows = [r for r in json.load(f).get("rows", []) if r.get("tflops", 0) > 0 and not r.get("cublas_only")]
            # A process that timed several configs (bench --config A --config B) has a row per
            # kernel for each shape: each kernel is then a row of its own, not pooled.
            per_shape = {}
            for r in rows:
                per_shape[shape_key(r)] = per_shape.get(shape_key(r), 0) + 1
            for i, r in enumerate(rows):
                build = r.get("kernel", "?") if by_kernel else m.group("build")
                # (by kernel: in the order the rows name them)
                seen = i if by_kernel else os.path.getmtime(path)
                first_seen[build] = min(first_seen.get(build, math.inf), seen)
                shapes = data.setdefault(m.group("set"), {}).setdefault(build, {})
                kernel = r.get("kernel", "?") if not by_kernel and per_shape[shape_key(r)] > 1 else None
                shapes.setdefault((shape_key(r), kernel), []).append(r["tflops"])
                calls = sorted(r.get("call_us", []))
                if len(calls) >= 10:
                    def at(q):
                        return calls[min(len(calls) - 1, int(q * (len(calls) - 1) + 0.5))]
                    within.setdefault(m.group("set"), {}).setdefault(build, {}).setdefault(
                        (shape_key(r), kernel), []).append((at(0.9) - at(0.1)) / statistics.median(calls))
                mhz, held = clocks.setdefault(m.group("set"), {}).setdefault(build, ([], []))
                if r.get("sm_mhz", 0) > 0:
                    mhz.append(r["sm_mhz"])
                if r.get("sm_clock_held", -1) >= 0:
                    held.append(r["sm_clock_held"])
    if not data:
        sys.stderr.write("no <set>-<build>-<round>.json files found\n")
        return 1
    for set_name, builds in sorted(data.items()):
        order = sorted(builds, key=lambda b: first_seen[b])
        if base is not None and base in order:
            order.remove(base)
            order.insert(0, base)
        shapes = []
        for b in order:
            for key in builds[b]:
                if key not in shapes:
                    shapes.append(key)
        print(f"\n{set_name}: median TFLOPS (rounds); ratio to {order[0]}")
        head = ["shape"] + [f"{b}" for b in order] + [f"{b} / {order[0]}" for b in order[1:]]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        logs = {b: [] for b in order}
        ratio_logs = {b: [] for b in order[1:]}
        for key in shapes:
            medians = {b: statistics.median(builds[b][key]) for b in order if key in builds[b]}
            cells = [shape_name(key)]
            for b in order:
                cells.append(f"{medians[b]:.1f} ({len(builds[b][key])})" if b in medians else "-")
                if b in medians:
                    logs[b].append(math.log(medians[b]))
            for b in order[1:]:
                if b in medians and order[0] in medians:
                    ratio = medians[b] / medians[order[0]]
                    ratio_logs[b].append(math.log(ratio))
                    cells.append(f"{ratio:.3f}")
                else:
                    cells.append("-")
            print("| " + " | ".join(cells) + " |")
        geo = ["geomean"] + [f"{math.exp(sum(v) / len(v)):.1f}" if v else "-" for v in logs.values()]
        geo += [f"{math.exp(sum(v) / len(v)):.3f}" if v else "-" for v in ratio_logs.values()]
        print("| " + " | ".join(geo) + " |")
        def spread(b, per_row, none):
            # "b M % (largest L %: shape)" over (relative spread, shape) pairs, else `none`
            if not per_row:
                return f"{b} {none}"
            worst = max(per_row, key=lambda x: x[0])
            return (f"{b} {100 * statistics.median(x[0] for x in per_row):.1f} % "
                    f"(largest {100 * worst[0]:.1f} %: {shape_name(worst[1])})")

        spreads = [spread(b, [((max(v) - min(v)) / statistics.median(v), key) for key, v in builds[b].items()
                              if len(v) > 1], "- (one round)") for b in order]
        print("spread between rounds ((max - min) / median per shape; median over shapes, largest): " + "; ".join(spreads))
        if within.get(set_name):
            parts = [spread(b, [(x, key) for key, v in within[set_name].get(b, {}).items() for x in v], "-")
                     for b in order]
            print("spread within a process ((p90 - p10) / median of its calls per shape and round; median, largest): "
                  + "; ".join(parts))
        if any(clocks[set_name][b][0] for b in order):
            parts = []
            for b in order:
                mhz, held = clocks[set_name][b]
                part = f"{b} {statistics.median(mhz):.0f} MHz" if mhz else f"{b} -"
                if held:
                    part += f", held {100 * statistics.mean(held):.0f} %"
                parts.append(part)
            print("clock after the timed calls (median over rows and rounds; mean share held down): " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
