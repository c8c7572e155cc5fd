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
