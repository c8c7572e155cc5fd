/* The native part of the fp8gemm Python package: a thin layer from Python values to the
 * library's C API (fp8gemm.h).
 *
 * The library is not linked at build time. _loader.py picks its path and calls
 * open_library(), which dlopen()s it and resolves every function below with dlsym; so one
 * built extension works with any libfp8gemm.so.0 of the same ABI, and a missing library is a
 * clear ImportError rather than a loader failure. Including fp8gemm.h gives the struct
 * layouts and, through __typeof__, the exact function types; its functions are never
 * referenced, so nothing needs to be linked.
 *
 * The GEMM and quantizer entry points take only integers (pointers, sizes, strides, the
 * stream) with METH_FASTCALL, so a call costs one integer conversion per field and no
 * allocation. A failing status raises the exception class registered for it by
 * set_error_classes() (see _errors.py) with the library's message. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "fp8gemm/fp8gemm.h"

/* ---- the library's functions, resolved at open_library() ---- */

#define FP8GEMM_FUNCTIONS(X)                                                                            \
  X(fp8gemm_status_string) X(fp8gemm_last_error_message) X(fp8gemm_version) X(fp8gemm_version_string)   \
  X(fp8gemm_gemm_fp8_nt) X(fp8gemm_gemm_fp8_nt_with_options) X(fp8gemm_gemm_fp8_nt_with_config)         \
  X(fp8gemm_gemm_fp8_nt_wgrad) X(fp8gemm_gemm_fp8_nt_wgrad_with_config)                                 \
  X(fp8gemm_gemm_fp8_nt_grouped_contiguous) X(fp8gemm_gemm_fp8_nt_grouped_contiguous_with_config)       \
  X(fp8gemm_gemm_fp8_nt_grouped_masked) X(fp8gemm_gemm_fp8_nt_grouped_masked_with_config)               \
  X(fp8gemm_gemm_fp8_nt_wgrad_k_grouped) X(fp8gemm_gemm_fp8_nt_wgrad_k_grouped_with_config)             \
  X(fp8gemm_quantize_per_token) X(fp8gemm_quantize_per_block) X(fp8gemm_quantize_transposed_per_token)  \
  X(fp8gemm_transpose_fp8_block_scaled) X(fp8gemm_convert_scales) X(fp8gemm_prewarm)                    \
  X(fp8gemm_kernel_name) X(fp8gemm_runtime_info) X(fp8gemm_stats) X(fp8gemm_device_stats)               \
  X(fp8gemm_cached_kernels)                                                                               \
  X(fp8gemm_cached_tuning_databases) X(fp8gemm_clear_cache) X(fp8gemm_clear_stale_cache)                \
  X(fp8gemm_set_tuning_mode) X(fp8gemm_get_tuning_mode) X(fp8gemm_set_cache_only)                       \
  X(fp8gemm_get_cache_only) X(fp8gemm_tune)

#define DECLARE_POINTER(name) static __typeof__(&name) p_##name;
FP8GEMM_FUNCTIONS(DECLARE_POINTER)
#undef DECLARE_POINTER

static void* library_handle;
/* Indexed by status number: the exception class to raise (set by _errors.py). */
static PyObject* error_classes;

static int check_loaded(void) {
  if (library_handle) return 0;
  PyErr_SetString(PyExc_RuntimeError, "fp8gemm: the library is not loaded (open_library was not called)");
  return -1;
}

static PyObject* open_library(PyObject* self, PyObject* arg) {
  (void)self;
  const char* path = PyUnicode_AsUTF8(arg);
  if (!path) return NULL;
  if (library_handle) Py_RETURN_NONE;
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    PyErr_Format(PyExc_OSError, "%s", why ? why : "dlopen failed");
    return NULL;
  }
  /* Resolve all first and publish only a complete set. */
#define RESOLVE(name)                                                                              \
  p_##name = (__typeof__(&name))dlsym(handle, #name);                                              \
  if (!p_##name) {                                                                                 \
    dlclose(handle);                                                                               \
    PyErr_Format(PyExc_OSError, "%s has no symbol %s (a library older than this package?)", path, #name); \
    return NULL;                                                                                   \
  }
  FP8GEMM_FUNCTIONS(RESOLVE)
#undef RESOLVE
  library_handle = handle;
  Py_RETURN_NONE;
}

static PyObject* set_error_classes(PyObject* self, PyObject* arg) {
  (void)self;
  if (!PyTuple_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "set_error_classes expects a tuple");
    return NULL;
  }
  Py_INCREF(arg);
  Py_XSETREF(error_classes, arg);
  Py_RETURN_NONE;
}

