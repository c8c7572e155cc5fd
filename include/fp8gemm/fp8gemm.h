/* fp8gemm C API: a plain C99 interface over the C++ API of fp8gemm.hpp.
 *
 * The C++ API is the primary one; every function here calls its C++ counterpart, so the
 * rules, defaults, errors and messages are the same, and fp8gemm.hpp documents them in full.
 * This header is usable from C99 and C++ alike and needs no C++ header.
 *
 * Errors. Every function that can fail returns an fp8gemm_status_t. No exception crosses
 * this interface. Each such call sets the calling thread's message: the full text of the
 * error when it fails (what the C++ API's Error::what() says, naming the rule that was
 * broken), the empty string when it succeeds. fp8gemm_last_error_message() returns it; the
 * pointer stays valid until the next status-returning fp8gemm_ call on the same thread.
 *
 * Strings and lists the library returns. `const char*` fields of a struct filled by a call
 * point into thread-local storage of the library: they stay valid until the next call of
 * the same function on the same thread (the struct's comment names the functions where two
 * share the storage). Lists of structs (devices, settings, cache files, tuning results) are
 * passed to callbacks one element at a time; such a struct and its strings are valid only
 * during the callback. The one function that writes into a caller's buffer is
 * fp8gemm_kernel_name.
 *
 * ABI promise (0.x releases; the shared library's soname changes with the major version):
 *   - Within a minor series (0.x.y -> 0.x.z) nothing of this header changes but comments.
 *   - A later minor version (0.x -> 0.x+1) may add functions, enum values and new trailing
 *     fields to the structs that begin with `size_t struct_size`; it never removes or
 *     reorders fields, never changes a function's signature, and never changes the meaning
 *     or number of an existing enum value. A struct's new fields start at or after its
 *     previous sizeof, so a caller built against an older header never covers them.
 *   - struct_size: the caller sets it to sizeof the struct as its header declares it (the
 *     fp8gemm_default_*() initializers below do). The library reads and writes only the
 *     first struct_size bytes: fields the caller's header lacks keep their defaults on the
 *     way in and are not written on the way out; fields a newer header has and this library
 *     lacks are ignored. A struct_size below the first version's layout is
 *     FP8GEMM_ERROR_INVALID_ARGUMENT. Structs handed to callbacks carry the library's size.
 *   - The operand descriptors (matrices, scales, inputs and outputs) have no struct_size:
 *     their layout is fixed for good (a new layout would be a new type).
 *   - The C++ API is the primary one: features appear there first and this interface
 *     follows; where a comment here and fp8gemm.hpp differ, fp8gemm.hpp is right.
 *
 * Streams are CUstream / cudaStream_t values (the same type); NULL is the legacy default
 * stream. GPU calls are asynchronous on that stream, as in the C++ API. */

#ifndef FP8GEMM_FP8GEMM_H
#define FP8GEMM_FP8GEMM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* FP8GEMM_VERSION_MAJOR / _MINOR / _PATCH / _STRING: the version of this header. */
#include "fp8gemm/version.hpp"

#if defined(FP8GEMM_BUILDING)
#define FP8GEMM_C_API __attribute__((visibility("default")))
#else
#define FP8GEMM_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;
typedef struct CUstream_st* fp8gemm_stream_t;

/* The enums below take any int: in C++ their underlying type is int (so a number a C caller
 * passes is a value of the type, and one the library does not know is answered with
 * FP8GEMM_ERROR_INVALID_ARGUMENT or "unknown status"); in C an enum is an int-sized type. */
#ifdef __cplusplus
#define FP8GEMM_ENUM_OF_INT_ : int
#else
#define FP8GEMM_ENUM_OF_INT_
#endif

/* ------------------------------------------------------------------------------------------
 * Status and messages
 * ---------------------------------------------------------------------------------------- */

