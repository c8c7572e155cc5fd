"""Reads where a tensor lives and how it is laid out, without reading its memory.

tensor_info(obj) accepts, in this order:
  - torch tensors, duck-typed (data_ptr, stride, dtype, device): torch is never imported here;
  - objects with __cuda_array_interface__ (versions 2 and 3);
  - objects with __dlpack__ (the DLPack capsule protocol).

Dtype names: "e4m3" (torch.float8_e4m3fn, DLPack kDLFloat8_e4m3fn), "bf16", "fp32",
"int32", and the raw-bit names "u8" (torch.uint8, typestr "|u1") and "u16" ("<u2" and "<V2";
the array interface has no float8 or bfloat16 typestr). Where the library expects e4m3 it
also takes "u8" as raw e4m3 bytes, and where it expects bf16 it takes "u16" as raw bf16 bits
(see FP8 and BF16 below).

DLPack capsules: the capsule is not consumed. It is kept (TensorInfo.owner) until the
library call that uses the pointer has returned, then dropped; its producer's destructor
then releases the DLManagedTensor, as the protocol prescribes for a capsule nobody renamed
to "used_dltensor". Holding the capsule keeps the producer's memory alive for the call.
"""

import collections
import ctypes
import operator

from ._errors import invalid_argument

TensorInfo = collections.namedtuple(
    "TensorInfo", "data_ptr shape strides dtype device_type device_index owner read_only",
    defaults=(False,),
)
TensorInfo.__doc__ = (
    "data_ptr: int; shape, strides: tuples (strides in elements); dtype: a name (see the module);"
    " device_type: 'cuda', 'cpu', ...; device_index: int, or None for 'the current device';"
    " owner: what must stay alive while the pointer is used (a DLPack capsule), or None;"
    " read_only: the producer marked the memory read-only (array interface data[1], DLPack 1.x"
    " flag bit 0); the package writes no output into such memory."
)

FP8 = ("e4m3", "u8")
BF16 = ("bf16", "u16")
FP32 = ("fp32",)
INT32 = ("int32",)

# ---- torch --------------------------------------------------------------------------------

_TORCH_DTYPE_NAMES = {
    "torch.float8_e4m3fn": "e4m3",
    "torch.bfloat16": "bf16",
    "torch.float32": "fp32",
    "torch.int32": "int32",
    "torch.uint8": "u8",
}
_torch_dtype_cache = {}  # torch dtype object -> name: one dict lookup per tensor after the first


def _torch_dtype(dtype):
    name = _torch_dtype_cache.get(dtype)
    if name is None:
        name = _TORCH_DTYPE_NAMES.get(str(dtype), str(dtype))
        _torch_dtype_cache[dtype] = name
    return name


_torch_types = {}  # type -> whether it is a torch tensor type (decided once per type)


def is_torch_tensor(obj):
    cls = type(obj)
    known = _torch_types.get(cls)
    if known is None:
        known = _torch_types[cls] = all(
            hasattr(obj, name) for name in ("data_ptr", "stride", "dtype", "device"))
    return known


def _from_torch(t):
    device = t.device
    return TensorInfo(t.data_ptr(), t.shape, t.stride(), _torch_dtype(t.dtype), device.type,
                      device.index, None)


# ---- __cuda_array_interface__ ---------------------------------------------------------------

_TYPESTR_NAMES = {
    "<f4": "fp32", "<i4": "int32", "|u1": "u8", "<u1": "u8", "|i1": "i8",
    "<u2": "u16", "<V2": "u16", "|V2": "u16",
}