/* Raises the registered class for `status` as cls(status, message); returns NULL. */
static PyObject* raise_status(fp8gemm_status_t status) {
  const char* message = p_fp8gemm_last_error_message();
  PyObject* cls = NULL;
  if (error_classes && (Py_ssize_t)status < PyTuple_GET_SIZE(error_classes))
    cls = PyTuple_GET_ITEM(error_classes, (Py_ssize_t)status);
  if (!cls || cls == Py_None) cls = PyExc_RuntimeError;
  PyObject* exc = PyObject_CallFunction(cls, "is", (int)status, message);
  if (exc) {
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

#define RETURN_STATUS(status) \
  do {                        \
    if ((status) != FP8GEMM_SUCCESS) return raise_status(status); \
    Py_RETURN_NONE;           \
  } while (0)

/* ---- integer arguments ---- */

/* Reads exactly n integer arguments (pointers may use the full unsigned range). */
static int read_ints(PyObject* const* args, Py_ssize_t nargs, int64_t* out, Py_ssize_t n, const char* what) {
  if (check_loaded() < 0) return -1;
  if (nargs != n) {
    PyErr_Format(PyExc_TypeError, "%s expects %zd integer arguments, got %zd", what, n, nargs);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(args[i], &overflow);
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(args[i]);
      if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
      v = (long long)u;
    } else if (overflow < 0) {
      PyErr_Format(PyExc_OverflowError, "%s: argument %zd is out of the int64 range", what, i);
      return -1;
    } else if (v == -1 && PyErr_Occurred()) {
      return -1;
    }
    out[i] = (int64_t)v;
  }
  return 0;
}

#define PTR(v) ((void*)(uintptr_t)(v))

static fp8gemm_fp8_matrix_t fp8_matrix(const int64_t* v) {
  fp8gemm_fp8_matrix_t m = {PTR(v[0]), v[1], v[2], v[3]};
  return m;
}
static fp8gemm_bf16_matrix_t bf16_matrix(const int64_t* v) {
  fp8gemm_bf16_matrix_t m = {PTR(v[0]), v[1], v[2], v[3]};
  return m;
}
static fp8gemm_fp32_matrix_t fp32_matrix(const int64_t* v) {
  fp8gemm_fp32_matrix_t m = {(float*)PTR(v[0]), v[1], v[2], v[3]};
  return m;
}
static fp8gemm_scale_matrix_t scale_matrix(const int64_t* v) {
  fp8gemm_scale_matrix_t s = {(const float*)PTR(v[0]), v[1], v[2], v[3], v[4]};
  return s;
}
static fp8gemm_bf16_input_t bf16_input(const int64_t* v) {
  fp8gemm_bf16_input_t m = {PTR(v[0]), v[1], v[2], v[3]};
  return m;
}
static fp8gemm_fp8_output_t fp8_output(const int64_t* v) {
  fp8gemm_fp8_output_t m = {PTR(v[0]), v[1], v[2], v[3]};
  return m;
}
static fp8gemm_scale_output_t scale_output(const int64_t* v) {
  fp8gemm_scale_output_t s = {(float*)PTR(v[0]), v[1], v[2], v[3], v[4]};
  return s;
}
#define STREAM(v) ((fp8gemm_stream_t)PTR(v))

/* The GIL is released around every GPU call: a call may compile a kernel (seconds) when the
 * cache lacks it, and other Python threads should run meanwhile. */
#define CALL(status, expr)   \
  Py_BEGIN_ALLOW_THREADS     \
  status = expr;             \
  Py_END_ALLOW_THREADS

/* The kernel config of 7 fields (block_m, block_n, stages, group_n, multicast, tma_store, split_k). */
static fp8gemm_kernel_config_t kernel_config(const int64_t* v) {
  fp8gemm_kernel_config_t c = fp8gemm_default_kernel_config();
  c.block_m = (int)v[0];
  c.block_n = (int)v[1];
  c.stages = (int)v[2];
  c.group_n = (int)v[3];
  c.multicast = (int)v[4];
  c.tma_store = (int)v[5];
  c.split_k = (int)v[6];
  return c;
}

/* The operands shared by every GEMM: a[4] a_scales[5] b[4] b_scales[5] d[4] = 22 values. */
#define GEMM_OPERANDS(v)                                                        \
  const fp8gemm_fp8_matrix_t a = fp8_matrix(v), b = fp8_matrix(v + 9);          \
  const fp8gemm_scale_matrix_t sa = scale_matrix(v + 4), sb = scale_matrix(v + 13)

/* gemm_fp8_nt(22 operands, mode, b_constant, 7 config fields, stream); mode 0 plain,
 * 1 with options, 2 with config. */
static PyObject* gemm_fp8_nt(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t v[32];
  if (read_ints(args, nargs, v, 32, "gemm_fp8_nt") < 0) return NULL;
  GEMM_OPERANDS(v);
  const fp8gemm_bf16_matrix_t d = bf16_matrix(v + 18);
  const fp8gemm_stream_t stream = STREAM(v[31]);
  fp8gemm_status_t status;
  if (v[22] == 2) {
    const fp8gemm_kernel_config_t c = kernel_config(v + 24);
    CALL(status, p_fp8gemm_gemm_fp8_nt_with_config(&a, &sa, &b, &sb, &d, &c, stream));
  } else if (v[22] == 1) {
    fp8gemm_gemm_options_t o = fp8gemm_default_gemm_options();
    o.b_constant = v[23] != 0;
    CALL(status, p_fp8gemm_gemm_fp8_nt_with_options(&a, &sa, &b, &sb, &d, &o, stream));
  } else {
    CALL(status, p_fp8gemm_gemm_fp8_nt(&a, &sa, &b, &sb, &d, stream));
  }
  RETURN_STATUS(status);
}

/* ---- the torch fast path of gemm_fp8_nt ----
 *
 * gemm_fp8_nt_torch(a, a_scales, b, b_scales, out, stream) reads torch tensors here, in C:
 * each attribute or method is one call into torch, and no Python frame, tuple of integers or
 * keyword parsing is spent per operand. It takes only the plain case (exact torch.Tensor
 * objects of the expected dtypes, 2-D, rows contiguous, all on one CUDA device; stream None
 * or an int) and returns None for anything else, so that the Python path (_ops.py) handles it
 * and raises its precise errors; the library's own validation applies in both. The tensor
 * type and dtypes are looked up from sys.modules["torch"] and kept until that module object
 * changes; torch is never imported from here. */

/* ---- DLPack's C exchange table (dlpack.h, DLPack >= 1.2), declared here by its ABI ----
 * A tensor library may publish, as the type attribute __dlpack_c_exchange_api__ (a PyCapsule
 * named "dlpack_exchange_api"; earlier spelling __c_dlpack_exchange_api__), a static table of
 * C functions. (Only a capsule is taken: an int address, which any Python code can set, would
 * be dereferenced unchecked.) dltensor_from_py_object_no_sync fills a DLTensor
 * that views a tensor's metadata (valid while the object lives) without any Python call, and
 * current_work_stream gives the stream the framework would run on: the two things the fast
 * path needs, at a C call each instead of five Python calls per tensor. */
typedef struct {
  int32_t device_type; /* kDLCUDA = 2 */
  int32_t device_id;
} dl_device;
typedef struct {
  uint8_t code; /* kDLFloat 2, kDLBfloat 4, kDLFloat8_e4m3fn 10 */
  uint8_t bits;
  uint16_t lanes;
} dl_dtype;
typedef struct {
  void* data;
  dl_device device;
  int32_t ndim;
  dl_dtype dtype;
  int64_t* shape;
  int64_t* strides; /* in elements */
  uint64_t byte_offset;
} dl_tensor;
typedef struct {
  uint32_t major, minor;
} dl_version;
typedef struct dl_exchange_api {
  dl_version version;
  const struct dl_exchange_api* prev_version_api;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  int (*dltensor_from_py_object_no_sync)(void* py_object, dl_tensor* out);
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_stream);
} dl_exchange_api;