/* One value per fp8gemm::ErrorCode, plus two of this interface. The numbers are fixed. */
typedef enum fp8gemm_status_t FP8GEMM_ENUM_OF_INT_ {
  FP8GEMM_SUCCESS = 0,
  FP8GEMM_ERROR_INVALID_ARGUMENT = 1,    /* a shape, pointer, leading dimension or layout breaks a rule */
  FP8GEMM_ERROR_NO_DRIVER = 2,           /* libcuda.so.1 could not be loaded */
  FP8GEMM_ERROR_NO_DEVICE = 3,           /* a driver but no usable CUDA device or context */
  FP8GEMM_ERROR_UNSUPPORTED_DEVICE = 4,  /* the device is not sm_90 */
  FP8GEMM_ERROR_COMPILE_FAILED = 5,      /* NVRTC rejected a generated kernel (the message holds the log) */
  FP8GEMM_ERROR_CUDA = 6,                /* a CUDA driver call failed */
  FP8GEMM_ERROR_INTERNAL = 7,            /* a bug in fp8gemm, or an unexpected exception */
  FP8GEMM_ERROR_NOT_CACHED = 8,          /* cache-only mode and the kernel is not in the disk cache */
  FP8GEMM_ERROR_OUT_OF_MEMORY = 9,       /* host memory ran out (std::bad_alloc) */
  FP8GEMM_ERROR_BUFFER_TOO_SMALL = 10    /* a caller buffer cannot hold the result (see fp8gemm_kernel_name) */
} fp8gemm_status_t;

/* A short constant description of a status ("invalid argument", "no CUDA driver", ...);
 * "unknown status" for a number this library does not know. Never NULL. */
FP8GEMM_C_API const char* fp8gemm_status_string(fp8gemm_status_t status);

/* The message of this thread's last status-returning call: the error text after a failure,
 * "" after a success. Never NULL; valid until the next such call on this thread. */
FP8GEMM_C_API const char* fp8gemm_last_error_message(void);

/* The library's version (any pointer may be NULL) and "major.minor.patch". Compare with the
 * FP8GEMM_VERSION_* macros to detect a library other than the header's. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_version(int* major, int* minor, int* patch);
FP8GEMM_C_API const char* fp8gemm_version_string(void);

/* ------------------------------------------------------------------------------------------
 * Limits and layout helpers (fp8gemm.hpp: "Size limits", per_token_scales, block_scales)
 * ---------------------------------------------------------------------------------------- */

#define FP8GEMM_MAX_DIMENSION INT64_C(2147482624) /* 2^31 - 1024: M, N, K, groups, strides */
#define FP8GEMM_MAX_K_1D2D INT64_C(1048576)       /* K of gemm_fp8_nt and the m-grouped GEMMs */
#define FP8GEMM_MAX_TILES FP8GEMM_MAX_DIMENSION   /* output tiles of one call */
#define FP8GEMM_GROUPED_SEGMENT_ROWS INT64_C(128) /* contiguous grouped segments start at multiples */

/* Operand descriptors: device pointers, sizes and strides in elements. Fixed layouts. */

/* e4m3, row-major, K contiguous: element (r, c) at data[r * ld + c]. ld >= cols, ld % 16 == 0. */
typedef struct fp8gemm_fp8_matrix_t {
  const void* data;
  int64_t rows;
  int64_t cols;
  int64_t ld;
} fp8gemm_fp8_matrix_t;

/* bf16 output, row-major (2 bytes per element). ld >= cols, ld % 8 == 0. */
typedef struct fp8gemm_bf16_matrix_t {
  void* data;
  int64_t rows;
  int64_t cols;
  int64_t ld;
} fp8gemm_bf16_matrix_t;

/* fp32 matrix, row-major. ld >= cols, ld % 4 == 0. */
typedef struct fp8gemm_fp32_matrix_t {
  float* data;
  int64_t rows;
  int64_t cols;
  int64_t ld;
} fp8gemm_fp32_matrix_t;

