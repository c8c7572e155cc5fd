#!/usr/bin/env python3
"""The performance bars of docs/PERFORMANCE.md checked on `fp8gemm bench --json` output.

Usage:
  tools/acceptance.py --round r1/*.json --round r2/*.json [--before b/*.json]
                      [--anchors docs/reference/anchors-h200.json] [--tolerance 0.01]

Each --round gives the bench files of one run (any mix of dense, --wgrad and --grouped
output; rows are told apart by their kind and shape). The bench condition is the anchors'
one: `bench --isolated --flush-mb 7630 --pause-ms 0 --kernel-time`, cuBLASLt in the same run
for the dense rows. Against the same-run reference figures of fp8gemm, DeepGEMM and cuBLASLt
(docs/reference/anchors-h200.json), each bar is checked in every round:

  1. dense M = 4096 (the 7 DeepSeek-V3 shapes): the geometric mean of cuBLASLt's time over
     ours, in the same run, >= 1.22; on every shape at least DeepGEMM's ratio in the anchors.
  2. contiguous, masked 6 x 1024, k-grouped and weight gradient: TFLOPS / DeepGEMM's TFLOPS of
     the anchors, geometric mean per form >= 1.03, no shape below 0.98.
  3. no regression (needs --before, the same bench files of the build before): dense M <= 128
     and the small masked sets (32 x 192, 32 x 20, 6 x 20). Per set the geometric mean of
     after / before of the same-run ratio to cuBLASLt (TFLOPS where a row has no cuBLASLt
     time) is at least 1 - tolerance.

Every file of the rounds must come from the anchors' card ("card", a substring of the bench file's
"device") and condition ("condition": isolated calls, the flush, the pause, kernel time, no
b_constant promise), with the library's own kernel choice (no --config), and its grouped rows
must be the reference run's problems (their rows, or the k-grouped K columns, add up to the
reference run's total within 1 %: its TFLOPS x time / 2 N K; the shipped shape sets list those
sizes). Files that do not are named under "condition:"; their ratios are still printed, for
the record, but bars 1 and 2 cannot hold on them. Bar 3 instead needs the --before files
measured as the rounds are (same card and condition) on the same problems. Bench files older than the "condition" field are
read from their "method" text.

A "card:" line says how fast the card ran cuBLASLt's dense M = 4096 rows against the anchors'
card (their times over this round's), for reading the bars that compare with DeepGEMM's TFLOPS
measured there; no bar uses it.

A bar with no rows in some round is "not measured". Exit status: 0 when every bar is measured
and holds in every round on files of the anchors' card and condition, 1 otherwise, 2 for
unreadable input.
"""
import argparse
import json
import math
import re
import sys

DENSE_BAR = 1.22
GROUPED_MEAN_BAR = 1.03
GROUPED_FLOOR = 0.98
FORMS = [("grouped_contiguous", "contiguous"), ("grouped_masked", "masked 6 x 1024"), ("k_grouped", "k-grouped"),
         ("wgrad", "weight gradient")]


class InputError(Exception):
    pass


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def file_condition(doc):
    """A bench file's timing condition: its "condition" field, or (older files) what its
    "method" text says."""
    cond = doc.get("condition")
    if isinstance(cond, dict):
        return cond
    method = str(doc.get("method", ""))
    found = re.search(r"each after a (\d+) MB memset .*? followed by a (\d+) ms pause", method)
    return {"isolated": method.startswith("median time of isolated calls"),
            "flush_mb": int(found.group(1)) if found else None,
            "pause_ms": int(found.group(2)) if found else None,
            "kernel_time": "summed durations of the call's kernels" in method,
            "b_constant": "GemmOptions::b_constant" in method, "configs": []}


def condition_problems(path, doc, anchors):
    """Why a bench file's rows cannot count for the bars (empty when they can)."""
    problems = []
    card = anchors.get("card")
    device = str(doc.get("device", "unknown"))
    if card and card not in device:
        problems.append(f"measured on {device}, not on the anchors' card ({card})")
    want = anchors.get("condition", {})
    cond = file_condition(doc)
    for key, value in want.items():
        if cond.get(key) != value:
            problems.append(f"{key} {cond.get(key)}, the anchors' {value}")
    if cond.get("configs"):
        problems.append("timed with --config " + ", ".join(map(str, cond["configs"])) +
                        ", not the library's choice")
    return [f"{path}: {p}" for p in problems]