/* The table of a tensor type, or NULL (no Python error left set) when it has none usable. */
static const dl_exchange_api* exchange_api_of(PyObject* type) {
  static const char* names[] = {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"};
  for (int i = 0; i < 2; ++i) {
    PyObject* v = PyObject_GetAttrString(type, names[i]);
    if (!v) {
      PyErr_Clear();
      continue;
    }
    const dl_exchange_api* api = NULL;
    if (PyCapsule_CheckExact(v)) api = (const dl_exchange_api*)PyCapsule_GetPointer(v, "dlpack_exchange_api");
    Py_DECREF(v);
    PyErr_Clear();
    /* Major version 1 (the layout above), walking to an older table if this one is newer (a
     * few steps at most: a chain that loops would otherwise be followed for ever). */
    for (int step = 0; api && api->version.major > 1; ++step) api = step < 8 ? api->prev_version_api : NULL;
    if (api && api->version.major == 1 && api->dltensor_from_py_object_no_sync && api->current_work_stream) return api;
  }
  return NULL;
}

static struct {
  PyObject* module; /* the sys.modules["torch"] the entries below come from (a strong reference) */
  PyObject* tensor_type;
  PyObject* fp8;
  PyObject* bf16;
  PyObject* fp32;
  PyObject* raw_stream; /* torch._C._cuda_getCurrentRawStream, or NULL where torch lacks it */
  const dl_exchange_api* exchange; /* torch.Tensor's DLPack exchange table, or NULL */
} torch_cache;
static PyObject *s_torch, *s_dtype, *s_shape, *s_stride, *s_data_ptr, *s_get_device; /* interned at import */

/* 1: the cache matches the torch module in use; 0: no torch (or not a usable one); -1: error.
 * The lookups can run Python code (module __getattr__, properties, destructors of the old
 * entries), even a nested call of this function: the new entries are gathered in locals
 * while the module is held, installed at once, and the old ones released last. */
static int torch_cache_refresh(void) {
  /* (An interned key: this runs on every call, and GetItemString would build the string each time.) */
  PyObject* torch = PyDict_GetItemWithError(PyImport_GetModuleDict(), s_torch); /* borrowed */
  if (!torch) return PyErr_Occurred() ? -1 : 0;
  if (torch == torch_cache.module) return torch_cache.tensor_type ? 1 : 0;
  Py_INCREF(torch);
  PyObject* tensor_type = PyObject_GetAttrString(torch, "Tensor");
  PyObject* fp8 = PyObject_GetAttrString(torch, "float8_e4m3fn");
  PyObject* bf16 = PyObject_GetAttrString(torch, "bfloat16");
  PyObject* fp32 = PyObject_GetAttrString(torch, "float32");
  PyObject* raw_stream = NULL;
  const dl_exchange_api* exchange = NULL;
  const int usable = tensor_type && fp8 && bf16 && fp32 && PyType_Check(tensor_type);
  PyErr_Clear();
  if (usable) {
    exchange = exchange_api_of(tensor_type);
    PyObject* c = PyObject_GetAttrString(torch, "_C");
    if (c) {
      raw_stream = PyObject_GetAttrString(c, "_cuda_getCurrentRawStream");
      Py_DECREF(c);
    }
    PyErr_Clear();
  } else {
    Py_CLEAR(tensor_type); /* this module stays cached as "no fast path" */
  }
  PyObject* old[6] = {torch_cache.module, torch_cache.tensor_type, torch_cache.fp8,
                      torch_cache.bf16, torch_cache.fp32, torch_cache.raw_stream};
  torch_cache.module = torch; /* the reference taken above */
  torch_cache.tensor_type = tensor_type;
  torch_cache.fp8 = fp8;
  torch_cache.bf16 = bf16;
  torch_cache.fp32 = fp32;
  torch_cache.raw_stream = raw_stream;
  torch_cache.exchange = exchange;
  for (int i = 0; i < 6; ++i) Py_XDECREF(old[i]);
  return usable ? 1 : 0;
}

/* A 2-tuple of Python ints into two int64 values; 0 if it is not one. */
static int read_pair(PyObject* t, int64_t* x, int64_t* y) {
  if (!t || !PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2) return 0;
  *x = PyLong_AsLongLong(PyTuple_GET_ITEM(t, 0));
  *y = PyLong_AsLongLong(PyTuple_GET_ITEM(t, 1));
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  return 1;
}

/* read_tensor through the DLPack exchange table: the same fields from one C call (the dtype
 * checked by its DLPack code against the torch dtype object asked for). 0: not read this way
 * (no error left set); the attribute path below then decides. */
static int read_tensor_dlpack(PyObject* t, PyObject* dtype, int64_t* v, long* device) {
  dl_tensor dl;
  if (torch_cache.exchange->dltensor_from_py_object_no_sync(t, &dl) != 0) {
    PyErr_Clear();
    return 0;
  }
  const int want_code = dtype == torch_cache.fp8 ? 10 : dtype == torch_cache.fp32 ? 2 : 4;
  const int want_bits = dtype == torch_cache.fp8 ? 8 : dtype == torch_cache.fp32 ? 32 : 16;
  if (dl.device.device_type != 2 || dl.ndim != 2 || dl.dtype.code != want_code || dl.dtype.bits != want_bits ||
      dl.dtype.lanes != 1 || !dl.shape || !dl.strides)
    return 0;
  v[0] = (int64_t)((uintptr_t)dl.data + dl.byte_offset);
  v[1] = dl.shape[0];
  v[2] = dl.shape[1];
  v[3] = dl.strides[0];
  v[4] = dl.strides[1];
  *device = dl.device.device_id;
  return 1;
}

/* v = {data, rows, cols, stride0, stride1} and the device index of a torch tensor of `dtype`;
 * 1 when read, 0 when the tensor is not the plain case (no Python error is left set). */
static int read_tensor(PyObject* t, PyObject* dtype, int64_t* v, long* device) {
  if (Py_TYPE(t) != (PyTypeObject*)torch_cache.tensor_type) return 0;
  if (torch_cache.exchange && read_tensor_dlpack(t, dtype, v, device)) return 1;
  PyObject* d = PyObject_GetAttr(t, s_dtype);
  const int same_dtype = d == dtype;
  Py_XDECREF(d);
  if (!same_dtype) {
    PyErr_Clear();
    return 0;
  }
  PyObject* shape = PyObject_GetAttr(t, s_shape);
  PyObject* stride = shape ? PyObject_CallMethodNoArgs(t, s_stride) : NULL;
  int ok = read_pair(shape, &v[1], &v[2]) && read_pair(stride, &v[3], &v[4]);
  Py_XDECREF(shape);
  Py_XDECREF(stride);
  if (ok) {
    PyObject* ptr = PyObject_CallMethodNoArgs(t, s_data_ptr);
    PyObject* dev = ptr ? PyObject_CallMethodNoArgs(t, s_get_device) : NULL;
    v[0] = ptr ? (int64_t)PyLong_AsUnsignedLongLong(ptr) : 0;
    *device = dev ? PyLong_AsLong(dev) : -1;
    ok = ptr && dev && !PyErr_Occurred() && *device >= 0;
    Py_XDECREF(ptr);
    Py_XDECREF(dev);
  }
  PyErr_Clear();
  return ok;
}

static PyObject* gemm_fp8_nt_torch(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  if (nargs != 6) {
    PyErr_Format(PyExc_TypeError, "gemm_fp8_nt_torch expects 6 arguments, got %zd", nargs);
    return NULL;
  }
  if (check_loaded() < 0) return NULL;
  const int torch_state = torch_cache_refresh();
  if (torch_state < 0) return NULL;
  if (torch_state == 0) Py_RETURN_NONE;
  int64_t va[5], vsa[5], vb[5], vsb[5], vd[5];
  long dev[5];
  if (!read_tensor(args[0], torch_cache.fp8, va, &dev[0]) || !read_tensor(args[1], torch_cache.fp32, vsa, &dev[1]) ||
      !read_tensor(args[2], torch_cache.fp8, vb, &dev[2]) || !read_tensor(args[3], torch_cache.fp32, vsb, &dev[3]) ||
      !read_tensor(args[4], torch_cache.bf16, vd, &dev[4]))
    Py_RETURN_NONE;
  for (int i = 1; i < 5; ++i)
    if (dev[i] != dev[0]) Py_RETURN_NONE;
  /* Matrices: rows contiguous, at least one row (the Python path settles the rest). A single
   * row's stride(0) is arbitrary in torch: its leading dimension is then taken as its columns
   * (or the stride, if larger), as the Python path does. */
  if (va[4] != 1 || vb[4] != 1 || vd[4] != 1 || va[1] < 1 || vb[1] < 1 || vd[1] < 1) Py_RETURN_NONE;
  if (va[1] == 1 && va[3] < va[2]) va[3] = va[2];
  if (vb[1] == 1 && vb[3] < vb[2]) vb[3] = vb[2];
  if (vd[1] == 1 && vd[3] < vd[2]) vd[3] = vd[2];
  /* The stream; whatever this path cannot read as a plain handle (a table that fails, a
   * negative or oversized int) goes to the Python path, which decides and says why. */
  int64_t stream_value = 0;
  PyObject* stream = args[5];
  if (stream == Py_None && torch_cache.exchange) {
    void* current = NULL;
    if (torch_cache.exchange->current_work_stream(2, (int32_t)dev[0], &current) != 0) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
    stream_value = (int64_t)(uintptr_t)current;
  } else if (stream == Py_None) {
    PyObject* raw_stream = torch_cache.raw_stream; /* held: the call may run any Python code */
    if (!raw_stream) Py_RETURN_NONE;
    Py_INCREF(raw_stream);
    PyObject* index = PyLong_FromLong(dev[0]);
    PyObject* handle = index ? PyObject_CallOneArg(raw_stream, index) : NULL;
    Py_XDECREF(index);
    Py_DECREF(raw_stream);
    if (!handle) return NULL;
    stream_value = (int64_t)PyLong_AsUnsignedLongLong(handle);
    Py_DECREF(handle);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
  } else if (PyLong_Check(stream)) {
    stream_value = (int64_t)PyLong_AsUnsignedLongLong(stream);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      Py_RETURN_NONE;
    }
  } else {
    Py_RETURN_NONE;
  }
  const fp8gemm_fp8_matrix_t a = {PTR(va[0]), va[1], va[2], va[3]}, b = {PTR(vb[0]), vb[1], vb[2], vb[3]};
  const fp8gemm_scale_matrix_t sa = {(const float*)PTR(vsa[0]), vsa[1], vsa[2], vsa[3], vsa[4]};
  const fp8gemm_scale_matrix_t sb = {(const float*)PTR(vsb[0]), vsb[1], vsb[2], vsb[3], vsb[4]};
  const fp8gemm_bf16_matrix_t d = {PTR(vd[0]), vd[1], vd[2], vd[3]};
  fp8gemm_status_t status;
  CALL(status, p_fp8gemm_gemm_fp8_nt(&a, &sa, &b, &sb, &d, STREAM(stream_value)));
  if (status != FP8GEMM_SUCCESS) return raise_status(status);
  Py_INCREF(args[4]);
  return args[4];
}

