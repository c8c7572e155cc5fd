"""The GEMMs: Python signatures over fp8gemm_gemm_fp8_nt* of the C API.

Operands are torch tensors or objects with __cuda_array_interface__ / __dlpack__ (see
_tensors.py); e4m3 operands may be uint8 bytes. Scales are fp32 tensors whose logical
shape and strides are those of the C descriptors (see per_token_scale_shape and
block_scale_shape). The library checks shapes, strides, alignment and scale layouts and
raises InvalidArgumentError with its own message; nothing is launched when it does.

Every call takes `stream`: None is the current torch stream of the operands' device for
torch tensors and the legacy default stream otherwise; an int is a CUstream.
"""

from . import _native
from ._alloc import empty
from ._config import as_config
from ._errors import integer_argument, invalid_argument
from ._operands import Operands
from ._tensors import BF16, FP8, FP32

_NO_CONFIG = (0,) * 7


def _config_fields(config):
    """(has_config, the 7 fields) of the C entry points that take an optional config."""
    return (0,) + _NO_CONFIG if config is None else (1,) + tuple(as_config(config).fields())


def _gemm_operands(ops, a, a_scales, b, b_scales, stacked_a=False, stacked_b=False):
    return (ops.matrix("a", a, FP8, stacked_a) + ops.scales("a_scales", a_scales, stacked_a)
            + ops.matrix("b", b, FP8, stacked_b) + ops.scales("b_scales", b_scales, stacked_b))


def _gemm_fp8_nt(a, a_scales, b, b_scales, out=None, *, config=None, b_constant=False, stream=None):
    """gemm_fp8_nt's Python path (see gemm_fp8_nt below)."""
    ops = Operands("gemm_fp8_nt", stream, a)
    fields = _gemm_operands(ops, a, a_scales, b, b_scales)
    if out is None:
        out = empty(a, (fields[1], fields[10]), "bf16", ops.fn, "out")  # (a.rows, b.rows)
    d = ops.matrix("out", out, BF16, written=True)
    if config is None:
        mode = 1 if b_constant else 0  # 1: the call with options, 0: the plain one
        _native.gemm_fp8_nt_fields(*fields, *d, mode, mode, *_NO_CONFIG, ops.stream)
    else:
        if b_constant:
            raise invalid_argument("gemm_fp8_nt: config and b_constant cannot be combined")
        _native.gemm_fp8_nt_fields(*fields, *d, 2, 0, *as_config(config).fields(), ops.stream)
    return out


# The entry point is C (gemm_fp8_nt_entry in _native.c, with the docstring): plain torch tensors
# with `out` (and at most `stream` as another keyword) are read there and go straight to the
# library; every other call, and any the C code does not take, continues in _gemm_fp8_nt above.
_native.set_gemm_fallback(_gemm_fp8_nt)
gemm_fp8_nt = _native.gemm_fp8_nt


def _accumulator(ops, out, c, stacked=False):
    """out's descriptor and (has_c, c's descriptor): c None, out itself or another matrix."""
    d = ops.matrix("out", out, FP32, stacked, written=True)
    if c is None:
        return d, (0, 0, 0, 0, 0)
    if c is out:
        return d, (1,) + d
    return d, (1,) + ops.matrix("c", c, FP32, stacked)


def gemm_fp8_nt_wgrad(a, a_scales, b, b_scales, out, c=None, *, config=None, stream=None):
    """out [M, N] fp32 = c + a [M, K] x b [N, K]^T, both scaled per token (1x128, M- and
    N-major). c: None (c = 0), out itself (accumulate in place) or another [M, N] fp32.
    config: a KernelConfig (or dict) to run exactly that kernel (block_m 64, 128 or 192;
    no multicast, TMA-store epilogue or split-K), else the library plans it."""
    ops = Operands("gemm_fp8_nt_wgrad", stream, a)
    fields = _gemm_operands(ops, a, a_scales, b, b_scales)
    d, cc = _accumulator(ops, out, c)
    _native.gemm_fp8_nt_wgrad(*fields, *d, *cc, *_config_fields(config), ops.stream)
    return out


def _count(value, name, fn):
    """An integer argument within int64 (the library checks the range that matters)."""
    return integer_argument(value, f"{fn}: {name}", -(1 << 63), 1 << 63)