def load_rows(paths, anchors, problems):
    rows = []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            raise InputError(f"{path}: not a readable bench JSON file ({e})")
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise InputError(f"{path}: no \"rows\" list: write it with `fp8gemm bench --json FILE`")
        cond = file_condition(doc)
        measured = (str(doc.get("device", "unknown")),
                    tuple((key, str(cond.get(key))) for key in ("isolated", "flush_mb", "pause_ms", "kernel_time",
                                                                "b_constant", "configs")))
        for r in doc["rows"]:
            if not isinstance(r, dict) or not all(k in r for k in ("kind", "m", "n", "k", "us", "tflops")):
                raise InputError(f"{path}: a row without kind, m, n, k, us and tflops")
            rows.append(dict(r, _measured=measured, _path=path))
        problems += condition_problems(path, doc, anchors)
        problems += size_problems(path, doc["rows"], anchors)
    return rows


def reference_work(r, entry):
    """The rows (m-grouped) or K columns (k-grouped) of the reference run's problem for this
    row's shape: its TFLOPS x time / (2 N K) or / (2 M N)."""
    flops = entry["deepgemm_tflops"] * 1e12 * entry["deepgemm_us"] * 1e-6
    if r["kind"] == "k_grouped":
        return flops / (2.0 * r["m"] * r["n"])
    return flops / (2.0 * r["n"] * r["k"])


def size_problems(path, rows, anchors):
    """Grouped rows whose problem is not the reference run's: their experts' rows (the
    groups' K) add up to another total, so the TFLOPS of another problem (another count of
    tiles and waves) would be compared. The shipped shape sets list the reference sizes."""
    problems = []
    for r in rows:
        kind = r["kind"]
        entry = anchors.get(kind, {}).get(key_of(r)) if kind in ("grouped_contiguous", "grouped_masked", "k_grouped") else None
        if not entry or "deepgemm_tflops" not in entry or "deepgemm_us" not in entry:
            continue
        sizes = r.get("group_sizes")
        ours = (sum(sizes) if isinstance(sizes, list) and sizes else r["k"]) if kind == "k_grouped" else r["m"]
        theirs = reference_work(r, entry)
        if abs(ours / theirs - 1.0) > 0.01:
            what = "K columns" if kind == "k_grouped" else "rows"
            problems.append(f"{path}: {kind} {label(r)}: {ours} {what}, the reference run's {theirs:.0f} "
                            "(TFLOPS of another problem size)")
    return problems


def key_of(r):
    """The anchors' key of a bench row (None for shapes the anchors do not list)."""
    kind = r["kind"]
    if kind in ("dense", "wgrad"):
        return f'{r["m"]}x{r["n"]}x{r["k"]}'
    if kind in ("grouped_contiguous", "grouped_masked"):
        return f'{r.get("groups")}x{r.get("expected_m")} {r["n"]}x{r["k"]}'
    if kind == "k_grouped":
        return f'{r.get("groups")}x{r["m"]}x{r["n"]}x{r.get("expected_m")}'
    return None


def label(r):
    kind = r["kind"]
    if kind in ("grouped_contiguous", "grouped_masked"):
        return f'{r.get("groups")} x {r.get("expected_m")}, {r["n"]}x{r["k"]}'
    if kind == "k_grouped":
        return f'{r.get("groups")} x {r["m"]}x{r["n"]}, K {r.get("expected_m")}'
    return f'{r["m"]}x{r["n"]}x{r["k"]}'


def by_key(rows, kind, anchors, pick=lambda r: True):
    """Rows of `kind` the anchors list (the last of duplicates), in the anchors' order."""
    table = anchors.get(kind, {})
    found = {}
    for r in rows:
        if r["kind"] == kind and pick(r) and key_of(r) in table:
            found[key_of(r)] = r
    return [(k, found[k]) for k in table if k in found]


def fmt_rounds(values, digits=3):
    return " / ".join(f"{v:.{digits}f}" for v in values)


def dense_bar(rounds, anchors):
    """Bar 1. Returns (measured, held, lines)."""
    lines = []
    means, held = [], True
    shapes = {}
    for rows in rounds:
        got = by_key(rows, "dense", anchors, lambda r: r["m"] == 4096 and r.get("cublaslt_us", 0) > 0)
        if not got:
            return False, False, ["1. dense M = 4096: not measured (no dense M = 4096 rows with cuBLASLt times)"]
        ratios = []
        for key, r in got:
            ratio = r["cublaslt_us"] / r["us"]
            ref = anchors["dense"][key]
            bar = ref["cublaslt_us"] / ref["deepgemm_us"]
            shapes.setdefault(key, []).append((ratio, bar))
            ratios.append(ratio)
            held &= ratio >= bar
        if len(got) < sum(1 for k in anchors["dense"] if k.startswith("4096x")):
            held = False
            lines.append(f"   (a round has {len(got)} of the anchors' M = 4096 shapes)")
        mean = geomean(ratios)
        means.append(mean)
        held &= mean >= DENSE_BAR
    head = (f"1. dense M = 4096: cuBLASLt / fp8gemm geomean {fmt_rounds(means)} (bar {DENSE_BAR:.2f}; "
            f"DeepGEMM's {geomean([v['cublaslt_us'] / v['deepgemm_us'] for k, v in anchors['dense'].items() if k.startswith('4096x')]):.3f})")
    lines.insert(0, head)
    for key, pairs in shapes.items():
        ok = all(ratio >= bar for ratio, bar in pairs)
        lines.append(f"   {key}: {fmt_rounds([p[0] for p in pairs])} against DeepGEMM's {pairs[0][1]:.3f}"
                     f"{'' if ok else '  (under)'}")
    lines[0] += ": holds" if held else ": does not hold"
    return True, held, lines