/* The public fp8gemm.gemm_fp8_nt(a, a_scales, b, b_scales, out=None, *, config=None,
 * b_constant=False, stream=None): the plain torch case (out given, only `out` and `stream` as
 * keywords) goes straight to gemm_fp8_nt_torch; everything else, and whatever that does not
 * take, to the Python implementation registered by _ops.py (set_gemm_fallback). One Python
 * call less per GEMM than a Python function in front of the fast path. */
static PyObject* gemm_fallback;
static PyObject *s_out, *s_stream_kw; /* interned keyword names */

static PyObject* set_gemm_fallback(PyObject* self, PyObject* f) {
  (void)self;
  if (!PyCallable_Check(f)) {
    PyErr_SetString(PyExc_TypeError, "set_gemm_fallback needs a callable");
    return NULL;
  }
  Py_INCREF(f);
  Py_XSETREF(gemm_fallback, f);
  Py_RETURN_NONE;
}

static PyObject* gemm_fp8_nt_entry(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyObject *out = nargs >= 5 ? args[4] : NULL, *stream = Py_None;
  int plain = nargs == 4 || nargs == 5;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw && plain; ++i) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, i);
    if (name == s_out && !out) out = args[nargs + i];
    else if (name == s_stream_kw) stream = args[nargs + i];
    else plain = 0; /* another keyword (or a non-interned spelling): the Python path sorts it out */
  }
  if (plain && out && out != Py_None) {
    PyObject* fast[6] = {args[0], args[1], args[2], args[3], out, stream};
    PyObject* r = gemm_fp8_nt_torch(self, fast, 6);
    if (r != Py_None) return r; /* out, or NULL with the library's error set */
    Py_DECREF(r);
  }
  if (!gemm_fallback) {
    PyErr_SetString(PyExc_RuntimeError, "fp8gemm: gemm_fp8_nt has no Python implementation registered");
    return NULL;
  }
  return PyObject_Vectorcall(gemm_fallback, args, nargsf, kwnames);
}

/* gemm_fp8_nt_wgrad(22 operands, has_c, c[4], has_config, 7 config fields, stream). */
static PyObject* gemm_fp8_nt_wgrad(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t v[36];
  if (read_ints(args, nargs, v, 36, "gemm_fp8_nt_wgrad") < 0) return NULL;
  GEMM_OPERANDS(v);
  const fp8gemm_fp32_matrix_t d = fp32_matrix(v + 18), c = fp32_matrix(v + 23);
  const fp8gemm_stream_t stream = STREAM(v[35]);
  fp8gemm_status_t status;
  if (v[27]) {
    const fp8gemm_kernel_config_t config = kernel_config(v + 28);
    CALL(status, p_fp8gemm_gemm_fp8_nt_wgrad_with_config(&a, &sa, &b, &sb, &d, v[22] ? &c : NULL, &config, stream));
  } else {
    CALL(status, p_fp8gemm_gemm_fp8_nt_wgrad(&a, &sa, &b, &sb, &d, v[22] ? &c : NULL, stream));
  }
  RETURN_STATUS(status);
}

