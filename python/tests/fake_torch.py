"""A stand-in for the few torch features the package uses (tensor attributes, empty,
as_strided, the current stream), so that the torch code paths run without torch.
Installed into sys.modules["torch"] only for the duration of a test."""

import contextlib
import sys
import types

from fakes import address


class dtype:  # noqa: N801  (torch's spelling)
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __str__(self):
        return "torch." + self.name


float8_e4m3fn = dtype("float8_e4m3fn", 1)
bfloat16 = dtype("bfloat16", 2)
float32 = dtype("float32", 4)
int32 = dtype("int32", 4)


class device:  # noqa: N801
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index


class Tensor:
    _next = 100

    def __init__(self, shape, dtype_, device_, strides=None, ptr=None):
        self.shape = tuple(shape)
        self.dtype = dtype_
        self.device = device_
        if strides is None:
            strides, step = [], 1
            for s in reversed(self.shape):
                strides.append(step)
                step *= max(s, 1)
            strides = tuple(reversed(strides))
        self._strides = tuple(strides)
        if ptr is None:
            Tensor._next += 1
            ptr = address(Tensor._next)
        self._ptr = ptr

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def get_device(self):
        return self.device.index if self.device.type == "cuda" else -1

    def as_strided(self, shape, strides):
        return Tensor(shape, self.dtype, self.device, strides, self._ptr)


allocations = []


def empty(shape, dtype=None, device=None):
    if isinstance(shape, int):
        shape = (shape,)
    t = Tensor(shape, dtype, device)
    allocations.append(t)
    return t


def empty_strided(shape, strides, dtype=None, device=None):
    t = Tensor(tuple(shape), dtype, device, tuple(strides))
    allocations.append(t)
    return t


class _Stream:
    def __init__(self, handle):
        self.cuda_stream = handle


CURRENT_STREAM = 0xABC0
cuda = types.SimpleNamespace(current_stream=lambda device=None: _Stream(CURRENT_STREAM + (device.index or 0)))
# What the native fast path asks for the current stream (torch._C._cuda_getCurrentRawStream).
_C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: CURRENT_STREAM + index)


@contextlib.contextmanager
def installed():
    """sys.modules["torch"] is this module inside the block."""
    previous = sys.modules.get("torch")
    sys.modules["torch"] = sys.modules[__name__]
    allocations.clear()
    try:
        yield sys.modules[__name__]
    finally:
        if previous is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = previous