def _from_cuda_array_interface(obj, cai):
    if not isinstance(cai, dict) or not all(key in cai for key in ("shape", "typestr", "data")):
        raise invalid_argument("__cuda_array_interface__ must be a dict with 'shape', 'typestr' and 'data'")
    shape = tuple(int(s) for s in cai["shape"])
    typestr = cai["typestr"]
    if not isinstance(typestr, str):
        raise invalid_argument(f"__cuda_array_interface__ typestr must be a string, not {typestr!r}")
    itemsize = int(typestr[2:]) if typestr[2:].isascii() and typestr[2:].isdigit() else 0
    if itemsize <= 0:
        raise invalid_argument(f"unsupported __cuda_array_interface__ typestr {typestr!r}")
    if cai.get("mask") is not None:
        raise invalid_argument("masked __cuda_array_interface__ arrays are not supported")
    byte_strides = cai.get("strides")
    if byte_strides is None:  # C-contiguous
        strides, step = [], 1
        for s in reversed(shape):
            strides.append(step)
            step *= max(s, 1)
        strides = tuple(reversed(strides))
    else:
        if len(byte_strides) != len(shape):
            raise invalid_argument(f"__cuda_array_interface__ strides {tuple(byte_strides)} do not match its "
                                   f"shape {shape}")
        if any(int(s) % itemsize for s in byte_strides):
            raise invalid_argument(f"__cuda_array_interface__ strides {tuple(byte_strides)} are not "
                                   f"multiples of the item size {itemsize}")
        strides = tuple(int(s) // itemsize for s in byte_strides)
    # The interface names no device: the pointer belongs to the current one (index None).
    data = cai["data"]
    try:  # (an int of any integer type, numpy's included; not a bool, float or string)
        if not isinstance(data, (tuple, list)) or len(data) != 2 or isinstance(data[0], bool):
            raise TypeError
        pointer = operator.index(data[0])
        flag = data[1]  # a bool (numpy's too), or 0 / 1
        if type(flag).__name__ not in ("bool", "bool_") and not (isinstance(flag, int) and flag in (0, 1)):
            raise TypeError
    except TypeError:
        raise invalid_argument(f"__cuda_array_interface__ data must be (pointer, read_only), not {data!r}") from None
    return TensorInfo(pointer, shape, strides, _TYPESTR_NAMES.get(typestr, typestr), "cuda", None, None,
                      bool(flag))


# ---- DLPack ---------------------------------------------------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", _DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
DLPACK_FLAG_READ_ONLY = 1  # DLManagedTensorVersioned.flags bit 0 (DLPack 1.0)
# (code, bits, lanes) -> name. Codes: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4,
# kDLFloat8_e4m3fn 10.
_DLPACK_DTYPES = {
    (0, 32, 1): "int32", (1, 8, 1): "u8", (1, 16, 1): "u16", (2, 32, 1): "fp32",
    (4, 16, 1): "bf16", (10, 8, 1): "e4m3",
}
_DLPACK_DEVICES = {KDL_CPU: "cpu", KDL_CUDA: "cuda", KDL_CUDA_HOST: "cuda_host",
                   KDL_CUDA_MANAGED: "cuda"}  # managed memory is addressable by the kernels

# A handle of the package's own on the interpreter's C API: the signatures set here do not
# change (and are not changed by) other code's use of the shared ctypes.pythonapi.
_pythonapi = ctypes.PyDLL(None)
_capsule_is_valid = _pythonapi.PyCapsule_IsValid
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid.restype = ctypes.c_int
_capsule_pointer = _pythonapi.PyCapsule_GetPointer
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_pointer.restype = ctypes.c_void_p


def _dlpack_stream(stream):
    # The protocol's CUDA stream numbers: 1 is the legacy default stream, others are the handle.
    return 1 if stream in (None, 0) else int(stream)


def _from_dlpack(obj, stream):
    device = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else None
    if device is not None and int(device[0]) in (KDL_CUDA, KDL_CUDA_MANAGED):
        # The producer makes its pending work visible to the stream the call will run on.
        capsule = obj.__dlpack__(stream=_dlpack_stream(stream))
    else:
        capsule = obj.__dlpack__()
    read_only = False
    if _capsule_is_valid(capsule, b"dltensor_versioned"):
        managed = DLManagedTensorVersioned.from_address(_capsule_pointer(capsule, b"dltensor_versioned"))
        # A newer major version may lay the struct out differently: the protocol says to refuse it.
        if managed.version.major != 1:
            raise invalid_argument(f"__dlpack__ returned a DLPack {managed.version.major}.{managed.version.minor} "
                                   "tensor; this package reads DLPack 1.x")
        read_only = bool(managed.flags & DLPACK_FLAG_READ_ONLY)
    elif _capsule_is_valid(capsule, b"dltensor"):
        managed = DLManagedTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    else:
        raise invalid_argument("__dlpack__ returned no unused DLPack capsule")
    t = managed.dl_tensor
    ndim = int(t.ndim)
    # (Checked before the shape and strides arrays are read: they hold ndim entries.)
    if not 0 <= ndim <= 3:
        raise invalid_argument(f"__dlpack__ returned a tensor of {ndim} dimensions; operands have 1 to 3")
    if ndim > 0 and not t.shape:
        raise invalid_argument("__dlpack__ returned a tensor without a shape array")
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    if t.strides:
        strides = tuple(int(t.strides[i]) for i in range(ndim))
    else:  # NULL strides: compact row-major
        strides, step = [], 1
        for s in reversed(shape):
            strides.append(step)
            step *= max(s, 1)
        strides = tuple(reversed(strides))
    dt = (int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes))
    dtype = _DLPACK_DTYPES.get(dt, "dlpack%d:%d:%d" % dt)
    device_type = _DLPACK_DEVICES.get(int(t.device.device_type), "dlpack%d" % t.device.device_type)
    return TensorInfo((t.data or 0) + int(t.byte_offset), shape, strides, dtype, device_type,
                      int(t.device.device_id), capsule, read_only)


# ---- the entry point ------------------------------------------------------------------------

# type -> reader, so that the protocol of each operand type is looked up once per process.
_READERS = {}


def _reader(obj):
    if is_torch_tensor(obj):
        return lambda o, stream: _from_torch(o)
    if hasattr(obj, "__cuda_array_interface__"):
        return lambda o, stream: _from_cuda_array_interface(o, o.__cuda_array_interface__)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack
    return None


def tensor_info(obj, stream=None):
    """(data_ptr, shape, strides in elements, dtype name, device type, device index, owner).

    `stream` matters only for DLPack producers (they order their work before it)."""
    cls = type(obj)
    reader = _READERS.get(cls)
    if reader is None:
        reader = _reader(obj)
        if reader is None:
            raise invalid_argument(
                f"{cls.__name__} is not a tensor: expected a torch tensor or an object with "
                "__cuda_array_interface__ or __dlpack__"
            )
        # Kept for the type only where the type decides (torch tensors, protocols defined on
        # the class); an instance attribute says nothing of the type's other instances.
        if is_torch_tensor(obj) or any(hasattr(cls, name) for name in ("__cuda_array_interface__", "__dlpack__")):
            _READERS[cls] = reader
    return reader(obj, stream)