/* gemm_fp8_nt_grouped_contiguous(22 operands, group_of_row, groups, has_config, 7 config fields, stream). */
static PyObject* gemm_fp8_nt_grouped_contiguous(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t v[33];
  if (read_ints(args, nargs, v, 33, "gemm_fp8_nt_grouped_contiguous") < 0) return NULL;
  GEMM_OPERANDS(v);
  const fp8gemm_bf16_matrix_t d = bf16_matrix(v + 18);
  const int32_t* group_of_row = (const int32_t*)PTR(v[22]);
  const fp8gemm_stream_t stream = STREAM(v[32]);
  fp8gemm_status_t status;
  if (v[24]) {
    const fp8gemm_kernel_config_t config = kernel_config(v + 25);
    CALL(status, p_fp8gemm_gemm_fp8_nt_grouped_contiguous_with_config(&a, &sa, &b, &sb, &d, group_of_row, v[23],
                                                                        &config, stream));
  } else {
    CALL(status, p_fp8gemm_gemm_fp8_nt_grouped_contiguous(&a, &sa, &b, &sb, &d, group_of_row, v[23], stream));
  }
  RETURN_STATUS(status);
}

/* gemm_fp8_nt_grouped_masked(22 operands, masked_m, groups, expected_m, has_config, 7 config fields, stream). */
static PyObject* gemm_fp8_nt_grouped_masked(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t v[34];
  if (read_ints(args, nargs, v, 34, "gemm_fp8_nt_grouped_masked") < 0) return NULL;
  GEMM_OPERANDS(v);
  const fp8gemm_bf16_matrix_t d = bf16_matrix(v + 18);
  const int32_t* masked_m = (const int32_t*)PTR(v[22]);
  const fp8gemm_stream_t stream = STREAM(v[33]);
  fp8gemm_status_t status;
  if (v[25]) {
    const fp8gemm_kernel_config_t config = kernel_config(v + 26);
    CALL(status, p_fp8gemm_gemm_fp8_nt_grouped_masked_with_config(&a, &sa, &b, &sb, &d, masked_m, v[23], v[24],
                                                                    &config, stream));
  } else {
    CALL(status, p_fp8gemm_gemm_fp8_nt_grouped_masked(&a, &sa, &b, &sb, &d, masked_m, v[23], v[24], stream));
  }
  RETURN_STATUS(status);
}

/* gemm_fp8_nt_wgrad_k_grouped(22 operands, has_c, c[4], group_k, groups, has_config, 7 config fields, stream). */
static PyObject* gemm_fp8_nt_wgrad_k_grouped(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t v[38];
  if (read_ints(args, nargs, v, 38, "gemm_fp8_nt_wgrad_k_grouped") < 0) return NULL;
  GEMM_OPERANDS(v);
  const fp8gemm_fp32_matrix_t d = fp32_matrix(v + 18), c = fp32_matrix(v + 23);
  const int32_t* group_k = (const int32_t*)PTR(v[27]);
  const fp8gemm_stream_t stream = STREAM(v[37]);
  fp8gemm_status_t status;
  if (v[29]) {
    const fp8gemm_kernel_config_t config = kernel_config(v + 30);
    CALL(status, p_fp8gemm_gemm_fp8_nt_wgrad_k_grouped_with_config(&a, &sa, &b, &sb, &d, v[22] ? &c : NULL, group_k,
                                                                     v[28], &config, stream));
  } else {
    CALL(status,
         p_fp8gemm_gemm_fp8_nt_wgrad_k_grouped(&a, &sa, &b, &sb, &d, v[22] ? &c : NULL, group_k, v[28], stream));
  }
  RETURN_STATUS(status);
}

/* ---- quantizers: x[4] q[4] scales[5] pow2 stream ---- */

#define QUANTIZER(pyname, cfunc)                                                              \
  static PyObject* pyname(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {          \
    (void)self;                                                                               \
    int64_t v[15];                                                                            \
    if (read_ints(args, nargs, v, 15, #pyname) < 0) return NULL;                              \
    const fp8gemm_bf16_input_t x = bf16_input(v);                                             \
    const fp8gemm_fp8_output_t q = fp8_output(v + 4);                                         \
    const fp8gemm_scale_output_t s = scale_output(v + 8);                                     \
    fp8gemm_quantize_options_t o = fp8gemm_default_quantize_options();                        \
    o.pow2_scales = v[13] != 0;                                                               \
    fp8gemm_status_t status;                                                                  \
    CALL(status, cfunc(&x, &q, &s, &o, STREAM(v[14])));                                       \
    RETURN_STATUS(status);                                                                    \
  }
QUANTIZER(quantize_per_token, p_fp8gemm_quantize_per_token)
QUANTIZER(quantize_per_block, p_fp8gemm_quantize_per_block)
QUANTIZER(quantize_transposed_per_token, p_fp8gemm_quantize_transposed_per_token)

/* transpose_fp8_block_scaled(w[4], w_scales[5], wt[4], wt_scales[5], stream). */
static PyObject* transpose_fp8_block_scaled(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t v[19];
  if (read_ints(args, nargs, v, 19, "transpose_fp8_block_scaled") < 0) return NULL;
  const fp8gemm_fp8_matrix_t w = fp8_matrix(v);
  const fp8gemm_scale_matrix_t ws = scale_matrix(v + 4);
  const fp8gemm_fp8_output_t wt = fp8_output(v + 9);
  const fp8gemm_scale_output_t wts = scale_output(v + 13);
  fp8gemm_status_t status;
  CALL(status, p_fp8gemm_transpose_fp8_block_scaled(&w, &ws, &wt, &wts, STREAM(v[18])));
  RETURN_STATUS(status);
}

/* convert_scales(in[5], out[5], stream). */
static PyObject* convert_scales(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  (void)self;
  int64_t v[11];
  if (read_ints(args, nargs, v, 11, "convert_scales") < 0) return NULL;
  const fp8gemm_scale_matrix_t in = scale_matrix(v);
  const fp8gemm_scale_output_t out = scale_output(v + 5);
  fp8gemm_status_t status;
  CALL(status, p_fp8gemm_convert_scales(&in, &out, STREAM(v[10])));
  RETURN_STATUS(status);
}

/* ---- admin: version, settings ---- */

static PyObject* version(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  int major = 0, minor = 0, patch = 0;
  const fp8gemm_status_t status = p_fp8gemm_version(&major, &minor, &patch);
  if (status != FP8GEMM_SUCCESS) return raise_status(status);
  return Py_BuildValue("(iiis)", major, minor, patch, p_fp8gemm_version_string());
}

static PyObject* status_string(PyObject* self, PyObject* arg) {
  (void)self;
  if (check_loaded() < 0) return NULL;
  const long code = PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred()) return NULL;
  /* (A number past int is no status: the library's answer for an unknown one, not a truncation.) */
  return PyUnicode_FromString(p_fp8gemm_status_string((fp8gemm_status_t)(code < INT_MIN || code > INT_MAX ? -1 : code)));
}

static PyObject* last_error_message(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  return PyUnicode_FromString(p_fp8gemm_last_error_message());
}

static PyObject* set_tuning_mode(PyObject* self, PyObject* arg) {
  (void)self;
  if (check_loaded() < 0) return NULL;
  const long mode = PyLong_AsLong(arg);
  if (mode == -1 && PyErr_Occurred()) return NULL;
  RETURN_STATUS(p_fp8gemm_set_tuning_mode((fp8gemm_tuning_mode_t)(mode < INT_MIN || mode > INT_MAX ? -1 : mode)));
}

static PyObject* get_tuning_mode(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  fp8gemm_tuning_mode_t mode = FP8GEMM_TUNING_OFF;
  const fp8gemm_status_t status = p_fp8gemm_get_tuning_mode(&mode);
  if (status != FP8GEMM_SUCCESS) return raise_status(status);
  return PyLong_FromLong((long)mode);
}

static PyObject* set_cache_only(PyObject* self, PyObject* arg) {
  (void)self;
  if (check_loaded() < 0) return NULL;
  const int on = PyObject_IsTrue(arg);
  if (on < 0) return NULL;
  RETURN_STATUS(p_fp8gemm_set_cache_only(on));
}

static PyObject* get_cache_only(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  int on = 0;
  const fp8gemm_status_t status = p_fp8gemm_get_cache_only(&on);
  if (status != FP8GEMM_SUCCESS) return raise_status(status);
  return PyBool_FromLong(on);
}

/* ---- shapes ---- */

/* A shape is a tuple (m, n, k, kind, groups); _admin.py normalizes what users pass. */
static int read_shape(PyObject* item, fp8gemm_gemm_shape_t* shape) {
  long long m, n, k, groups;
  int kind;
  if (!PyArg_ParseTuple(item, "LLLiL", &m, &n, &k, &kind, &groups)) return -1;
  *shape = fp8gemm_make_gemm_shape(m, n, k, (fp8gemm_gemm_kind_t)kind, groups);
  return 0;
}

/* Reads a list of shape tuples into a new array (PyMem_Free it); *count receives its length. */
static fp8gemm_gemm_shape_t* read_shapes(PyObject* list, size_t* count) {
  PyObject* seq = PySequence_Fast(list, "shapes must be a sequence");
  if (!seq) return NULL;
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  fp8gemm_gemm_shape_t* shapes = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof *shapes);
  if (!shapes) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (read_shape(PySequence_Fast_GET_ITEM(seq, i), &shapes[i]) < 0) {
      PyMem_Free(shapes);
      Py_DECREF(seq);
      return NULL;
    }
  }
  Py_DECREF(seq);
  *count = (size_t)n;
  return shapes;
}