/* fp32 scales: element (r, c) at data[r * row_stride + c * col_stride]. */
typedef struct fp8gemm_scale_matrix_t {
  const float* data;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
  int64_t col_stride;
} fp8gemm_scale_matrix_t;

/* bf16 input of the quantizers, row-major. ld >= cols, ld % 8 == 0. */
typedef struct fp8gemm_bf16_input_t {
  const void* data;
  int64_t rows;
  int64_t cols;
  int64_t ld;
} fp8gemm_bf16_input_t;

/* e4m3 output of the quantizers. ld >= cols, ld % 16 == 0. */
typedef struct fp8gemm_fp8_output_t {
  void* data;
  int64_t rows;
  int64_t cols;
  int64_t ld;
} fp8gemm_fp8_output_t;

/* fp32 scales to write; one stride is 1, the other spans its dimension. */
typedef struct fp8gemm_scale_output_t {
  float* data;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
  int64_t col_stride;
} fp8gemm_scale_output_t;

/* Number of 128-wide blocks covering k; without overflow for any k. */
static inline int64_t fp8gemm_scale_blocks(int64_t k) { return k > 0 ? k / 128 + (k % 128 != 0) : (k + 127) / 128; }

/* Column stride of per-token scales for m rows: m rounded up to 4 floats; without overflow
   for any m (INT64_MAX where the multiple of 4 is past it). */
static inline int64_t fp8gemm_per_token_scale_stride(int64_t m) { return m <= INT64_MAX - 3 ? (m + 3) / 4 * 4 : INT64_MAX; }

/* Columns a group of k columns occupies in gemm_fp8_nt_wgrad_k_grouped's A and B; without
   overflow for any k (INT64_MAX where the multiple of 128 is past it). */
static inline int64_t fp8gemm_k_grouped_columns(int64_t k) {
  return k <= 0 ? 0 : k <= INT64_MAX - 127 ? (k + 127) / 128 * 128 : INT64_MAX;
}

/* Per-token (1x128) scales of an [m, k] operand, M-major, as the GEMMs read them. */
static inline fp8gemm_scale_matrix_t fp8gemm_per_token_scales(const float* data, int64_t m, int64_t k) {
  fp8gemm_scale_matrix_t s;
  s.data = data;
  s.rows = m;
  s.cols = fp8gemm_scale_blocks(k);
  s.row_stride = 1;
  s.col_stride = fp8gemm_per_token_scale_stride(m);
  return s;
}

/* Per-block (128x128) scales of an [n, k] operand, row-major. */
static inline fp8gemm_scale_matrix_t fp8gemm_block_scales(const float* data, int64_t n, int64_t k) {
  fp8gemm_scale_matrix_t s;
  s.data = data;
  s.rows = fp8gemm_scale_blocks(n);
  s.cols = fp8gemm_scale_blocks(k);
  s.row_stride = fp8gemm_scale_blocks(k);
  s.col_stride = 1;
  return s;
}

/* The same layouts as quantizer outputs. */
static inline fp8gemm_scale_output_t fp8gemm_per_token_scale_output(float* data, int64_t m, int64_t k) {
  fp8gemm_scale_output_t s;
  s.data = data;
  s.rows = m;
  s.cols = fp8gemm_scale_blocks(k);
  s.row_stride = 1;
  s.col_stride = fp8gemm_per_token_scale_stride(m);
  return s;
}

static inline fp8gemm_scale_output_t fp8gemm_block_scale_output(float* data, int64_t n, int64_t k) {
  fp8gemm_scale_output_t s;
  s.data = data;
  s.rows = fp8gemm_scale_blocks(n);
  s.cols = fp8gemm_scale_blocks(k);
  s.row_stride = fp8gemm_scale_blocks(k);
  s.col_stride = 1;
  return s;
}

/* ------------------------------------------------------------------------------------------
 * GEMMs (fp8gemm.hpp "GEMMs" and "Grouped GEMMs" for the rules). Descriptor pointers must
 * not be NULL unless stated; a NULL descriptor is FP8GEMM_ERROR_INVALID_ARGUMENT.
 * ---------------------------------------------------------------------------------------- */