def _groups(groups, shape, n, fn):
    if groups is not None:
        return _count(groups, "groups", fn)
    if len(shape) == 3:
        return shape[0]
    if n > 0 and shape[0] % n == 0:
        return shape[0] // n
    raise invalid_argument(f"{fn}: pass groups (b's rows {shape[0]} are not a multiple of N = {n})")


def gemm_fp8_nt_grouped_contiguous(a, a_scales, b, b_scales, out, m_indices, groups=None, *, config=None,
                                   stream=None):
    """Mixture-of-experts forward: out [M, N] bf16, row r = a row r x b_g^T with
    g = m_indices[r] (int32 [M] on the device, -1 for padding rows: zeros).

    b: [G * N, K] or [G, N, K]; b_scales: [G * ceil(N/128), ceil(K/128)] or
    [G, ceil(N/128), ceil(K/128)]; groups: G (default: b's first dimension when 3-D, else
    b's rows / N). Experts' segments of a start at multiples of 128 rows.
    config: a KernelConfig (or dict) to run exactly that kernel (a forward config with
    block_m 64 or 128; multicast 0 or 2 (pairs sharing B); no split-K), else the library plans it."""
    ops = Operands("gemm_fp8_nt_grouped_contiguous", stream, a)
    fields = _gemm_operands(ops, a, a_scales, b, b_scales, stacked_b=True)
    d = ops.matrix("out", out, BF16, written=True)
    index_ptr, entries = ops.vector("m_indices", m_indices)
    rows = ops.shapes["a"][0]
    if entries != rows:
        raise invalid_argument(f"{ops.fn}: m_indices has {entries} entries but a has {rows} rows: one expert "
                               "index per row of a (-1 for padding rows)")
    g = _groups(groups, ops.shapes["b"], d[2], ops.fn)
    _native.gemm_fp8_nt_grouped_contiguous(*fields, *d, index_ptr, g, *_config_fields(config), ops.stream)
    return out


def gemm_fp8_nt_grouped_masked(a, a_scales, b, b_scales, out, masked_m, expected_m, *, config=None, stream=None):
    """Mixture-of-experts decode: for each expert g, the first masked_m[g] rows of its slice
    of a ([G * max_m, K] or [G, max_m, K]) times b_g^T into out ([G * max_m, N] or
    [G, max_m, N] bf16; other rows are not written). masked_m: int32 [G] on the device;
    expected_m: its typical value (chooses the kernel; never read from the device).
    config: a KernelConfig (or dict) to run exactly that kernel (a forward config with
    block_m 64, 128 or 256; multicast 0, or 2 with block_m up to 128; no split-K), else the
    library plans it."""
    ops = Operands("gemm_fp8_nt_grouped_masked", stream, a)
    fields = _gemm_operands(ops, a, a_scales, b, b_scales, stacked_a=True, stacked_b=True)
    d = ops.matrix("out", out, BF16, stacked=True, written=True)
    masked_ptr, g = ops.vector("masked_m", masked_m)
    _native.gemm_fp8_nt_grouped_masked(*fields, *d, masked_ptr, g, _count(expected_m, "expected_m", ops.fn),
                                       *_config_fields(config), ops.stream)
    return out


def gemm_fp8_nt_wgrad_k_grouped(a, a_scales, b, b_scales, out, group_k, c=None, *, config=None, stream=None):
    """Mixture-of-experts weight gradient: for each group g, out[g] [M, N] fp32 = c[g] +
    a_g [M, K_g] x b_g [N, K_g]^T. a [M, K] and b [N, K] hold the groups' columns side by side,
    each starting on a 128-column boundary (padding zero); scales per token as for
    gemm_fp8_nt_wgrad. group_k: int32 [G] on the device. out: [G * M, N] or [G, M, N] fp32;
    c: None, out (accumulate in place) or another tensor like out. config: a KernelConfig (or
    dict) to run exactly that kernel (gemm_fp8_nt_wgrad's configs: block_m 64, 128 or 192; no
    multicast, TMA-store epilogue or split-K), else the library plans it."""
    ops = Operands("gemm_fp8_nt_wgrad_k_grouped", stream, a)
    fields = _gemm_operands(ops, a, a_scales, b, b_scales)
    d, cc = _accumulator(ops, out, c, stacked=True)
    group_ptr, g = ops.vector("group_k", group_k)
    _native.gemm_fp8_nt_wgrad_k_grouped(*fields, *d, *cc, group_ptr, g, *_config_fields(config), ops.stream)
    return out