static PyObject* shape_tuple(const fp8gemm_gemm_shape_t* s) {
  return Py_BuildValue("(LLLiL)", (long long)s->m, (long long)s->n, (long long)s->k, (int)s->kind,
                       (long long)s->groups);
}

static PyObject* string_list(const char* const* items, size_t count) {
  PyObject* list = PyList_New((Py_ssize_t)count);
  if (!list) return NULL;
  for (size_t i = 0; i < count; ++i) {
    PyObject* s = PyUnicode_FromString(items[i] ? items[i] : "");
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, s);
  }
  return list;
}

/* prewarm(shapes, jobs, num_sms, b_constant) -> dict of the report. Progress is not
 * reported to Python yet: the callback would run on the library's worker threads. */
static PyObject* prewarm(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* list;
  int jobs, num_sms, b_constant;
  if (check_loaded() < 0 || !PyArg_ParseTuple(args, "Oiip", &list, &jobs, &num_sms, &b_constant)) return NULL;
  size_t count = 0;
  fp8gemm_gemm_shape_t* shapes = read_shapes(list, &count);
  if (!shapes) return NULL;
  fp8gemm_prewarm_options_t options = fp8gemm_default_prewarm_options();
  options.jobs = jobs;
  options.num_sms = num_sms;
  options.b_constant = b_constant;
  fp8gemm_prewarm_report_t r = fp8gemm_default_prewarm_report();
  fp8gemm_status_t status;
  CALL(status, p_fp8gemm_prewarm(shapes, count, &options, &r));
  PyMem_Free(shapes);
  if (status != FP8GEMM_SUCCESS) return raise_status(status);
  PyObject* names = string_list(r.kernel_names, r.kernel_name_count);
  if (!names) return NULL;
  return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:i,s:d,s:N,s:n,s:n,s:s}", "shapes", (Py_ssize_t)r.shapes, "kernels",
                       (Py_ssize_t)r.kernels, "compiled", (Py_ssize_t)r.compiled, "from_disk",
                       (Py_ssize_t)r.from_disk, "from_memory", (Py_ssize_t)r.from_memory, "num_sms", r.num_sms,
                       "seconds", r.seconds, "kernel_names", names, "compiled_and_skipped",
                       (Py_ssize_t)r.compiled_and_skipped, "not_saved", (Py_ssize_t)r.not_saved,
                       "not_saved_reason", r.not_saved_reason ? r.not_saved_reason : "");
}

/* kernel_name(shape, b_constant) -> str; the name's size is asked first. */
static PyObject* kernel_name(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* item;
  int b_constant;
  if (check_loaded() < 0 || !PyArg_ParseTuple(args, "Op", &item, &b_constant)) return NULL;
  fp8gemm_gemm_shape_t shape;
  if (read_shape(item, &shape) < 0) return NULL;
  fp8gemm_gemm_options_t options = fp8gemm_default_gemm_options();
  options.b_constant = b_constant;
  size_t needed = 0;
  fp8gemm_status_t status;
  CALL(status, p_fp8gemm_kernel_name(&shape, &options, NULL, 0, &needed));
  if (status != FP8GEMM_SUCCESS && status != FP8GEMM_ERROR_BUFFER_TOO_SMALL) return raise_status(status);
  char* buffer = PyMem_Malloc(needed ? needed : 1);
  if (!buffer) return PyErr_NoMemory();
  /* The name is known now (the cache holds the kernel), so this call is quick. */
  status = p_fp8gemm_kernel_name(&shape, &options, buffer, needed, &needed);
  PyObject* result = status == FP8GEMM_SUCCESS ? PyUnicode_FromString(buffer) : raise_status(status);
  PyMem_Free(buffer);
  return result;
}

/* ---- lists through callbacks ---- */

/* Collects dicts into `list`; a failure stops collecting and is reported after the call. */
typedef struct {
  PyObject* list;
  int failed;
} collector_t;

static void collect(collector_t* c, PyObject* item) {
  if (c->failed) {
    Py_XDECREF(item);
    return;
  }
  if (!item || PyList_Append(c->list, item) < 0) c->failed = 1;
  Py_XDECREF(item);
}

static const char* str_or_empty(const char* s) { return s ? s : ""; }

/* runtime_info's two lists. */
typedef struct {
  collector_t devices;
  collector_t settings;
} runtime_lists_t;

static void on_device(const fp8gemm_device_info_t* d, void* user_data) {
  collect(&((runtime_lists_t*)user_data)->devices, Py_BuildValue("{s:i,s:s,s:i,s:i,s:i,s:K,s:O}", "ordinal", d->ordinal, "name",
                                   str_or_empty(d->name), "cc_major", d->cc_major, "cc_minor", d->cc_minor,
                                   "sm_count", d->sm_count, "memory_bytes", (unsigned long long)d->memory_bytes,
                                   "supported", d->supported ? Py_True : Py_False));
}