typedef struct fp8gemm_gemm_options_t {
  size_t struct_size;
  int b_constant; /* nonzero: GemmOptions::b_constant (B and b_scales constant while the call may run) */
} fp8gemm_gemm_options_t;

/* Declares `var` of a versioned struct type, zeroed, with struct_size = sizeof as this header
 * declares it: where every fp8gemm_default_*() initializer starts. */
#define FP8GEMM_STRUCT_INIT_(type, var) \
  type var;                             \
  memset(&var, 0, sizeof var);          \
  var.struct_size = sizeof var

static inline fp8gemm_gemm_options_t fp8gemm_default_gemm_options(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_gemm_options_t, o);
  return o;
}

/* A kernel's tile configuration (KernelConfig); the defaults are the C++ defaults. */
typedef struct fp8gemm_kernel_config_t {
  size_t struct_size;
  int block_m;
  int block_n;
  int stages;
  int group_n;
  int multicast;
  int tma_store;
  int split_k;
} fp8gemm_kernel_config_t;

static inline fp8gemm_kernel_config_t fp8gemm_default_kernel_config(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_kernel_config_t, c);
  c.block_m = 128;
  c.block_n = 128;
  c.stages = 4;
  c.group_n = 8;
  c.multicast = 0;
  c.tma_store = -1;
  c.split_k = 1;
  return c;
}

/* D [M,N] bf16 = A [M,K] x B [N,K]^T (gemm_fp8_nt). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt(const fp8gemm_fp8_matrix_t* a,
                                                   const fp8gemm_scale_matrix_t* a_scales,
                                                   const fp8gemm_fp8_matrix_t* b,
                                                   const fp8gemm_scale_matrix_t* b_scales,
                                                   const fp8gemm_bf16_matrix_t* d, fp8gemm_stream_t stream);

/* The same with options (NULL = the defaults). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_with_options(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_bf16_matrix_t* d, const fp8gemm_gemm_options_t* options,
    fp8gemm_stream_t stream);

/* The same with exactly `config` (not NULL); an illegal config is FP8GEMM_ERROR_INVALID_ARGUMENT. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_with_config(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_bf16_matrix_t* d, const fp8gemm_kernel_config_t* config,
    fp8gemm_stream_t stream);

/* Weight gradient: D [M,N] fp32 = C + A x B^T, per-token scales on both (gemm_fp8_nt_wgrad).
 * c: NULL (C = 0), a descriptor of D's memory (accumulate in place) or a separate matrix. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_wgrad(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_fp32_matrix_t* d, const fp8gemm_fp32_matrix_t* c,
    fp8gemm_stream_t stream);

/* The same with exactly `config` (the C++ gemm_fp8_nt_wgrad overload with a KernelConfig). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_wgrad_with_config(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_fp32_matrix_t* d, const fp8gemm_fp32_matrix_t* c,
    const fp8gemm_kernel_config_t* config, fp8gemm_stream_t stream);

/* m-grouped contiguous: group_of_row [M] int32 on the device (gemm_fp8_nt_grouped_contiguous). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_grouped_contiguous(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_bf16_matrix_t* d, const int32_t* group_of_row,
    int64_t groups, fp8gemm_stream_t stream);

/* m-grouped masked: masked_m [groups] int32 on the device (gemm_fp8_nt_grouped_masked). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_grouped_masked(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_bf16_matrix_t* d, const int32_t* masked_m, int64_t groups,
    int64_t expected_m, fp8gemm_stream_t stream);

/* k-grouped weight gradient: group_k [groups] int32 on the device (gemm_fp8_nt_wgrad_k_grouped). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_wgrad_k_grouped(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_fp32_matrix_t* d, const fp8gemm_fp32_matrix_t* c,
    const int32_t* group_k, int64_t groups, fp8gemm_stream_t stream);

/* The three grouped GEMMs with exactly `config` (not NULL): the C++ overloads with a
 * KernelConfig; an illegal config is FP8GEMM_ERROR_INVALID_ARGUMENT. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_grouped_contiguous_with_config(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_bf16_matrix_t* d, const int32_t* group_of_row,
    int64_t groups, const fp8gemm_kernel_config_t* config, fp8gemm_stream_t stream);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_grouped_masked_with_config(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_bf16_matrix_t* d, const int32_t* masked_m, int64_t groups,
    int64_t expected_m, const fp8gemm_kernel_config_t* config, fp8gemm_stream_t stream);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_gemm_fp8_nt_wgrad_k_grouped_with_config(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_fp32_matrix_t* d, const fp8gemm_fp32_matrix_t* c,
    const int32_t* group_k, int64_t groups, const fp8gemm_kernel_config_t* config, fp8gemm_stream_t stream);

/* ------------------------------------------------------------------------------------------
 * Quantization and layout conversion (fp8gemm.hpp "Quantization")
 * ---------------------------------------------------------------------------------------- */

