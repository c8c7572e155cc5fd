"""The weight gradient's fp32 accuracy against an fp64 reference, next to cuBLASLt's.

Random normal operands quantized per token (1x128 along K, scale amax / 448) on the GPU; the
reference is the fp64 product of the dequantized operands. Prints the relative Frobenius error
of fp8gemm.gemm_fp8_nt_wgrad (fp32 out), of torch._scaled_mm with 1x128 scales on both
operands and fp32 out (cuBLASLt), and of an fp32 torch.matmul of the dequantized operands.

    python3 python/benchmarks/wgrad_accuracy.py
"""
import torch

import fp8gemm


def quantize_per_token(x):
    """x [R, K] fp32 -> e4m3 [R, K] and scales [R, K / 128] (K a multiple of 128)."""
    r, k = x.shape
    groups = x.view(r, k // 128, 128)
    s = groups.abs().amax(-1).clamp(min=1e-4) / 448.0
    return (groups / s[..., None]).to(torch.float8_e4m3fn).view(r, k), s


def m_major(s):
    """Per-token scales [R, K / 128] in the library's layout: M-major, columns 4-row aligned."""
    rows, blocks = s.shape
    out = torch.empty((blocks, (rows + 3) // 4 * 4), device=s.device).t()[:rows]
    out.copy_(s)
    return out


def main():
    torch.manual_seed(0)
    for m, n, k in [(2112, 4096, 7168), (576, 4096, 7168), (1024, 1024, 4096)]:
        qa, sa = quantize_per_token(torch.randn(m, k, device="cuda"))
        qb, sb = quantize_per_token(torch.randn(n, k, device="cuda"))
        da = (qa.float().view(m, k // 128, 128) * sa[..., None]).view(m, k)
        db = (qb.float().view(n, k // 128, 128) * sb[..., None]).view(n, k)
        ref = da.double() @ db.double().t()

        def rel(x):
            return ((x.double() - ref).norm() / ref.norm()).item()

        out = torch.empty(m, n, device="cuda", dtype=torch.float32)
        fp8gemm.gemm_fp8_nt_wgrad(qa, m_major(sa), qb, m_major(sb), out)
        # cuBLASLt's 1x128 x 1x128 recipe: scale_a (M, K/128) M-major, scale_b (K/128, N).
        theirs = torch._scaled_mm(qa, qb.t(), scale_a=sa.t().contiguous().t(), scale_b=sb.t().contiguous(),
                                  out_dtype=torch.float32)
        torch.cuda.synchronize()
        print(f"{m} x {n} x {k}: fp8gemm {rel(out):.5e}  cuBLASLt (_scaled_mm) {rel(theirs):.5e}  "
              f"fp32 matmul {rel(da @ db.t()):.1e}")


if __name__ == "__main__":
    main()
