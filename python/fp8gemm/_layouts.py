"""The scale layouts the GEMMs read, as (shape, strides) in elements (fp8gemm.h helpers).

A scale tensor passed to a GEMM is read as its logical 2-D shape and strides: element (r, c)
at data[r * strides[0] + c * strides[1]], so a torch tensor made with
`torch.empty_strided(shape, strides, dtype=torch.float32, device=...)` from these helpers is
exactly the layout of the C header's per_token_scales() / block_scales().
"""

GROUPED_SEGMENT_ROWS = 128  # FP8GEMM_GROUPED_SEGMENT_ROWS
MAX_DIMENSION = 2147482624  # FP8GEMM_MAX_DIMENSION
MAX_K_1D2D = 1048576  # FP8GEMM_MAX_K_1D2D


def scale_blocks(k):
    """Number of 128-wide blocks covering k."""
    return (k + 127) // 128


def per_token_scale_stride(m):
    """Column stride of per-token scales for m rows: m rounded up to 4 floats (16 bytes)."""
    return (m + 3) // 4 * 4


def k_grouped_columns(k):
    """Columns a group of k columns occupies in gemm_fp8_nt_wgrad_k_grouped's A and B."""
    return (k + 127) // 128 * 128 if k > 0 else 0


def per_token_scale_shape(m, k):
    """Per-token (1x128) scales of an [m, k] operand, M-major: ((m, blocks), (1, stride))."""
    return (m, scale_blocks(k)), (1, per_token_scale_stride(m))


def block_scale_shape(n, k):
    """Per-block (128x128) scales of an [n, k] operand, row-major."""
    return (scale_blocks(n), scale_blocks(k)), (scale_blocks(k), 1)


def storage_elements(shape, strides):
    """Floats a buffer needs to hold a strided 2-D layout."""
    if 0 in shape:
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(shape, strides))