typedef struct fp8gemm_quantize_options_t {
  size_t struct_size;
  int pow2_scales; /* nonzero: scales rounded up to powers of two */
} fp8gemm_quantize_options_t;

static inline fp8gemm_quantize_options_t fp8gemm_default_quantize_options(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_quantize_options_t, o);
  return o;
}

/* options may be NULL (the defaults). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_quantize_per_token(const fp8gemm_bf16_input_t* x, const fp8gemm_fp8_output_t* q,
                                                          const fp8gemm_scale_output_t* scales,
                                                          const fp8gemm_quantize_options_t* options,
                                                          fp8gemm_stream_t stream);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_quantize_per_block(const fp8gemm_bf16_input_t* x, const fp8gemm_fp8_output_t* q,
                                                          const fp8gemm_scale_output_t* scales,
                                                          const fp8gemm_quantize_options_t* options,
                                                          fp8gemm_stream_t stream);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_quantize_transposed_per_token(const fp8gemm_bf16_input_t* x,
                                                                     const fp8gemm_fp8_output_t* q,
                                                                     const fp8gemm_scale_output_t* scales,
                                                                     const fp8gemm_quantize_options_t* options,
                                                                     fp8gemm_stream_t stream);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_transpose_fp8_block_scaled(const fp8gemm_fp8_matrix_t* w,
                                                                  const fp8gemm_scale_matrix_t* w_scales,
                                                                  const fp8gemm_fp8_output_t* wt,
                                                                  const fp8gemm_scale_output_t* wt_scales,
                                                                  fp8gemm_stream_t stream);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_convert_scales(const fp8gemm_scale_matrix_t* in,
                                                      const fp8gemm_scale_output_t* out, fp8gemm_stream_t stream);

/* ------------------------------------------------------------------------------------------
 * Shapes, prewarm and kernel names (fp8gemm.hpp "Kernel cache" and "Introspection")
 * ---------------------------------------------------------------------------------------- */

typedef enum fp8gemm_gemm_kind_t FP8GEMM_ENUM_OF_INT_ {
  FP8GEMM_GEMM_FORWARD = 0,
  FP8GEMM_GEMM_WEIGHT_GRADIENT = 1,
  FP8GEMM_GEMM_GROUPED_CONTIGUOUS = 2,
  FP8GEMM_GEMM_GROUPED_MASKED = 3,
  FP8GEMM_GEMM_K_GROUPED_WEIGHT_GRADIENT = 4
} fp8gemm_gemm_kind_t;

/* Arrays of shapes are read with the stride shapes[0].struct_size; every element must carry
 * the same struct_size. */
typedef struct fp8gemm_gemm_shape_t {
  size_t struct_size;
  int64_t m;
  int64_t n;
  int64_t k;
  fp8gemm_gemm_kind_t kind;
  int64_t groups; /* the grouped kinds' groups (1 = unknown) */
} fp8gemm_gemm_shape_t;

