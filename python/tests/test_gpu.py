"""GPU tests of the fp8gemm package: need torch with CUDA and an sm_90 device; skipped
otherwise (with the reason). Every operation is compared with a torch reference on the
dequantized inputs (fp64: bf16 outputs to a relative error < 1e-2, fp32 ones < 5e-4, see FP32_TOLERANCE); the
quantizers with the documented rule and the C++ library's bytes through the plain function;
the torch custom operators with the plain functions, under torch.compile(fullgraph=True)
without graph breaks, and in CUDA graphs replayed with new masked_m / group_k values."""

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
if SKIP is None:
    import fp8gemm.ops  # noqa: E402,F401  (registers torch.ops.fp8gemm)


def expand_scales(scales, rows, cols, block_rows):
    """Scales of shape [ceil(rows/block_rows), ceil(cols/128)] (or [rows, ...] for
    block_rows 1) spread over every element of a [rows, cols] matrix."""
    s = scales.double()
    if block_rows > 1:
        s = s.repeat_interleave(block_rows, dim=0)
    return s.repeat_interleave(128, dim=1)[:rows, :cols]


def per_token(q, s):
    """Dequantized [rows, cols] of an operand with 1x128 scales (fp64)."""
    return q.double() * expand_scales(s, q.shape[0], q.shape[1], 1)


def per_block(q, s):
    """Dequantized [rows, cols] of an operand with 128x128 scales (fp64)."""
    return q.double() * expand_scales(s, q.shape[0], q.shape[1], 128)


# fp32 outputs (weight gradients) against the fp64 product of the dequantized operands: the
# tensor cores accumulate each 128-deep K block of e4m3 products at less than fp32 precision
# before the kernel adds it into fp32 (measured ~1.3e-4 here, ~2e-4 in the C++ GPU tests,
# which use the same bound).
FP32_TOLERANCE = 5e-4


def rel_error(got, want):
    return ((got.double() - want).norm() / want.norm().clamp(min=1e-30)).item()


def reference_quantize_per_token(x):
    """The library's documented rule, per row and 128 columns, in fp32."""
    m, k = x.shape
    blocks = (k + 127) // 128
    xp = torch.zeros(m, blocks * 128, dtype=torch.float32, device=x.device)
    xp[:, :k] = x.float()
    groups = xp.view(m, blocks, 128)
    amax = groups.abs().amax(dim=2).clamp(min=1e-4)
    # Tensor / tensor: a true fp32 division (torch computes 448.0 / t as t.reciprocal() * 448,
    # and t / 448.0 as t * (1 / 448), each rounding twice).
    e4m3_max = torch.full_like(amax, 448.0)
    inv, scale = e4m3_max / amax, amax / e4m3_max
    q = (groups * inv.unsqueeze(2)).view(m, -1)[:, :k].to(torch.float8_e4m3fn)
    return q, scale


