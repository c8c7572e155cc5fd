"""Fake device tensors for the CPU tests: nothing reads their memory before the library
validates the arguments and fails on the missing driver."""

import ctypes

import fp8gemm
from fp8gemm import _tensors


class CudaArray:
    """An object with __cuda_array_interface__ (version 3) at a fake device address."""

    def __init__(self, ptr, shape, typestr, strides=None, read_only=False):
        self.__cuda_array_interface__ = {
            "data": (ptr, read_only), "shape": tuple(shape), "typestr": typestr,
            "strides": strides, "version": 3,
        }


# Distinct fake device addresses, 16 MiB apart and 16-byte aligned.
def address(i):
    return (i + 1) << 24


def fp8(i, rows, cols):
    return CudaArray(address(i), (rows, cols), "|u1")


def bf16(i, rows, cols):
    return CudaArray(address(i), (rows, cols), "<u2")


def fp32(i, rows, cols, strides_bytes=None):
    return CudaArray(address(i), (rows, cols), "<f4", strides_bytes)


def int32(i, n):
    return CudaArray(address(i), (n,), "<i4")


def per_token_scales(i, m, k):
    (rows, cols), (rs, cs) = fp8gemm.per_token_scale_shape(m, k)
    return fp32(i, rows, cols, (rs * 4, cs * 4))


def block_scales(i, n, k):
    return fp32(i, (n + 127) // 128, (k + 127) // 128)


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCapsule_New.restype = ctypes.py_object


class DLPackArray:
    """An object exporting a real DLManagedTensor through a DLPack capsule.

    The capsule has no destructor and the struct has no deleter: this object owns the
    memory of the struct, its shape and strides, and outlives every capsule in the tests."""

    def __init__(self, ptr, shape, code, bits, device_type=2, device_id=0, strides=None,
                 byte_offset=0, versioned=False, flags=0):
        n = len(shape)
        self.shape_array = (ctypes.c_int64 * n)(*shape)
        self.strides_array = (ctypes.c_int64 * n)(*strides) if strides is not None else None
        self.managed = (_tensors.DLManagedTensorVersioned if versioned else _tensors.DLManagedTensor)()
        if versioned:
            self.managed.version.major = 1
            self.managed.flags = flags
        t = self.managed.dl_tensor
        t.data = ptr
        t.device.device_type = device_type
        t.device.device_id = device_id
        t.ndim = n
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = ctypes.cast(self.shape_array, ctypes.POINTER(ctypes.c_int64))
        if self.strides_array is not None:
            t.strides = ctypes.cast(self.strides_array, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self.name = b"dltensor_versioned" if versioned else b"dltensor"
        self.device = (device_type, device_id)
        self.streams = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return _PyCapsule_New(ctypes.addressof(self.managed), self.name, None)


KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_FLOAT8_E4M3FN = 0, 1, 2, 4, 10