static inline fp8gemm_gemm_shape_t fp8gemm_make_gemm_shape(int64_t m, int64_t n, int64_t k, fp8gemm_gemm_kind_t kind,
                                                           int64_t groups) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_gemm_shape_t, s);
  s.m = m;
  s.n = n;
  s.k = k;
  s.kind = kind;
  s.groups = groups;
  return s;
}

static inline fp8gemm_gemm_shape_t fp8gemm_default_gemm_shape(void) {
  return fp8gemm_make_gemm_shape(0, 0, 0, FP8GEMM_GEMM_FORWARD, 1);
}

/* Passed to fp8gemm_prewarm_options_t::on_progress after each kernel, from the worker thread
 * that finished it (calls are serialized). */
typedef struct fp8gemm_prewarm_progress_t {
  size_t struct_size;
  size_t done;
  size_t total;
  const char* kernel;
  int compiled;
  const char* source; /* "compiled", "on disk" or "shared" */
  double elapsed_s;
} fp8gemm_prewarm_progress_t;

typedef void (*fp8gemm_prewarm_progress_fn)(const fp8gemm_prewarm_progress_t* progress, void* user_data);

typedef struct fp8gemm_prewarm_options_t {
  size_t struct_size;
  int jobs;    /* compile threads; 0 = one per hardware thread */
  int num_sms; /* 0 = the current device's, else 132 */
  fp8gemm_prewarm_progress_fn on_progress; /* may be NULL */
  void* user_data;                         /* passed to on_progress */
  int b_constant;                          /* also build the GemmOptions::b_constant variants */
} fp8gemm_prewarm_options_t;

static inline fp8gemm_prewarm_options_t fp8gemm_default_prewarm_options(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_prewarm_options_t, o);
  return o;
}

/* PrewarmReport. kernel_names (kernel_name_count entries) and not_saved_reason live in
 * thread-local storage until the next fp8gemm_prewarm call on this thread. */
typedef struct fp8gemm_prewarm_report_t {
  size_t struct_size;
  size_t shapes;
  size_t kernels;
  size_t compiled;
  size_t from_disk;
  size_t from_memory;
  int num_sms;
  double seconds;
  size_t kernel_name_count;
  const char* const* kernel_names;
  size_t compiled_and_skipped;
  size_t not_saved;
  const char* not_saved_reason; /* "" when not_saved == 0 */
} fp8gemm_prewarm_report_t;

static inline fp8gemm_prewarm_report_t fp8gemm_default_prewarm_report(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_prewarm_report_t, r);
  return r;
}

/* prewarm(): shapes may be NULL when count is 0; options and report may be NULL. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_prewarm(const fp8gemm_gemm_shape_t* shapes, size_t count,
                                               const fp8gemm_prewarm_options_t* options,
                                               fp8gemm_prewarm_report_t* report);

/* kernel_name(shape[, options]) written into buffer as a NUL-terminated string; options may
 * be NULL. *needed (may be NULL) receives the bytes the name needs, NUL included. buffer NULL
 * with capacity 0 asks only for the size. A buffer shorter than needed receives as much of
 * the name as fits, NUL-terminated, and the call returns FP8GEMM_ERROR_BUFFER_TOO_SMALL; a
 * buffer with capacity 0 receives nothing (not even the NUL) and gets the same status. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_kernel_name(const fp8gemm_gemm_shape_t* shape,
                                                   const fp8gemm_gemm_options_t* options, char* buffer,
                                                   size_t capacity, size_t* needed);

/* ------------------------------------------------------------------------------------------
 * Runtime information and counters
 * ---------------------------------------------------------------------------------------- */

typedef struct fp8gemm_device_info_t {
  size_t struct_size;
  int ordinal;
  const char* name;
  int cc_major;
  int cc_minor;
  int sm_count;
  size_t memory_bytes;
  int supported; /* sm_90 */
} fp8gemm_device_info_t;