def card_speed(rounds, anchors):
    """How fast this card ran cuBLASLt on the dense M = 4096 shapes against the anchors' card
    (their cuBLASLt time over this round's, geometric mean; > 1: faster). The grouped and
    weight-gradient bars compare with DeepGEMM's TFLOPS on the anchors' card, so a card that
    runs everything slower (power, heat) moves them; this line says by how much, for the
    reader only (no bar depends on it)."""
    speeds = []
    for rows in rounds:
        got = by_key(rows, "dense", anchors, lambda r: r["m"] == 4096 and r.get("cublaslt_us", 0) > 0)
        pairs = [(anchors["dense"][k].get("cublaslt_us"), r["cublaslt_us"]) for k, r in got]
        pairs = [(ref, ours) for ref, ours in pairs if ref]
        if not pairs:
            return []
        speeds.append(geomean([ref / ours for ref, ours in pairs]))
    return [f"card: cuBLASLt on the dense M = 4096 shapes ran {fmt_rounds(speeds)}x as fast as on the anchors' "
            "card (their time / this round's; for reading the bars against DeepGEMM's TFLOPS, no bar uses it)"]


def grouped_bar(rounds, anchors, kind, name):
    """Bar 2 for one form."""
    pick = (lambda r: r.get("groups") == 6 and r.get("expected_m") == 1024) if kind == "grouped_masked" else (
        lambda r: True)
    expected = [k for k in anchors.get(kind, {}) if kind != "grouped_masked" or k.startswith("6x1024 ")]
    means, lows, held = [], [], True
    shapes = {}
    for rows in rounds:
        got = by_key(rows, kind, anchors, pick)
        if not got:
            return False, False, [f"2. {name}: not measured (no rows of the anchors' {name} shapes)"]
        ratios = []
        for key, r in got:
            ratio = r["tflops"] / anchors[kind][key]["deepgemm_tflops"]
            shapes.setdefault(key, (label(r), []))[1].append(ratio)
            ratios.append(ratio)
        held &= len(got) == len(expected)
        means.append(geomean(ratios))
        lows.append(min(ratios))
        held &= means[-1] >= GROUPED_MEAN_BAR and lows[-1] >= GROUPED_FLOOR
    lines = [f"2. {name}: fp8gemm / DeepGEMM TFLOPS geomean {fmt_rounds(means)}, lowest {fmt_rounds(lows)} "
             f"(bars {GROUPED_MEAN_BAR:.2f}, {GROUPED_FLOOR:.2f}): {'holds' if held else 'does not hold'}"]
    for key, (text, ratios) in shapes.items():
        low = min(ratios) < GROUPED_FLOOR
        lines.append(f"   {text}: {fmt_rounds(ratios)}{'  (under ' + format(GROUPED_FLOOR, '.2f') + ')' if low else ''}")
    return True, held, lines


def regression_sets(rows):
    """Bar 3's sets: name -> {key: (same-run ratio or TFLOPS, which)}."""
    sets = {}
    for r in rows:
        if r["kind"] == "dense" and r["m"] <= 128:
            name = f'dense M = {r["m"]}'
        elif r["kind"] == "grouped_masked" and (r.get("groups"), r.get("expected_m")) != (6, 1024):
            name = f'masked {r.get("groups")} x {r.get("expected_m")}'
        else:
            continue
        cublas = r.get("cublaslt_us", 0) or 0
        value = (cublas / r["us"], "cuBLASLt / fp8gemm") if cublas > 0 else (r["tflops"], "TFLOPS")
        sets.setdefault(name, {})[key_of(r)] = value
    return sets


