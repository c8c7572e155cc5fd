#!/usr/bin/env python3
"""Turns `fp8gemm bench --json` output into the Markdown table of docs/PERFORMANCE.md.

Usage: tools/bench_table.py bench.json [reference.json]

Dense rows get the table below. Weight-gradient (`bench --wgrad`) and grouped (`bench
--grouped`) rows get one table of their own kinds (G, expected rows or columns per group, M, N,
K as the bench prints them; no floors, no reference column) and a geometric mean per kind.

Floors: FLOPs at the FP8 dense peak (1979 TFLOPS) and bytes (A, B, both scale tensors, D;
each once) at 4.3 TB/s; the larger is the floor. An optional reference file maps
"MxNxK" to a time in microseconds of another library measured elsewhere; it adds a column
with the ratio (>1: fp8gemm is faster).
"""
import json
import math
import sys

PEAK_TFLOPS = 1979.0
BANDWIDTH_GBS = 4300.0


def other_kinds(rows):
    head = ["kind", "G", "expected", "M", "N", "K", "fp8gemm us", "TFLOPS", "cuBLASLt us", "cuBLASLt TFLOPS",
            "vs cuBLASLt", "kernel"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    means = {}
    for r in rows:
        row = [r["kind"], r.get("groups", "-") or "-", r.get("expected_m", "-") or "-", r["m"], r["n"], r["k"],
               f'{r["us"]:.1f}', f'{r["tflops"]:.0f}']
        if r["cublaslt_us"] > 0:
            row += [f'{r["cublaslt_us"]:.1f}', f'{r["cublaslt_tflops"]:.0f}', f'{r["cublaslt_us"] / r["us"]:.2f}x']
            means.setdefault(r["kind"], []).append((r["tflops"], r["cublaslt_tflops"]))
        else:
            row += ["-", "-", "-"]
        row.append(f'`{r["kernel"]}`')
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()
    for kind, pairs in means.items():
        ours = math.exp(sum(math.log(a) for a, _ in pairs) / len(pairs))
        theirs = math.exp(sum(math.log(b) for _, b in pairs) / len(pairs))
        print(f"- {kind}: geometric mean {ours:.1f} TFLOPS vs cuBLASLt {theirs:.1f} (**{ours / theirs:.2f}x**)")


def main(path, ref_path=None):
    data = json.load(open(path))
    ref = json.load(open(ref_path)) if ref_path else {}
    others = [r for r in data["rows"] if r.get("kind", "dense") != "dense"]
    if others:
        other_kinds(others)
        data["rows"] = [r for r in data["rows"] if r.get("kind", "dense") == "dense"]
        if not data["rows"]:
            return
        print()
    head = ["M", "N", "K", "fp8gemm us", "TFLOPS", "GB/s", "floor us", "% of floor",
            "cuBLASLt us", "cuBLASLt TFLOPS", "vs cuBLASLt"]
    if ref:
        head.append("vs reference")
    head.append("kernel")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    logs = {}
    for r in sorted(data["rows"], key=lambda r: (r["m"], r["n"], r["k"])):
        m, n, k = r["m"], r["n"], r["k"]
        flops = 2.0 * m * n * k
        kb, nb = (k + 127) // 128, (n + 127) // 128
        nbytes = m * k + n * k + (m * kb + nb * kb) * 4 + m * n * 2
        floor = max(flops / (PEAK_TFLOPS * 1e6), nbytes / (BANDWIDTH_GBS * 1e3))
        row = [m, n, k, f'{r["us"]:.1f}', f'{r["tflops"]:.0f}', f'{r["gbs"]:.0f}', f"{floor:.1f}",
               f'{100 * floor / r["us"]:.0f}%']
        if r["cublaslt_us"] > 0:
            row += [f'{r["cublaslt_us"]:.1f}', f'{r["cublaslt_tflops"]:.0f}',
                    f'{r["cublaslt_us"] / r["us"]:.2f}x']
            logs.setdefault(m, []).append((r["tflops"], r["cublaslt_tflops"]))
        else:
            row += ["-", "-", "-"]
        if ref:
            t = ref.get(f"{m}x{n}x{k}")
            row.append(f"{t / r['us']:.2f}x" if t else "-")
        row.append(f'`{r["kernel"]}`')
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()
    for m, pairs in sorted(logs.items()):
        ours = math.exp(sum(math.log(a) for a, _ in pairs) / len(pairs))
        theirs = math.exp(sum(math.log(b) for _, b in pairs) / len(pairs))
        print(f"- M = {m}: geometric mean {ours:.1f} TFLOPS vs cuBLASLt {theirs:.1f} (**{ours / theirs:.2f}x**)")


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(*sys.argv[1:])