typedef struct fp8gemm_setting_t {
  size_t struct_size;
  const char* name;
  const char* value;
  const char* source;
} fp8gemm_setting_t;

typedef void (*fp8gemm_device_info_fn)(const fp8gemm_device_info_t* device, void* user_data);
typedef void (*fp8gemm_setting_fn)(const fp8gemm_setting_t* setting, void* user_data);

/* RuntimeInfo. The strings live in thread-local storage until the next fp8gemm_runtime_info
 * call on this thread; the devices and settings are passed to the callbacks. */
typedef struct fp8gemm_runtime_info_t {
  size_t struct_size;
  const char* library_version;
  const char* nvrtc_version;
  const char* cache_dir;
  const char* cache_state;
  const char* driver;
  int driver_version; /* 0 without a usable driver */
  size_t device_count;
  size_t setting_count;
} fp8gemm_runtime_info_t;

static inline fp8gemm_runtime_info_t fp8gemm_default_runtime_info(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_runtime_info_t, i);
  return i;
}

/* info must not be NULL; on_device and on_setting may be NULL. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_runtime_info(fp8gemm_runtime_info_t* info, fp8gemm_device_info_fn on_device,
                                                    fp8gemm_setting_fn on_setting, void* user_data);

typedef struct fp8gemm_stats_t {
  size_t struct_size;
  uint64_t gemm_calls;
  uint64_t kernels_compiled;
  uint64_t problems_tuned;
  uint64_t tuned_plans;
  uint64_t disk_hits;
  uint64_t disk_rejected;
  uint64_t modules_loaded;
} fp8gemm_stats_t;

static inline fp8gemm_stats_t fp8gemm_default_stats(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_stats_t, s);
  return s;
}

FP8GEMM_C_API fp8gemm_status_t fp8gemm_stats(fp8gemm_stats_t* stats);

/* DeviceStats: what the library has done on one device (all its contexts). */
typedef struct fp8gemm_device_stats_t {
  size_t struct_size;
  int device;              /* ordinal */
  uint64_t modules_loaded; /* kernels loaded onto this device */
  uint64_t plans;          /* problems planned for it (first calls of a shape) */
} fp8gemm_device_stats_t;

typedef void (*fp8gemm_device_stats_fn)(const fp8gemm_device_stats_t* device, void* user_data);

/* Stats::devices: calls on_device (if not NULL) for each device the library has run on, in
 * ordinal order, and stores their number in *count (if not NULL). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_device_stats(fp8gemm_device_stats_fn on_device, void* user_data,
                                                    size_t* count);

/* ------------------------------------------------------------------------------------------
 * The disk cache: listing and clearing
 * ---------------------------------------------------------------------------------------- */

typedef struct fp8gemm_cached_kernel_t {
  size_t struct_size;
  const char* file;
  const char* kernel;
  uint64_t bytes;
  const char* category; /* "entry", "temporary" or "stray" */
  const char* status;
  int stale;
} fp8gemm_cached_kernel_t;

typedef void (*fp8gemm_cached_kernel_fn)(const fp8gemm_cached_kernel_t* kernel, void* user_data);

/* cached_kernels(): each file to on_kernel (may be NULL), in order; *count (may be NULL) = how many. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_cached_kernels(fp8gemm_cached_kernel_fn on_kernel, void* user_data,
                                                      size_t* count);

typedef struct fp8gemm_cached_tuning_database_t {
  size_t struct_size;
  const char* file;
  const char* status;
  int readable;
  size_t problems;
  const char* gpu;
  const char* nvrtc;
  const char* library;
  int sms;
  int driver;
  size_t problems_stale; /* entries this build does not use (see CachedTuningDatabase in fp8gemm.hpp) */
} fp8gemm_cached_tuning_database_t;

typedef void (*fp8gemm_cached_tuning_database_fn)(const fp8gemm_cached_tuning_database_t* database,
                                                  void* user_data);

