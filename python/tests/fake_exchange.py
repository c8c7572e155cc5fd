"""A DLPack C exchange table (dlpack.h's DLPackExchangeAPI, DLPack >= 1.2) for the stand-in
torch of fake_torch.py, built with ctypes: what torch publishes as
torch.Tensor.__dlpack_c_exchange_api__ (a PyCapsule named "dlpack_exchange_api"), so that the
native fast path's use of it runs without torch. Each call is recorded in `calls`."""

import ctypes

calls = []  # ("dltensor", tensor) / ("stream", device_type, device_id)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
WORK_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class ExchangeAPI(ctypes.Structure):
    _fields_ = [("version", DLVersion), ("prev_version_api", ctypes.c_void_p),
                ("managed_tensor_allocator", ctypes.c_void_p),
                ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
                ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
                ("dltensor_from_py_object_no_sync", FROM_PY), ("current_work_stream", WORK_STREAM)]


_CODES = {"float8_e4m3fn": (10, 8), "float32": (2, 32), "bfloat16": (4, 16), "int32": (0, 32)}
STREAM = 0xD1A0  # what current_work_stream answers, plus the device index


def _dltensor(t, out):
    calls.append(("dltensor", t))
    # Kept on the tensor: the view's shape and strides must live as long as it does.
    t._dl_shape = (ctypes.c_int64 * len(t.shape))(*t.shape)
    t._dl_strides = (ctypes.c_int64 * len(t.shape))(*t.stride())
    code, bits = _CODES[t.dtype.name]
    o = out.contents
    o.data = t.data_ptr()
    o.device = DLDevice(2 if t.device.type == "cuda" else 1, t.device.index or 0)
    o.ndim = len(t.shape)
    o.dtype = DLDataType(code, bits, 1)
    o.shape = ctypes.cast(t._dl_shape, ctypes.POINTER(ctypes.c_int64))
    o.strides = ctypes.cast(t._dl_strides, ctypes.POINTER(ctypes.c_int64))
    o.byte_offset = 0
    return 0


def _stream(device_type, device_id, out):
    calls.append(("stream", device_type, device_id))
    out[0] = STREAM + device_id
    return 0


_from_py, _work_stream = FROM_PY(_dltensor), WORK_STREAM(_stream)
_api = ExchangeAPI(DLVersion(1, 2), None, None, None, None, _from_py, _work_stream)
_NAME = b"dlpack_exchange_api"


def install(tensor_type):
    """Publishes the table on tensor_type as torch does (before the package first sees it)."""
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    tensor_type.__dlpack_c_exchange_api__ = new_capsule(ctypes.addressof(_api), _NAME, None)
