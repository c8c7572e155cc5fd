"""Allocates outputs with torch, for calls whose operands are torch tensors.

torch is taken from sys.modules, never imported: a torch tensor means torch is loaded.
Other operands need their outputs passed in.
"""

import sys

from ._errors import invalid_argument
from ._layouts import storage_elements
from ._tensors import is_torch_tensor

_TORCH_DTYPES = {"e4m3": "float8_e4m3fn", "bf16": "bfloat16", "fp32": "float32"}


def _torch_for(like, fn, what):
    torch = sys.modules.get("torch") if is_torch_tensor(like) else None
    if torch is None:
        raise invalid_argument(f"{fn}: pass {what}: outputs are allocated only for torch tensors")
    return torch


def empty(like, shape, dtype, fn, what):
    """A new tensor of `shape` on like's device."""
    torch = _torch_for(like, fn, what)
    return torch.empty(shape, dtype=getattr(torch, _TORCH_DTYPES[dtype]), device=like.device)


def empty_strided(like, shape, strides, dtype, fn, what):
    """A new tensor with exactly these strides (the padding of scale layouts included)."""
    torch = _torch_for(like, fn, what)
    # Whole padded columns (rows) too: m rounded up to 4 for per-token scales.
    elements = max([storage_elements(shape, strides), 1] + [n * s for n, s in zip(shape, strides)])
    storage = torch.empty(elements,
                          dtype=getattr(torch, _TORCH_DTYPES[dtype]), device=like.device)
    return storage.as_strided(shape, strides)


def fp8_leading_dimension(cols):
    """Row stride of an e4m3 matrix the package allocates: cols rounded up to 16 bytes, the
    alignment TMA (and so every GEMM) needs of each row."""
    return (cols + 15) // 16 * 16


def empty_fp8(like, rows, cols, fn, what):
    """A new [rows, cols] e4m3 tensor whose rows start 16 bytes apart (padded when cols % 16)."""
    torch = _torch_for(like, fn, what)
    return torch.empty_strided((rows, cols), (fp8_leading_dimension(cols), 1), dtype=torch.float8_e4m3fn,
                               device=like.device)