FP8GEMM_C_API fp8gemm_status_t fp8gemm_cached_tuning_databases(fp8gemm_cached_tuning_database_fn on_database,
                                                               void* user_data, size_t* count);

/* CacheClearReport. failed (failed_count "<path>: <reason>" strings) lives in thread-local
 * storage until the next fp8gemm_clear_cache / fp8gemm_clear_stale_cache call on this thread. */
typedef struct fp8gemm_cache_clear_report_t {
  size_t struct_size;
  size_t kernels;
  size_t tuning_files;
  size_t other;
  size_t failed_count;
  const char* const* failed;
} fp8gemm_cache_clear_report_t;

static inline fp8gemm_cache_clear_report_t fp8gemm_default_cache_clear_report(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_cache_clear_report_t, r);
  return r;
}

/* report may be NULL. kernels / tuning: nonzero to delete that part of the cache. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_clear_cache(int kernels, int tuning, fp8gemm_cache_clear_report_t* report);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_clear_stale_cache(fp8gemm_cache_clear_report_t* report);

/* ------------------------------------------------------------------------------------------
 * Tuning (fp8gemm.hpp "Tuning")
 * ---------------------------------------------------------------------------------------- */

typedef enum fp8gemm_tuning_mode_t FP8GEMM_ENUM_OF_INT_ {
  FP8GEMM_TUNING_OFF = 0,
  FP8GEMM_TUNING_CACHED = 1,
  FP8GEMM_TUNING_ON = 2
} fp8gemm_tuning_mode_t;

FP8GEMM_C_API fp8gemm_status_t fp8gemm_set_tuning_mode(fp8gemm_tuning_mode_t mode);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_get_tuning_mode(fp8gemm_tuning_mode_t* mode);
/* cache_only: nonzero = on. */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_set_cache_only(int cache_only);
FP8GEMM_C_API fp8gemm_status_t fp8gemm_get_cache_only(int* cache_only);

typedef struct fp8gemm_tune_progress_t {
  size_t struct_size;
  size_t done;
  size_t total;
  const fp8gemm_gemm_shape_t* shape; /* the one just finished */
  const char* kernel;                /* its winner */
  double elapsed_s;
} fp8gemm_tune_progress_t;

typedef void (*fp8gemm_tune_progress_fn)(const fp8gemm_tune_progress_t* progress, void* user_data);

typedef struct fp8gemm_tune_options_t {
  size_t struct_size;
  int candidates; /* configs timed per problem (default 8) */
  int jobs;       /* compile threads; 0 = one per hardware thread */
  fp8gemm_tune_progress_fn on_progress; /* may be NULL */
  void* user_data;                      /* passed to on_progress */
} fp8gemm_tune_options_t;

static inline fp8gemm_tune_options_t fp8gemm_default_tune_options(void) {
  FP8GEMM_STRUCT_INIT_(fp8gemm_tune_options_t, o);
  o.candidates = 8;
  return o;
}

typedef struct fp8gemm_tune_result_t {
  size_t struct_size;
  const fp8gemm_gemm_shape_t* shape;
  const char* heuristic_kernel;
  double heuristic_us;
  const char* tuned_kernel;
  double tuned_us;
  int candidates_timed;
} fp8gemm_tune_result_t;

typedef void (*fp8gemm_tune_result_fn)(const fp8gemm_tune_result_t* result, void* user_data);

/* tune(): each result to on_result (may be NULL) once all are measured; *result_count (may
 * be NULL) = how many. options may be NULL (the defaults). */
FP8GEMM_C_API fp8gemm_status_t fp8gemm_tune(const fp8gemm_gemm_shape_t* shapes, size_t count,
                                            const fp8gemm_tune_options_t* options, fp8gemm_tune_result_fn on_result,
                                            void* user_data, size_t* result_count);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#undef FP8GEMM_ENUM_OF_INT_

#endif /* FP8GEMM_FP8GEMM_H */
