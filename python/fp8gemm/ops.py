"""The package's operations as torch custom operators: torch.ops.fp8gemm.*.

`import fp8gemm.ops` imports torch and registers them (once per process); `import fp8gemm`
alone never imports torch. Each operator has a fake (meta) implementation that gives its
outputs' shapes, dtypes and strides without running anything, so that torch.compile (also
with fullgraph=True), FakeTensor tracing and torch.export see through them; the real one
calls the package's function on the current torch stream. CUDA graph capture works as for
the plain functions: nothing reads device data on the host (masked_m and group_k stay on
the device, so a replay follows their new values).

    fp8gemm::gemm_fp8_nt(a, a_scales, b, b_scales) -> out [M, N] bf16
    fp8gemm::gemm_fp8_nt_out(a, a_scales, b, b_scales, out!) -> ()
    fp8gemm::gemm_fp8_nt_wgrad(a, a_scales, b, b_scales, out!, accumulate) -> ()
    fp8gemm::gemm_fp8_nt_grouped_contiguous(a, a_scales, b, b_scales, m_indices, groups) -> out
    fp8gemm::gemm_fp8_nt_grouped_masked(a, a_scales, b, b_scales, masked_m, expected_m) -> out
    fp8gemm::gemm_fp8_nt_wgrad_k_grouped(a, a_scales, b, b_scales, out!, group_k, accumulate) -> ()
    fp8gemm::quantize_per_token(x, pow2_scales) -> (q, scales)
    fp8gemm::quantize_per_block(x, pow2_scales) -> (q, scales)
    fp8gemm::quantize_transposed_per_token(x, pow2_scales) -> (q, scales)
    fp8gemm::transpose_fp8_block_scaled(w, w_scales) -> (wt, wt_scales)

(out! is written in place; accumulate: out += the product instead of out = the product.)
Outputs are laid out as the plain functions lay them out (e4m3 rows 16 bytes apart, scales
in the layouts the GEMMs read). gemm_fp8_nt_grouped_masked's rows past masked_m are left as
allocated (unspecified values), as the plain function leaves them untouched.

The operators go through torch's dispatcher, which costs host time per call; where that
matters more than tracing, call the plain functions (docs/PERFORMANCE.md has both figures).
"""

import torch

from . import _ops, _quantize
from ._alloc import empty, empty_fp8, empty_strided
from ._layouts import block_scale_shape, per_token_scale_shape

__all__ = [
    "gemm_fp8_nt", "gemm_fp8_nt_out", "gemm_fp8_nt_wgrad", "gemm_fp8_nt_grouped_contiguous",
    "gemm_fp8_nt_grouped_masked", "gemm_fp8_nt_wgrad_k_grouped", "quantize_per_token",
    "quantize_per_block", "quantize_transposed_per_token", "transpose_fp8_block_scaled",
]

_NS = "fp8gemm"
Tensor = torch.Tensor


def _op(name, mutates_args=()):
    return torch.library.custom_op(f"{_NS}::{name}", mutates_args=mutates_args, device_types="cuda")


# ---- the output layouts (shared by the real and the fake implementations) -----------------

def _rows_of_b(b, groups):
    """Rows of one expert's B: [G, N, K] or [G * N, K]."""
    return b.shape[1] if b.dim() == 3 else b.shape[0] // groups


def _gemm_out(a, b):
    return empty(a, (a.shape[0], b.shape[0]), "bf16", "gemm_fp8_nt", "out")


def _contiguous_out(a, b, groups):
    return empty(a, (a.shape[0], _rows_of_b(b, groups)), "bf16", "gemm_fp8_nt_grouped_contiguous", "out")


def _masked_out(a, b, masked_m):
    groups = masked_m.shape[0]
    n = _rows_of_b(b, groups)
    shape = (a.shape[0], a.shape[1], n) if a.dim() == 3 else (a.shape[0], n)
    return empty(a, shape, "bf16", "gemm_fp8_nt_grouped_masked", "out")


def _quantized(x, rows, cols, scale_layout, fn):
    shape, strides = scale_layout
    return empty_fp8(x, rows, cols, fn, "out"), empty_strided(x, shape, strides, "fp32", fn, "scales")


# ---- GEMMs ---------------------------------------------------------------------------------

