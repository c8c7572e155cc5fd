"""GPU tests of the fp8gemm package: need torch with CUDA and an sm_90 device; skipped
otherwise. Each compares the package's results with a torch reference."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fp8gemm  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def _why_skipped():
    if torch is None:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device visible to torch"
    if torch.cuda.get_device_capability(0) != (9, 0):
        return "the device is not sm_90"
    return None


SKIP = _why_skipped()


def expand_scales(scales, rows, cols, block_rows):
    """Scales of shape [ceil(rows/block_rows), ceil(cols/128)] (or [rows, ...] for
    block_rows 1) spread over every element of a [rows, cols] matrix."""
    s = scales.float()
    if block_rows > 1:
        s = s.repeat_interleave(block_rows, dim=0)
    return s.repeat_interleave(128, dim=1)[:rows, :cols]


def reference_quantize_per_token(x):
    """The library's documented rule, per row and 128 columns, in fp32."""
    m, k = x.shape
    blocks = (k + 127) // 128
    xp = torch.zeros(m, blocks * 128, dtype=torch.float32, device=x.device)
    xp[:, :k] = x.float()
    groups = xp.view(m, blocks, 128)
    amax = groups.abs().amax(dim=2).clamp(min=1e-4)
    q = (groups * (448.0 / amax).unsqueeze(2)).view(m, -1)[:, :k].to(torch.float8_e4m3fn)
    return q, amax / 448.0


class DLPackView:
    """Exposes a torch tensor through DLPack only (tests the capsule path on real memory)."""

    def __init__(self, t):
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)


@unittest.skipIf(SKIP is not None, SKIP or "")
class GpuTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def test_dense_gemm_matches_a_dequantized_reference(self):
        for m, n, k in ((256, 512, 1024), (1, 2112, 7168), (100, 256, 384)):
            with self.subTest(m=m, n=n, k=k):
                x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
                qa, sa = fp8gemm.quantize_per_token(x)
                qb, sb = fp8gemm.quantize_per_block(w)
                self.assertEqual(tuple(sa.stride()), (1, fp8gemm.per_token_scale_stride(m)))
                out = fp8gemm.gemm_fp8_nt(qa, sa, qb, sb)
                self.assertEqual((out.dtype, tuple(out.shape)), (torch.bfloat16, (m, n)))
                a = qa.float() * expand_scales(sa, m, k, 1)
                b = qb.float() * expand_scales(sb, n, k, 128)
                ref = a @ b.t()
                rel = ((out.float() - ref).norm() / ref.norm()).item()
                self.assertLess(rel, 1e-2)

    def test_quantize_per_token_bytes(self):
        m, k = 300, 1000
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16) * 3
        q, s = fp8gemm.quantize_per_token(x)
        ref_q, ref_s = reference_quantize_per_token(x)
        torch.testing.assert_close(s, ref_s, rtol=1e-6, atol=0)
        got, want = q.view(torch.uint8).int(), ref_q.view(torch.uint8).int()
        mismatched = (got != want).sum().item()
        # The same fp32 products give the same bytes; allow a rare one-step difference
        # where the reference's 448 / amax rounds differently.
        self.assertLessEqual(mismatched, m * k // 10000)
        self.assertLessEqual((got - want).abs().max().item(), 1)

    def test_stream_and_dlpack_operands(self):
        m, n, k = 128, 256, 512
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        qa, sa = fp8gemm.quantize_per_token(x)
        qb, sb = fp8gemm.quantize_per_block(w)
        expected = fp8gemm.gemm_fp8_nt(qa, sa, qb, sb)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # stream=None: the current torch stream
            out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            fp8gemm.gemm_fp8_nt(DLPackView(qa.view(torch.uint8)), sa, qb, sb, out)
        side.synchronize()
        self.assertTrue(torch.equal(out, expected))


if __name__ == "__main__":
    unittest.main()
