"""Exceptions: one class per status of the C API (fp8gemm.h, fp8gemm_status_t).

The library's message (fp8gemm_last_error_message) is the exception's text; `.code` is the
status number, so code that handles the C API's numbers can still tell them apart.
"""

import operator

from . import _native


class Error(Exception):
    """An fp8gemm call failed. `code`: the fp8gemm_status_t number; `message`: the library's text."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = int(code)
        self.message = message


class InvalidArgumentError(Error, ValueError):
    """A shape, pointer, leading dimension, dtype, device or layout breaks a rule (status 1)."""


class NoDriverError(Error):
    """libcuda.so.1 could not be loaded (status 2)."""


class NoDeviceError(Error):
    """A driver but no usable CUDA device or context (status 3)."""


class UnsupportedDeviceError(Error):
    """The device is not sm_90 (status 4)."""


class CompileFailedError(Error):
    """NVRTC rejected a generated kernel; the message holds the log (status 5)."""


class CudaError(Error):
    """A CUDA driver call failed (status 6)."""


class InternalError(Error):
    """A bug in fp8gemm, or an unexpected exception (status 7)."""


class NotCachedError(Error):
    """Cache-only mode and the kernel is not in the disk cache (status 8)."""


class OutOfMemoryError(Error, MemoryError):
    """Host memory ran out (status 9)."""


class BufferTooSmallError(Error):
    """A caller buffer cannot hold the result (status 10)."""


# Indexed by status number; the extension raises ERROR_CLASSES[status](status, message).
ERROR_CLASSES = (
    None,
    InvalidArgumentError,
    NoDriverError,
    NoDeviceError,
    UnsupportedDeviceError,
    CompileFailedError,
    CudaError,
    InternalError,
    NotCachedError,
    OutOfMemoryError,
    BufferTooSmallError,
)

_native.set_error_classes(ERROR_CLASSES)


def invalid_argument(message):
    """The InvalidArgumentError the Python layer raises for a rule the library cannot see."""
    return InvalidArgumentError(1, message)


def integer_argument(value, what, low, high):
    """`value` as a Python int (any integer type; not a float, string or other object) in
    [low, high); InvalidArgumentError naming `what` otherwise."""
    try:
        number = operator.index(value)
    except TypeError:
        raise invalid_argument(f"{what} must be an integer, not {value!r}") from None
    if not low <= number < high:
        raise invalid_argument(f"{what} = {number} is out of range [{low}, {high})")
    return number

