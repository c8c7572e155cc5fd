"""Host time per call of fp8gemm's GEMM from Python, with the GPU kept busy so that only the
enqueue counts: a torch.cuda._sleep kernel long enough to outlast the timed loop, then N calls
timed with time.perf_counter; the median over several repetitions (the paths taking turns
within each), in microseconds.

    python3 python/benchmarks/call_overhead.py [--calls 200] [--repeats 15] [--json FILE]

Paths timed (warm: kernels compiled and loaded before):
  fast path      fp8gemm.gemm_fp8_nt(a, sa, b, sb, out)           (read in C, _native.c)
  python path    fp8gemm.gemm_fp8_nt(a, sa, b, sb)                (allocates out with torch)
  custom op out  torch.ops.fp8gemm.gemm_fp8_nt_out(a, sa, b, sb, out)
  custom op      torch.ops.fp8gemm.gemm_fp8_nt(a, sa, b, sb)      (allocates out)
  torch._scaled_mm with 1x128 / 128x128 scales, for comparison (where this torch has it)
With --breakdown, also the parts of the fast path timed alone: reading the five tensors'
attributes from Python (what _native.c reads in C: dtype, shape, stride(), data_ptr(),
get_device()), the current stream, and the library's C API call on precomputed integers.
Needs torch with CUDA and an sm_90 GPU.
"""

import argparse
import json
import statistics
import sys
import time

import torch

import fp8gemm
import fp8gemm.ops  # noqa: F401  (torch.ops.fp8gemm)


def host_us(paths, calls, repeats):
    """{name: (median, min)} microseconds per call of each path; the paths take turns within
    each repetition, so that all see the same state of the machine."""
    for fn in paths.values():
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    samples = {name: [] for name in paths}
    for _ in range(repeats):
        for name, fn in paths.items():
            torch.cuda._sleep(100_000_000)  # ~50 ms of GPU time: every call below only enqueues
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            t1 = time.perf_counter()
            samples[name].append((t1 - t0) / calls * 1e6)
            torch.cuda.synchronize()
    return {name: (statistics.median(v), min(v)) for name, v in samples.items()}


def scaled_mm_call(qa, sa, qb, sb, out_dtype):
    """torch._scaled_mm with blockwise scales, or None if this torch does not take them."""
    a_scale = sa.contiguous().t().contiguous().t()  # [M, K/128], M-major (outer-dim major)
    b_scale = sb.t().contiguous().t()  # [K/128, N/128] with the layout _scaled_mm wants
    b = qb.t()

    def call():
        return torch._scaled_mm(qa, b, scale_a=a_scale, scale_b=b_scale.t(), out_dtype=out_dtype)

    try:
        call()
        torch.cuda.synchronize()
        return call
    except Exception as e:  # noqa: BLE001  (any refusal: report it and time the rest)
        print(f"torch._scaled_mm with block scales not timed: {type(e).__name__}: {str(e)[:120]}",
              file=sys.stderr)
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--breakdown", action="store_true", help="also time the fast path's parts")
    args = parser.parse_args()
    torch.manual_seed(0)
    rows = []
    for m, n, k in ((1, 2112, 7168), (128, 7168, 2048), (4096, 7168, 2048)):
        qa, sa = fp8gemm.quantize_per_token(torch.randn(m, k, device="cuda", dtype=torch.bfloat16))
        qb, sb = fp8gemm.quantize_per_block(torch.randn(n, k, device="cuda", dtype=torch.bfloat16))
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        paths = {
            "fast path": lambda: fp8gemm.gemm_fp8_nt(qa, sa, qb, sb, out),
            "python path": lambda: fp8gemm.gemm_fp8_nt(qa, sa, qb, sb),
            "custom op out": lambda: torch.ops.fp8gemm.gemm_fp8_nt_out(qa, sa, qb, sb, out),
            "custom op": lambda: torch.ops.fp8gemm.gemm_fp8_nt(qa, sa, qb, sb),
        }
        if args.breakdown:
            from fp8gemm import _native, _ops
            from fp8gemm._operands import Operands
            from fp8gemm._tensors import BF16
            ops = Operands("gemm_fp8_nt", None, qa)
            fields = _ops._gemm_operands(ops, qa, sa, qb, sb) + ops.matrix("out", out, BF16)
            stream, tensors = ops.stream, (qa, sa, qb, sb, out)

            def read_attributes():
                for t in tensors:
                    t.dtype, t.shape, t.stride(), t.data_ptr(), t.get_device()

            raw_stream = torch._C._cuda_getCurrentRawStream
            paths["part: tensor attributes"] = read_attributes
            paths["part: current stream"] = lambda: raw_stream(0)
            paths["part: library call"] = lambda: _native.gemm_fp8_nt_fields(*fields, 0, 0, *_ops._NO_CONFIG, stream)
        scaled = scaled_mm_call(qa, sa, qb, sb, torch.bfloat16)
        if scaled is not None:
            paths["torch._scaled_mm"] = scaled
        for name, (median, best) in host_us(paths, args.calls, args.repeats).items():
            rows.append({"m": m, "n": n, "k": k, "path": name, "median_us": median, "min_us": best})
            print(f"{m:5d} x {n:5d} x {k:5d}  {name:24s} {median:7.2f} us per call (min {best:.2f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "fp8gemm": fp8gemm.__version__, "calls": args.calls, "repeats": args.repeats,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