static void on_setting(const fp8gemm_setting_t* s, void* user_data) {
  collect(&((runtime_lists_t*)user_data)->settings, Py_BuildValue("{s:s,s:s,s:s}", "name", str_or_empty(s->name), "value", str_or_empty(s->value),
                                  "source", str_or_empty(s->source)));
}

static PyObject* runtime_info(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  runtime_lists_t lists = {{PyList_New(0), 0}, {PyList_New(0), 0}};
  if (!lists.devices.list || !lists.settings.list) goto fail;
  fp8gemm_runtime_info_t info = fp8gemm_default_runtime_info();
  /* The GIL is held: the callbacks run on this thread and build Python objects. */
  const fp8gemm_status_t status = p_fp8gemm_runtime_info(&info, on_device, on_setting, &lists);
  if (status != FP8GEMM_SUCCESS) {
    raise_status(status);
    goto fail;
  }
  if (lists.devices.failed || lists.settings.failed) goto fail;
  return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:i,s:N,s:N}", "library_version", str_or_empty(info.library_version),
                       "nvrtc_version", str_or_empty(info.nvrtc_version), "cache_dir", str_or_empty(info.cache_dir),
                       "cache_state", str_or_empty(info.cache_state), "driver", str_or_empty(info.driver),
                       "driver_version", info.driver_version, "devices", lists.devices.list, "settings",
                       lists.settings.list);
fail:
  Py_XDECREF(lists.devices.list);
  Py_XDECREF(lists.settings.list);
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "fp8gemm: runtime_info could not build its result");
  return NULL;
}

static void on_device_stats(const fp8gemm_device_stats_t* d, void* user_data) {
  collect(user_data, Py_BuildValue("{s:i,s:K,s:K}", "device", d->device, "modules_loaded",
                                   (unsigned long long)d->modules_loaded, "plans", (unsigned long long)d->plans));
}

static PyObject* finish_collection(collector_t* c, fp8gemm_status_t status);

static PyObject* stats(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  fp8gemm_stats_t s = fp8gemm_default_stats();
  const fp8gemm_status_t status = p_fp8gemm_stats(&s);
  if (status != FP8GEMM_SUCCESS) return raise_status(status);
  collector_t devices = {PyList_New(0), 0};
  if (!devices.list) return NULL;
  PyObject* list = finish_collection(&devices, p_fp8gemm_device_stats(on_device_stats, &devices, NULL));
  if (!list) return NULL;
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:N}", "gemm_calls", (unsigned long long)s.gemm_calls,
                       "kernels_compiled", (unsigned long long)s.kernels_compiled, "problems_tuned",
                       (unsigned long long)s.problems_tuned, "tuned_plans", (unsigned long long)s.tuned_plans,
                       "disk_hits", (unsigned long long)s.disk_hits, "disk_rejected",
                       (unsigned long long)s.disk_rejected, "modules_loaded", (unsigned long long)s.modules_loaded,
                       "devices", list);
}

static void on_cached_kernel(const fp8gemm_cached_kernel_t* k, void* user_data) {
  collect(user_data, Py_BuildValue("{s:s,s:s,s:K,s:s,s:s,s:O}", "file", str_or_empty(k->file), "kernel",
                                   str_or_empty(k->kernel), "bytes", (unsigned long long)k->bytes, "category",
                                   str_or_empty(k->category), "status", str_or_empty(k->status), "stale",
                                   k->stale ? Py_True : Py_False));
}

static void on_tuning_database(const fp8gemm_cached_tuning_database_t* t, void* user_data) {
  /* (A library older than this header fills a shorter struct: no count there.) */
  const size_t stale = t->struct_size >= offsetof(fp8gemm_cached_tuning_database_t, problems_stale) + sizeof(size_t)
                           ? t->problems_stale
                           : 0;
  collect(user_data, Py_BuildValue("{s:s,s:s,s:O,s:n,s:s,s:s,s:s,s:i,s:i,s:n}", "file", str_or_empty(t->file), "status",
                                   str_or_empty(t->status), "readable", t->readable ? Py_True : Py_False, "problems",
                                   (Py_ssize_t)t->problems, "gpu", str_or_empty(t->gpu), "nvrtc",
                                   str_or_empty(t->nvrtc), "library", str_or_empty(t->library), "sms", t->sms,
                                   "driver", t->driver, "problems_stale", (Py_ssize_t)stale));
}

static PyObject* finish_collection(collector_t* c, fp8gemm_status_t status) {
  if (status != FP8GEMM_SUCCESS) {
    Py_DECREF(c->list);
    return raise_status(status);
  }
  if (c->failed) {
    Py_DECREF(c->list);
    return NULL;
  }
  return c->list;
}

static PyObject* cached_kernels(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  collector_t c = {PyList_New(0), 0};
  if (!c.list) return NULL;
  return finish_collection(&c, p_fp8gemm_cached_kernels(on_cached_kernel, &c, NULL));
}

static PyObject* cached_tuning_databases(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  collector_t c = {PyList_New(0), 0};
  if (!c.list) return NULL;
  return finish_collection(&c, p_fp8gemm_cached_tuning_databases(on_tuning_database, &c, NULL));
}

static PyObject* clear_report(fp8gemm_status_t status, const fp8gemm_cache_clear_report_t* r) {
  if (status != FP8GEMM_SUCCESS) return raise_status(status);
  PyObject* failed = string_list(r->failed, r->failed_count);
  if (!failed) return NULL;
  return Py_BuildValue("{s:n,s:n,s:n,s:N}", "kernels", (Py_ssize_t)r->kernels, "tuning_files",
                       (Py_ssize_t)r->tuning_files, "other", (Py_ssize_t)r->other, "failed", failed);
}

static PyObject* clear_cache(PyObject* self, PyObject* args) {
  (void)self;
  int kernels, tuning;
  if (check_loaded() < 0 || !PyArg_ParseTuple(args, "pp", &kernels, &tuning)) return NULL;
  fp8gemm_cache_clear_report_t r = fp8gemm_default_cache_clear_report();
  return clear_report(p_fp8gemm_clear_cache(kernels, tuning, &r), &r);
}

static PyObject* clear_stale_cache(PyObject* self, PyObject* unused) {
  (void)self;
  (void)unused;
  if (check_loaded() < 0) return NULL;
  fp8gemm_cache_clear_report_t r = fp8gemm_default_cache_clear_report();
  return clear_report(p_fp8gemm_clear_stale_cache(&r), &r);
}

