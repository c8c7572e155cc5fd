"""Quantizers and layout conversions (fp8gemm_quantize_* of the C API).

Each returns (fp8 tensor, scales) in the layouts the GEMMs read. Outputs passed as None are
allocated with torch when the input is a torch tensor (e4m3 as torch.float8_e4m3fn with rows
16 bytes apart, i.e. padded when the columns are not a multiple of 16; scales with the padded
strides of per_token_scale_shape / block_scale_shape); otherwise pass them.
pow2_scales rounds each scale up to a power of two (dequantization is then exact).
"""

from . import _native
from ._alloc import empty_fp8, empty_strided
from ._layouts import block_scale_shape, per_token_scale_shape
from ._operands import Operands
from ._tensors import BF16, FP8


def _quantize(native, fn, x, out, scales, out_shape, scale_layout, pow2_scales, stream):
    ops = Operands(fn, stream, x)
    xi = ops.matrix("x", x, BF16)
    rows, cols = xi[1], xi[2]
    if out is None:
        out = empty_fp8(x, *out_shape(rows, cols), fn, "out")
    if scales is None:
        shape, strides = scale_layout(rows, cols)
        scales = empty_strided(x, shape, strides, "fp32", fn, "scales")
    q = ops.matrix("out", out, FP8, written=True)
    s = ops.scales("scales", scales, written=True)
    native(*xi, *q, *s, 1 if pow2_scales else 0, ops.stream)
    return out, scales


def quantize_per_token(x, out=None, scales=None, *, pow2_scales=False, stream=None):
    """Activations: x [M, K] bf16 -> (q [M, K] e4m3, scales [M, ceil(K/128)] M-major), one
    scale per row and 128 columns (a of gemm_fp8_nt)."""
    return _quantize(_native.quantize_per_token, "quantize_per_token", x, out, scales,
                     lambda r, c: (r, c), per_token_scale_shape, pow2_scales, stream)


def quantize_per_block(x, out=None, scales=None, *, pow2_scales=False, stream=None):
    """Weights: x [N, K] bf16 -> (q [N, K] e4m3, scales [ceil(N/128), ceil(K/128)]), one
    scale per 128x128 block (b of gemm_fp8_nt)."""
    return _quantize(_native.quantize_per_block, "quantize_per_block", x, out, scales,
                     lambda r, c: (r, c), block_scale_shape, pow2_scales, stream)


def quantize_transposed_per_token(x, out=None, scales=None, *, pow2_scales=False, stream=None):
    """x [T, H] bf16 -> (q [H, T] e4m3, scales [H, ceil(T/128)] H-major): what the weight
    gradient needs of activations and output gradients."""
    return _quantize(_native.quantize_transposed_per_token, "quantize_transposed_per_token", x, out,
                     scales, lambda r, c: (c, r), lambda r, c: per_token_scale_shape(c, r),
                     pow2_scales, stream)


def transpose_fp8_block_scaled(w, w_scales, out=None, out_scales=None, *, stream=None):
    """Exact transpose of a 128x128-scaled e4m3 matrix: w [N, K] -> (wt [K, N],
    scales [ceil(K/128), ceil(N/128)]); nothing is requantized."""
    fn = "transpose_fp8_block_scaled"
    ops = Operands(fn, stream, w)
    wi = ops.matrix("w", w, FP8)
    wsi = ops.scales("w_scales", w_scales)
    n, k = wi[1], wi[2]
    if out is None:
        out = empty_fp8(w, k, n, fn, "out")
    if out_scales is None:
        shape, strides = block_scale_shape(k, n)
        out_scales = empty_strided(w, shape, strides, "fp32", fn, "out_scales")
    o = ops.matrix("out", out, FP8, written=True)
    os_ = ops.scales("out_scales", out_scales, written=True)
    _native.transpose_fp8_block_scaled(*wi, *wsi, *o, *os_, ops.stream)
    return out, out_scales


def convert_scales(scales, out=None, *, stream=None):
    """Copies scales into another layout of the same shape, e.g. per-token scales stored
    K-major [M, ceil(K/128)] into the M-major layout the GEMMs read (the default `out`:
    strides (1, per_token_scale_stride(M))). Returns out."""
    fn = "convert_scales"
    ops = Operands(fn, stream, scales)
    si = ops.scales("scales", scales)
    if out is None:
        rows, cols = si[1], si[2]
        out = empty_strided(scales, (rows, cols), (1, (rows + 3) // 4 * 4), "fp32", fn, "out")
    o = ops.scales("out", out, written=True)
    _native.convert_scales(*si, *o, ops.stream)
    return out