def regression_bar(rounds, before_rows, tolerance, anchors):
    if before_rows is None:
        return False, False, ["3. no regression (M <= 128, small masked sets): not measured (give --before)"]
    before = regression_sets(before_rows)
    # The sets the anchors list: dense M = 1 and 128, the masked sets other than 6 x 1024.
    wanted = {f"dense M = {k.split('x')[0]}" for k in anchors.get("dense", {}) if int(k.split("x")[0]) <= 128}
    wanted |= {f"masked {k.split(' ')[0].replace('x', ' x ')}" for k in anchors.get("grouped_masked", {})
               if not k.startswith("6x1024 ")}
    missing = sorted(wanted - set(before))
    if missing:
        return False, False, ["3. no regression: not measured (--before has no rows of " + ", ".join(missing) + ")"]
    lines, held = [], True
    # Before and after must be measured alike (card, condition) and be the same problems (a
    # grouped row's rows); the anchors' condition does not enter this bar.
    def in_bar(r):
        return (r["kind"] == "dense" and r["m"] <= 128) or (
            r["kind"] == "grouped_masked" and (r.get("groups"), r.get("expected_m")) != (6, 1024))

    mismatch = []
    before_rows_of = {(r["kind"], key_of(r)): r for r in before_rows if in_bar(r)}
    for rows in rounds:
        for r in filter(in_bar, rows):
            b = before_rows_of.get((r["kind"], key_of(r)))
            if b is None:
                continue
            if b["_measured"] != r["_measured"]:
                text = f"{r['_path']} and {b['_path']} were not measured alike (card or condition)"
                if text not in mismatch:
                    mismatch.append(text)
            elif r["kind"] == "grouped_masked" and b["m"] != r["m"]:
                mismatch.append(f"masked {label(r)}: {r['m']} rows after, {b['m']} before (other problems)")
    if mismatch:
        held = False
        lines += ["   " + m for m in mismatch[:8]] + ([f"   (and {len(mismatch) - 8} more)"] if len(mismatch) > 8 else [])
    per_set = {}
    for rows in rounds:
        after = regression_sets(rows)
        for name, b in before.items():
            a = after.get(name, {})
            ratios = []
            for key, (bv, which) in b.items():
                if key in a and a[key][1] == which:
                    ratios.append(a[key][0] / bv)
            per_set.setdefault(name, []).append((geomean(ratios) if ratios else None, len(ratios), len(b), which))
    for name, results in per_set.items():
        which = results[0][3]
        ok = all(g is not None and n == total and g >= 1 - tolerance for g, n, total, _ in results)
        held &= ok
        shown = " / ".join("none" if g is None else f"{g:.3f}" for g, _, _, _ in results)
        counts = " / ".join(f"{n} of {total}" for _, n, total, _ in results)
        lines.append(f"   {name}: after / before of {which}, geomean {shown} ({counts} rows){'' if ok else '  (regressed)'}")
    lines.insert(0, f"3. no regression (M <= 128, small masked sets; tolerance {tolerance:.0%}): "
                    f"{'holds' if held else 'does not hold'}")
    return True, held, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--round", action="append", nargs="+", required=True, metavar="JSON",
                    help="the bench files of one run (repeat for each run)")
    ap.add_argument("--before", nargs="+", metavar="JSON", help="the build before: M <= 128 and small masked rows")
    ap.add_argument("--anchors", default="docs/reference/anchors-h200.json")
    ap.add_argument("--tolerance", type=float, default=0.01, help="no-regression tolerance (default 0.01)")
    a = ap.parse_args()
    try:
        try:
            with open(a.anchors) as f:
                anchors = json.load(f)
        except (OSError, ValueError) as e:
            raise InputError(f"{a.anchors}: not a readable anchors file ({e})")
        problems = []
        rounds = [load_rows(paths, anchors, problems) for paths in a.round]
        before = load_rows(a.before, anchors, []) if a.before else None  # (bar 3 checks them itself)
    except InputError as e:
        print(f"acceptance: {e}", file=sys.stderr)
        return 2
    if not 0 <= a.tolerance < 1:
        print("acceptance: --tolerance is a fraction in [0, 1)", file=sys.stderr)
        return 2
    results = [dense_bar(rounds, anchors)]
    results += [grouped_bar(rounds, anchors, kind, name) for kind, name in FORMS]
    results.append(regression_bar(rounds, before, a.tolerance, anchors))
    print(f"{len(rounds)} round(s); ratios per round, separated by /")
    if problems:
        print("condition: files off the anchors' card or condition, so no bar can hold on them "
              "(ratios below for the record only):")
        print("\n".join("   " + p for p in problems))
    for line in card_speed(rounds, anchors):
        print(line)
    for _, _, lines in results:
        print("\n".join(lines))
    measured = sum(1 for m, _, _ in results if m)
    # Bars 1 and 2 compare with the anchors: they hold only on files of the anchors' card,
    # condition and problem sizes. Bar 3 compares before with after (checked by the bar).
    held = sum(1 for i, (m, h, _) in enumerate(results) if m and h and (i == len(results) - 1 or not problems))
    print(f"bars measured {measured} of {len(results)}, holding {held}"
          f"{' (bars 1 and 2 off the anchors condition)' if problems else ''}")
    return 0 if held == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