/* tune's results arrive on the calling thread after the GIL was released: take it back. */
static void on_tune_result(const fp8gemm_tune_result_t* t, void* user_data) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* shape = shape_tuple(t->shape);
  collect(user_data, shape ? Py_BuildValue("{s:N,s:s,s:d,s:s,s:d,s:i}", "shape", shape, "heuristic_kernel",
                                           str_or_empty(t->heuristic_kernel), "heuristic_us", t->heuristic_us,
                                           "tuned_kernel", str_or_empty(t->tuned_kernel), "tuned_us", t->tuned_us,
                                           "candidates_timed", t->candidates_timed)
                           : NULL);
  PyGILState_Release(gil);
}

/* tune(shapes, candidates, jobs) -> list of result dicts. */
static PyObject* tune(PyObject* self, PyObject* args) {
  (void)self;
  PyObject* list;
  int candidates, jobs;
  if (check_loaded() < 0 || !PyArg_ParseTuple(args, "Oii", &list, &candidates, &jobs)) return NULL;
  size_t count = 0;
  fp8gemm_gemm_shape_t* shapes = read_shapes(list, &count);
  if (!shapes) return NULL;
  fp8gemm_tune_options_t options = fp8gemm_default_tune_options();
  options.candidates = candidates;
  options.jobs = jobs;
  collector_t c = {PyList_New(0), 0};
  if (!c.list) {
    PyMem_Free(shapes);
    return NULL;
  }
  fp8gemm_status_t status;
  CALL(status, p_fp8gemm_tune(shapes, count, &options, on_tune_result, &c, NULL));
  PyMem_Free(shapes);
  return finish_collection(&c, status);
}

/* ---- the module ---- */

static PyMethodDef methods[] = {
    {"open_library", open_library, METH_O, "open_library(path): dlopen the library and resolve its C API."},
    {"set_error_classes", set_error_classes, METH_O, "set_error_classes(tuple): exception class per status."},
    {"gemm_fp8_nt_fields", (PyCFunction)(void (*)(void))gemm_fp8_nt, METH_FASTCALL, NULL},
    {"gemm_fp8_nt", (PyCFunction)(void (*)(void))gemm_fp8_nt_entry, METH_FASTCALL | METH_KEYWORDS,
     "gemm_fp8_nt($module, a, a_scales, b, b_scales, out=None, *, config=None, b_constant=False, stream=None)\n--\n\n"
     "out [M, N] bf16 = a [M, K] x b [N, K]^T, with a's per-token (1x128) scales and b's per-block\n"
     "(128x128) scales. Returns out (allocated when None and a is a torch tensor).\n\n"
     "config: a KernelConfig (or dict) to run exactly that kernel; b_constant: b and b_scales are\n"
     "not written by anything still running on the stream (the C API's GemmOptions). stream: None\n"
     "(the current torch stream of the operands' device for torch tensors, else the legacy default\n"
     "stream), an int CUstream, or an object with cuda_stream / __cuda_stream__."},
    {"set_gemm_fallback", set_gemm_fallback, METH_O, "set_gemm_fallback(f): gemm_fp8_nt_entry's Python path."},
    {"gemm_fp8_nt_torch", (PyCFunction)(void (*)(void))gemm_fp8_nt_torch, METH_FASTCALL,
     "gemm_fp8_nt_torch(a, a_scales, b, b_scales, out, stream): out, or None when not the plain torch case."},
    {"gemm_fp8_nt_wgrad", (PyCFunction)(void (*)(void))gemm_fp8_nt_wgrad, METH_FASTCALL, NULL},
    {"gemm_fp8_nt_grouped_contiguous", (PyCFunction)(void (*)(void))gemm_fp8_nt_grouped_contiguous,
     METH_FASTCALL, NULL},
    {"gemm_fp8_nt_grouped_masked", (PyCFunction)(void (*)(void))gemm_fp8_nt_grouped_masked, METH_FASTCALL, NULL},
    {"gemm_fp8_nt_wgrad_k_grouped", (PyCFunction)(void (*)(void))gemm_fp8_nt_wgrad_k_grouped, METH_FASTCALL,
     NULL},
    {"quantize_per_token", (PyCFunction)(void (*)(void))quantize_per_token, METH_FASTCALL, NULL},
    {"quantize_per_block", (PyCFunction)(void (*)(void))quantize_per_block, METH_FASTCALL, NULL},
    {"quantize_transposed_per_token", (PyCFunction)(void (*)(void))quantize_transposed_per_token, METH_FASTCALL,
     NULL},
    {"transpose_fp8_block_scaled", (PyCFunction)(void (*)(void))transpose_fp8_block_scaled, METH_FASTCALL, NULL},
    {"convert_scales", (PyCFunction)(void (*)(void))convert_scales, METH_FASTCALL, NULL},
    {"version", version, METH_NOARGS, NULL},
    {"status_string", status_string, METH_O, NULL},
    {"last_error_message", last_error_message, METH_NOARGS, NULL},
    {"set_tuning_mode", set_tuning_mode, METH_O, NULL},
    {"get_tuning_mode", get_tuning_mode, METH_NOARGS, NULL},
    {"set_cache_only", set_cache_only, METH_O, NULL},
    {"get_cache_only", get_cache_only, METH_NOARGS, NULL},
    {"prewarm", prewarm, METH_VARARGS, NULL},
    {"kernel_name", kernel_name, METH_VARARGS, NULL},
    {"runtime_info", runtime_info, METH_NOARGS, NULL},
    {"stats", stats, METH_NOARGS, NULL},
    {"cached_kernels", cached_kernels, METH_NOARGS, NULL},
    {"cached_tuning_databases", cached_tuning_databases, METH_NOARGS, NULL},
    {"clear_cache", clear_cache, METH_VARARGS, NULL},
    {"clear_stale_cache", clear_stale_cache, METH_NOARGS, NULL},
    {"tune", tune, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "fp8gemm._native",
    "Calls into the fp8gemm C API; use the fp8gemm package, not this module.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
  PyObject* m = PyModule_Create(&module);
  if (!m) return NULL;
  s_dtype = PyUnicode_InternFromString("dtype");
  s_shape = PyUnicode_InternFromString("shape");
  s_stride = PyUnicode_InternFromString("stride");
  s_data_ptr = PyUnicode_InternFromString("data_ptr");
  s_get_device = PyUnicode_InternFromString("get_device");
  s_torch = PyUnicode_InternFromString("torch");
  s_out = PyUnicode_InternFromString("out");
  s_stream_kw = PyUnicode_InternFromString("stream");
  if (!s_dtype || !s_shape || !s_stride || !s_data_ptr || !s_get_device || !s_torch || !s_out || !s_stream_kw) {
    Py_DECREF(m);
    return NULL;
  }
  if (PyModule_AddIntConstant(m, "HEADER_VERSION_MAJOR", FP8GEMM_VERSION_MAJOR) < 0 ||
      PyModule_AddIntConstant(m, "HEADER_VERSION_MINOR", FP8GEMM_VERSION_MINOR) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