def bf16(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def stacked_experts(groups, n, k):
    """groups experts' weights quantized per 128x128 block, stacked as the grouped GEMMs read
    them: ([G * N, K] e4m3, [G * ceil(N/128), ceil(K/128)] scales), and each expert's
    dequantized [N, K] (fp64)."""
    w = bf16(groups * n, k)
    q = torch.empty_strided((groups * n, k), ((k + 15) // 16 * 16, 1), dtype=torch.float8_e4m3fn,
                            device="cuda")
    bn, bk = fp8gemm.scale_blocks(n), fp8gemm.scale_blocks(k)
    s = torch.empty(groups * bn, bk, device="cuda", dtype=torch.float32)
    deq = []
    for g in range(groups):
        fp8gemm.quantize_per_block(w[g * n:(g + 1) * n], q[g * n:(g + 1) * n], s[g * bn:(g + 1) * bn])
        deq.append(per_block(q[g * n:(g + 1) * n], s[g * bn:(g + 1) * bn]))
    return q, s, deq


def k_grouped_operands(m, n, ks):
    """A [m, cols] and B [n, cols] (cols: each group's K on a 128-column boundary, the rest
    zero), quantized per token along K."""
    cols = sum(fp8gemm.k_grouped_columns(kk) for kk in ks)
    a = torch.zeros(m, cols, device="cuda", dtype=torch.bfloat16)
    b = torch.zeros(n, cols, device="cuda", dtype=torch.bfloat16)
    start = 0
    for kk in ks:
        a[:, start:start + kk] = bf16(m, kk)
        b[:, start:start + kk] = bf16(n, kk)
        start += fp8gemm.k_grouped_columns(kk)
    qa, sa = fp8gemm.quantize_per_token(a)
    qb, sb = fp8gemm.quantize_per_token(b)
    return qa, sa, qb, sb


def k_grouped_reference(qa, sa, qb, sb, ks, c):
    """c[g] + A_g x B_g^T in fp64, group g on the columns that ks lays out."""
    a, b = per_token(qa, sa), per_token(qb, sb)
    want, start = c.double().clone(), 0
    for g, kk in enumerate(ks):
        if kk:
            want[g] += a[:, start:start + kk] @ b[:, start:start + kk].t()
        start += fp8gemm.k_grouped_columns(kk)
    return want


class DLPackView:
    """Exposes a torch tensor through DLPack only (tests the capsule path on real memory)."""

    def __init__(self, t):
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)


@unittest.skipIf(SKIP is not None, SKIP or "")
class GemmTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def test_dense_gemm_matches_a_dequantized_reference(self):
        for m, n, k in ((256, 512, 1024), (1, 2112, 7168), (100, 264, 528)):
            with self.subTest(m=m, n=n, k=k):
                qa, sa = fp8gemm.quantize_per_token(bf16(m, k))
                qb, sb = fp8gemm.quantize_per_block(bf16(n, k))
                self.assertEqual(tuple(sa.stride()), (1, fp8gemm.per_token_scale_stride(m)))
                out = fp8gemm.gemm_fp8_nt(qa, sa, qb, sb)
                self.assertEqual((out.dtype, tuple(out.shape)), (torch.bfloat16, (m, n)))
                ref = per_token(qa, sa) @ per_block(qb, sb).t()
                self.assertLess(rel_error(out, ref), 1e-2)
                # The C fast path (out given) writes the same bytes.
                out2 = torch.full_like(out, float("nan"))
                fp8gemm.gemm_fp8_nt(qa, sa, qb, sb, out2)
                self.assertTrue(torch.equal(out, out2))

    def test_explicit_config_and_b_constant(self):
        m, n, k = 512, 384, 1024
        qa, sa = fp8gemm.quantize_per_token(bf16(m, k))
        qb, sb = fp8gemm.quantize_per_block(bf16(n, k))
        ref = per_token(qa, sa) @ per_block(qb, sb).t()
        a = fp8gemm.gemm_fp8_nt(qa, sa, qb, sb, config=fp8gemm.KernelConfig(block_m=128, block_n=128, stages=4))
        b = fp8gemm.gemm_fp8_nt(qa, sa, qb, sb, b_constant=True)
        self.assertLess(rel_error(a, ref), 1e-2)
        self.assertLess(rel_error(b, ref), 1e-2)

    def test_weight_gradient_accumulates_in_fp32(self):
        for m, n, k in ((256, 384, 1024), (200, 136, 528)):
            with self.subTest(m=m, n=n, k=k):
                qa, sa = fp8gemm.quantize_per_token(bf16(m, k))
                qb, sb = fp8gemm.quantize_per_token(bf16(n, k))  # 1x128, N-major
                c = torch.randn(m, n, device="cuda", dtype=torch.float32)
                want = c.double() + per_token(qa, sa) @ per_token(qb, sb).t()
                out = c.clone()
                fp8gemm.gemm_fp8_nt_wgrad(qa, sa, qb, sb, out, out)  # in place
                self.assertLess(rel_error(out, want), FP32_TOLERANCE)
                fresh = torch.empty(m, n, device="cuda", dtype=torch.float32)
                fp8gemm.gemm_fp8_nt_wgrad(qa, sa, qb, sb, fresh)  # c = None: c = 0
                self.assertLess(rel_error(fresh, want - c.double()), FP32_TOLERANCE)

    def test_grouped_contiguous(self):
        groups, n, k = 3, 256, 528
        rows = [130, 0, 260]  # real rows per expert; segments padded to 128
        padded = [(r + 127) // 128 * 128 for r in rows]
        total = sum(padded)
        m_indices = torch.full((total,), -1, dtype=torch.int32, device="cuda")
        start = 0
        for g, (r, p) in enumerate(zip(rows, padded)):
            m_indices[start:start + r] = g
            start += p
        qa, sa = fp8gemm.quantize_per_token(bf16(total, k))
        qb, sb, deq_b = stacked_experts(groups, n, k)
        out = torch.full((total, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        fp8gemm.gemm_fp8_nt_grouped_contiguous(qa, sa, qb, sb, out, m_indices)
        a = per_token(qa, sa)
        start = 0
        for g, (r, p) in enumerate(zip(rows, padded)):
            if r:
                ref = a[start:start + r] @ deq_b[g].t()
                self.assertLess(rel_error(out[start:start + r], ref), 1e-2, f"expert {g}")
            self.assertTrue(torch.all(out[start + r:start + p] == 0), f"padding rows of expert {g}")
            start += p
        # The custom operator computes the same bytes.
        op = torch.ops.fp8gemm.gemm_fp8_nt_grouped_contiguous(qa, sa, qb, sb, m_indices, groups)
        self.assertTrue(torch.equal(op, out))

    def _masked_setup(self, groups=3, max_m=192, n=264, k=528):
        qa, sa = fp8gemm.quantize_per_token(bf16(groups * max_m, k))
        qb, sb, deq_b = stacked_experts(groups, n, k)
        return qa, sa, qb, sb, deq_b

    def _check_masked(self, out, qa, sa, deq_b, counts, max_m):
        a = per_token(qa, sa)
        for g, r in enumerate(counts):
            rows = slice(g * max_m, g * max_m + r)
            if r:
                self.assertLess(rel_error(out[rows], a[rows] @ deq_b[g].t()), 1e-2, f"expert {g}")
            rest = out[g * max_m + r:(g + 1) * max_m]
            self.assertTrue(torch.isnan(rest.float()).all().item(), f"rows past masked_m of expert {g}")

    def test_grouped_masked(self):
        groups, max_m, n, k = 3, 192, 264, 528
        qa, sa, qb, sb, deq_b = self._masked_setup(groups, max_m, n, k)
        counts = [0, 192, 77]
        masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
        out = torch.full((groups * max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        fp8gemm.gemm_fp8_nt_grouped_masked(qa, sa, qb, sb, out, masked_m, expected_m=96)
        self._check_masked(out, qa, sa, deq_b, counts, max_m)
        # 3-D operands: [G, max_m, K], [G, N, K], out [G, max_m, N].
        out3 = torch.full((groups, max_m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        fp8gemm.gemm_fp8_nt_grouped_masked(qa.view(groups, max_m, k), sa, qb.view(groups, n, k), sb, out3,
                                           masked_m, expected_m=96)
        self._check_masked(out3.view(groups * max_m, n), qa, sa, deq_b, counts, max_m)

    def test_k_grouped_weight_gradient(self):
        m, n, ks = 256, 192, [256, 0, 384, 128]
        qa, sa, qb, sb = k_grouped_operands(m, n, ks)
        group_k = torch.tensor(ks, dtype=torch.int32, device="cuda")
        c = torch.randn(len(ks), m, n, device="cuda", dtype=torch.float32)
        out = c.clone()
        fp8gemm.gemm_fp8_nt_wgrad_k_grouped(qa, sa, qb, sb, out, group_k, out)
        self.assertLess(rel_error(out, k_grouped_reference(qa, sa, qb, sb, ks, c)), FP32_TOLERANCE)

    def test_grouped_explicit_configs(self):
        # The grouped GEMMs with config=: each explicit kernel against the reference and the
        # call the library plans (test_explicit_config_and_b_constant for the grouped forms).
        groups, n, k = 3, 256, 528
        # Contiguous: experts of 130, 0 and 260 rows in 128-row segments (-1: padding rows).
        rows = [130, 0, 260]
        padded = [(r + 127) // 128 * 128 for r in rows]
        m_indices = torch.full((sum(padded),), -1, dtype=torch.int32, device="cuda")
        start = 0
        for g, (r, p) in enumerate(zip(rows, padded)):
            m_indices[start:start + r] = g
            start += p
        qa, sa = fp8gemm.quantize_per_token(bf16(sum(padded), k))
        qb, sb, deq_b = stacked_experts(groups, n, k)
        planned = torch.empty(sum(padded), n, device="cuda", dtype=torch.bfloat16)
        fp8gemm.gemm_fp8_nt_grouped_contiguous(qa, sa, qb, sb, planned, m_indices)  # the library's own kernel
        a = per_token(qa, sa)
        for config in (fp8gemm.KernelConfig(block_m=128, block_n=128, stages=4), {"block_m": 64, "block_n": 96}):
            with self.subTest(kind="contiguous", config=config):
                out = torch.full((sum(padded), n), float("nan"), device="cuda", dtype=torch.bfloat16)
                fp8gemm.gemm_fp8_nt_grouped_contiguous(qa, sa, qb, sb, out, m_indices, config=config)
                start = 0
                for g, (r, p) in enumerate(zip(rows, padded)):
                    if r:
                        ref = a[start:start + r] @ deq_b[g].t()
                        self.assertLess(rel_error(out[start:start + r], ref), 1e-2, f"expert {g}")
                        self.assertLess(rel_error(out[start:start + r], planned[start:start + r].double()), 1e-2)
                    self.assertTrue(torch.all(out[start + r:start + p] == 0), f"padding rows of expert {g}")
                    start += p
        # Masked: 256-row tiles as well (one tile per expert of 192 rows, rows past masked_m not stored).
        max_m, n_masked = 192, 264
        qa, sa, qb, sb, deq_b = self._masked_setup(groups, max_m, n_masked, k)
        counts = [0, 192, 77]
        masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
        for config in (fp8gemm.KernelConfig(block_m=64, block_n=128, stages=4),
                       fp8gemm.KernelConfig(block_m=256, block_n=128, stages=3), {"block_m": 128, "block_n": 96}):
            with self.subTest(kind="masked", config=config):
                out = torch.full((groups * max_m, n_masked), float("nan"), device="cuda", dtype=torch.bfloat16)
                fp8gemm.gemm_fp8_nt_grouped_masked(qa, sa, qb, sb, out, masked_m, expected_m=96, config=config)
                self._check_masked(out, qa, sa, deq_b, counts, max_m)
        # K-grouped weight gradient: gemm_fp8_nt_wgrad's configs, accumulating in place.
        m, n_wgrad, ks = 256, 192, [256, 0, 384, 128]
        qa, sa, qb, sb = k_grouped_operands(m, n_wgrad, ks)
        group_k = torch.tensor(ks, dtype=torch.int32, device="cuda")
        c = torch.randn(len(ks), m, n_wgrad, device="cuda", dtype=torch.float32)
        want = k_grouped_reference(qa, sa, qb, sb, ks, c)
        for config in (fp8gemm.KernelConfig(block_m=128, block_n=128, stages=4), {"block_m": 64, "block_n": 96}):
            with self.subTest(kind="k-grouped", config=config):
                out = c.clone()
                fp8gemm.gemm_fp8_nt_wgrad_k_grouped(qa, sa, qb, sb, out, group_k, out, config=config)
                self.assertLess(rel_error(out, want), FP32_TOLERANCE)
        # An illegal config is refused before anything runs: out keeps its values.
        out = c.clone()
        with self.assertRaises(fp8gemm.InvalidArgumentError):
            fp8gemm.gemm_fp8_nt_wgrad_k_grouped(qa, sa, qb, sb, out, group_k, out,
                                                config=fp8gemm.KernelConfig(block_m=256, stages=3))
        self.assertTrue(torch.equal(out, c))


@unittest.skipIf(SKIP is not None, SKIP or "")
class QuantizeTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(1)

    def test_quantize_per_token_bytes(self):
        m, k = 300, 1000  # K not a multiple of 16: the rows are padded to 1008 bytes
        x = bf16(m, k) * 3
        q, s = fp8gemm.quantize_per_token(x)
        self.assertEqual(tuple(q.stride()), (1008, 1))
        ref_q, ref_s = reference_quantize_per_token(x)
        # The documented rule, step by step in fp32 with round-to-nearest-even: the same bytes.
        self.assertTrue(torch.equal(s, ref_s))
        self.assertTrue(torch.equal(q.view(torch.uint8), ref_q.view(torch.uint8)))
        # The custom operator returns the library's bytes and layout.
        q2, s2 = torch.ops.fp8gemm.quantize_per_token(x)
        self.assertEqual((q2.stride(), s2.stride()), (q.stride(), s.stride()))
        self.assertTrue(torch.equal(q2.view(torch.uint8), q.view(torch.uint8)) and torch.equal(s2, s))

    def test_quantize_per_block_and_transposed(self):
        x = bf16(300, 528)
        q, s = fp8gemm.quantize_per_block(x)
        self.assertEqual(tuple(s.shape), (3, 5))
        self.assertLess(rel_error(per_block(q, s), x.double()), 0.05)
        qt, st = fp8gemm.quantize_transposed_per_token(x)  # [528, 300], scales [528, 3]
        self.assertEqual((tuple(qt.shape), tuple(st.shape)), ((528, 300), (528, 3)))
        self.assertLess(rel_error(per_token(qt, st), x.double().t()), 0.05)
        for fn in ("quantize_per_block", "quantize_transposed_per_token"):
            a, b = getattr(fp8gemm, fn)(x), getattr(torch.ops.fp8gemm, fn)(x)
            self.assertTrue(torch.equal(a[0].view(torch.uint8), b[0].view(torch.uint8)) and torch.equal(a[1], b[1]), fn)

    def test_pow2_scales_are_powers_of_two(self):
        _, s = fp8gemm.quantize_per_token(bf16(64, 256), pow2_scales=True)
        mantissa, _ = torch.frexp(s)
        self.assertTrue(torch.all(mantissa == 0.5).item())

    def test_transpose_and_convert_scales_are_exact(self):
        q, s = fp8gemm.quantize_per_block(bf16(264, 528))
        qt, st = fp8gemm.transpose_fp8_block_scaled(q, s)
        self.assertTrue(torch.equal(qt.view(torch.uint8), q.view(torch.uint8).t()))
        self.assertTrue(torch.equal(st, s.t()))
        k_major = torch.rand(300, 5, device="cuda", dtype=torch.float32)  # [M, K/128] row-major
        m_major = fp8gemm.convert_scales(k_major)
        self.assertEqual(tuple(m_major.stride()), (1, fp8gemm.per_token_scale_stride(300)))
        self.assertTrue(torch.equal(m_major, k_major))


@unittest.skipIf(SKIP is not None, SKIP or "")
class TorchIntegrationTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(2)

    def test_stream_and_dlpack_operands(self):
        m, n, k = 128, 256, 512
        qa, sa = fp8gemm.quantize_per_token(bf16(m, k))
        qb, sb = fp8gemm.quantize_per_block(bf16(n, k))
        expected = fp8gemm.gemm_fp8_nt(qa, sa, qb, sb)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # stream=None: the current torch stream
            out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            fp8gemm.gemm_fp8_nt(DLPackView(qa.view(torch.uint8)), sa, qb, sb, out)
        side.synchronize()
        self.assertTrue(torch.equal(out, expected))

    def test_custom_ops_match_the_functions(self):
        m, n, k = 200, 384, 1024
        x, w = bf16(m, k), bf16(n, k)
        qa, sa = fp8gemm.quantize_per_token(x)
        qb, sb = fp8gemm.quantize_per_block(w)
        want = fp8gemm.gemm_fp8_nt(qa, sa, qb, sb)
        self.assertTrue(torch.equal(torch.ops.fp8gemm.gemm_fp8_nt(qa, sa, qb, sb), want))
        out = torch.empty_like(want)
        torch.ops.fp8gemm.gemm_fp8_nt_out(qa, sa, qb, sb, out)
        self.assertTrue(torch.equal(out, want))
        wq, ws = fp8gemm.quantize_per_token(w)
        acc = torch.zeros(m, n, device="cuda", dtype=torch.float32)
        torch.ops.fp8gemm.gemm_fp8_nt_wgrad(qa, sa, wq, ws, acc, True)
        torch.ops.fp8gemm.gemm_fp8_nt_wgrad(qa, sa, wq, ws, acc, True)
        once = torch.empty_like(acc)
        fp8gemm.gemm_fp8_nt_wgrad(qa, sa, wq, ws, once)
        self.assertLess(rel_error(acc, 2 * once.double()), 1e-6)

    def test_fake_implementations_give_the_real_layouts(self):
        from torch._subclasses.fake_tensor import FakeTensorMode
        x = bf16(300, 1000)
        real = [torch.ops.fp8gemm.quantize_per_token(x), torch.ops.fp8gemm.quantize_per_block(x),
                torch.ops.fp8gemm.quantize_transposed_per_token(x)]
        with FakeTensorMode() as mode:
            fx = mode.from_tensor(x)
            fake = [torch.ops.fp8gemm.quantize_per_token(fx), torch.ops.fp8gemm.quantize_per_block(fx),
                    torch.ops.fp8gemm.quantize_transposed_per_token(fx)]
        for (rq, rs), (fq, fs) in zip(real, fake):
            self.assertEqual((rq.shape, rq.stride(), rq.dtype), (fq.shape, fq.stride(), fq.dtype))
            self.assertEqual((rs.shape, rs.stride(), rs.dtype), (fs.shape, fs.stride(), fs.dtype))
        torch.library.opcheck(torch.ops.fp8gemm.quantize_per_token.default, (x, False),
                              test_utils=("test_schema", "test_faketensor"))

    def test_torch_compile_fullgraph_without_graph_breaks(self):
        m, n, k = 256, 512, 1024
        qb, sb = fp8gemm.quantize_per_block(bf16(n, k))

        def forward(x):
            qa, sa = torch.ops.fp8gemm.quantize_per_token(x)
            return torch.ops.fp8gemm.gemm_fp8_nt(qa, sa, qb, sb).float().relu()

        x = bf16(m, k)
        explanation = torch._dynamo.explain(forward)(x)
        self.assertEqual(explanation.graph_break_count, 0, str(explanation.break_reasons))
        self.assertEqual(explanation.graph_count, 1)
        compiled = torch.compile(forward, fullgraph=True)
        self.assertTrue(torch.equal(compiled(x), forward(x)))

    def test_cuda_graph_replays_follow_new_masked_m(self):
        groups, max_m, n, k = 4, 128, 264, 528
        qa, sa = fp8gemm.quantize_per_token(bf16(groups * max_m, k))
        qb, sb, deq_b = stacked_experts(groups, n, k)
        masked_m = torch.tensor([128, 0, 50, 77], dtype=torch.int32, device="cuda")
        out = torch.empty(groups * max_m, n, device="cuda", dtype=torch.bfloat16)
        call = lambda: fp8gemm.gemm_fp8_nt_grouped_masked(qa, sa, qb, sb, out, masked_m, expected_m=64)  # noqa: E731
        call()  # compiled and loaded before the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            call()
        for counts in ([1, 128, 0, 3], [64, 64, 127, 128], [0, 0, 0, 0]):
            masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
            out.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            with self.subTest(masked_m=counts):
                a = per_token(qa, sa)
                for g, r in enumerate(counts):
                    rows = slice(g * max_m, g * max_m + r)
                    if r:
                        self.assertLess(rel_error(out[rows], a[rows] @ deq_b[g].t()), 1e-2)
                    self.assertTrue(torch.isnan(out[g * max_m + r:(g + 1) * max_m].float()).all().item())

    def test_cuda_graph_replays_follow_new_group_k(self):
        m, n = 256, 192
        capacity = [384, 384, 256]  # columns laid out for the largest K of each group
        qa, sa, qb, sb = k_grouped_operands(m, n, capacity)
        group_k = torch.tensor(capacity, dtype=torch.int32, device="cuda")
        out = torch.zeros(len(capacity), m, n, device="cuda", dtype=torch.float32)
        call = lambda: torch.ops.fp8gemm.gemm_fp8_nt_wgrad_k_grouped(qa, sa, qb, sb, out, group_k, False)  # noqa: E731
        call()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            call()
        # New K per group on the device; the columns keep their places, so only the layout
        # of the first groups may move: use K values whose 128-aligned sums fit the same places.
        for ks in ([384, 384, 256], [256, 512, 256], [0, 768, 0]):
            group_k.copy_(torch.tensor(ks, dtype=torch.int32))
            out.fill_(float("nan"))
            graph.replay()
            torch.cuda.synchronize()
            with self.subTest(group_k=ks):
                want = k_grouped_reference(qa, sa, qb, sb, ks, torch.zeros_like(out))
                for g, kk in enumerate(ks):
                    if kk:
                        self.assertLess(rel_error(out[g], want[g]), FP32_TOLERANCE, f"group {g}")
                    else:
                        self.assertTrue(torch.all(out[g] == 0).item(), f"empty group {g} is zeroed")

    def test_linear_example(self):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
        import linear
        errors = linear.check(tokens=512, in_features=1024, out_features=768)
        for name, err in errors.items():
            self.assertLess(err, 0.06, f"{name}: {errors}")


@unittest.skipIf(SKIP is not None, SKIP or "")
class AdminTest(unittest.TestCase):
    def test_runtime_info_stats_and_kernel_names(self):
        info = fp8gemm.runtime_info()
        self.assertTrue(info.devices)
        self.assertTrue(info.devices[0].supported)
        shape = fp8gemm.GemmShape(m=256, n=512, k=1024)
        name = fp8gemm.kernel_name(shape)
        self.assertTrue(name.startswith("gemm1d2d_"), name)
        report = fp8gemm.prewarm([shape])
        self.assertIn(name, report.kernel_names)
        before = fp8gemm.stats()
        qa, sa = fp8gemm.quantize_per_token(bf16(256, 1024))
        qb, sb = fp8gemm.quantize_per_block(bf16(512, 1024))
        fp8gemm.gemm_fp8_nt(qa, sa, qb, sb)
        torch.cuda.synchronize()
        after = fp8gemm.stats()
        self.assertEqual(after.gemm_calls, before.gemm_calls + 1)
        self.assertGreaterEqual(after.modules_loaded, 1)


if __name__ == "__main__":
    unittest.main()