@_op("gemm_fp8_nt")
def gemm_fp8_nt(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor) -> Tensor:
    out = _gemm_out(a, b)
    _ops.gemm_fp8_nt(a, a_scales, b, b_scales, out)
    return out


@gemm_fp8_nt.register_fake
def _(a, a_scales, b, b_scales):
    return _gemm_out(a, b)


@_op("gemm_fp8_nt_out", mutates_args=("out",))
def gemm_fp8_nt_out(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor, out: Tensor) -> None:
    _ops.gemm_fp8_nt(a, a_scales, b, b_scales, out)


@gemm_fp8_nt_out.register_fake
def _(a, a_scales, b, b_scales, out):
    return None


@_op("gemm_fp8_nt_wgrad", mutates_args=("out",))
def gemm_fp8_nt_wgrad(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor, out: Tensor,
                      accumulate: bool) -> None:
    _ops.gemm_fp8_nt_wgrad(a, a_scales, b, b_scales, out, out if accumulate else None)


@gemm_fp8_nt_wgrad.register_fake
def _(a, a_scales, b, b_scales, out, accumulate):
    return None


@_op("gemm_fp8_nt_grouped_contiguous")
def gemm_fp8_nt_grouped_contiguous(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor,
                                   m_indices: Tensor, groups: int) -> Tensor:
    out = _contiguous_out(a, b, groups)
    _ops.gemm_fp8_nt_grouped_contiguous(a, a_scales, b, b_scales, out, m_indices, groups)
    return out


@gemm_fp8_nt_grouped_contiguous.register_fake
def _(a, a_scales, b, b_scales, m_indices, groups):
    return _contiguous_out(a, b, groups)


@_op("gemm_fp8_nt_grouped_masked")
def gemm_fp8_nt_grouped_masked(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor,
                               masked_m: Tensor, expected_m: int) -> Tensor:
    out = _masked_out(a, b, masked_m)
    _ops.gemm_fp8_nt_grouped_masked(a, a_scales, b, b_scales, out, masked_m, expected_m)
    return out


@gemm_fp8_nt_grouped_masked.register_fake
def _(a, a_scales, b, b_scales, masked_m, expected_m):
    return _masked_out(a, b, masked_m)


@_op("gemm_fp8_nt_wgrad_k_grouped", mutates_args=("out",))
def gemm_fp8_nt_wgrad_k_grouped(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor, out: Tensor,
                                group_k: Tensor, accumulate: bool) -> None:
    _ops.gemm_fp8_nt_wgrad_k_grouped(a, a_scales, b, b_scales, out, group_k, out if accumulate else None)


@gemm_fp8_nt_wgrad_k_grouped.register_fake
def _(a, a_scales, b, b_scales, out, group_k, accumulate):
    return None


# ---- quantizers ----------------------------------------------------------------------------

def _quantizer(name, layout):
    """The operator over the package's quantizer `name`; layout(x) gives (rows, cols, scale
    layout) of its outputs for an input x."""
    function = getattr(_quantize, name)

    @_op(name)
    def op(x: Tensor, pow2_scales: bool = False) -> tuple[Tensor, Tensor]:
        return function(x, pow2_scales=pow2_scales)

    @op.register_fake
    def _(x, pow2_scales=False):
        rows, cols, scales = layout(*x.shape)
        return _quantized(x, rows, cols, scales, name)

    return op


quantize_per_token = _quantizer("quantize_per_token", lambda m, k: (m, k, per_token_scale_shape(m, k)))
quantize_per_block = _quantizer("quantize_per_block", lambda n, k: (n, k, block_scale_shape(n, k)))
quantize_transposed_per_token = _quantizer("quantize_transposed_per_token",
                                           lambda t, h: (h, t, per_token_scale_shape(h, t)))


@_op("transpose_fp8_block_scaled")
def transpose_fp8_block_scaled(w: Tensor, w_scales: Tensor) -> tuple[Tensor, Tensor]:
    return _quantize.transpose_fp8_block_scaled(w, w_scales)


@transpose_fp8_block_scaled.register_fake
def _(w, w_scales):
    n, k = w.shape
    return _quantized(w, k, n, block_scale_shape(k, n), "transpose_fp8_block_scaled")
