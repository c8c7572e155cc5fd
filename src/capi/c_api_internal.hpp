#pragma once

// What the C API's functions share: the exception barrier, the thread's message, the checks
// of the C layer (null descriptors, struct_size) and the conversions to the C++ types.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/fp8gemm.hpp"
#include "util/error.hpp"

namespace fp8gemm::capi {

// Records a failure as this thread's message and returns its status. Never throws: a message
// that cannot be stored is replaced by a fixed one.
fp8gemm_status_t record_failure(fp8gemm_status_t status, const char* message) noexcept;
// Empties this thread's message (a successful call).
void record_success() noexcept;

fp8gemm_status_t status_of(ErrorCode code) noexcept;

// A failure of the C layer itself with a status no ErrorCode has (a buffer too small).
struct StatusError {
  fp8gemm_status_t status;
  std::string message;
};

// Runs `body` and turns whatever it throws into a status and this thread's message: no
// exception may unwind into C code.
template <typename Body>
fp8gemm_status_t guarded(Body&& body) noexcept {
  try {
    body();
    record_success();
    return FP8GEMM_SUCCESS;
  } catch (const Error& e) {
    return record_failure(status_of(e.code()), e.what());
  } catch (const StatusError& e) {
    return record_failure(e.status, e.message.c_str());
  } catch (const std::bad_alloc&) {
    return record_failure(FP8GEMM_ERROR_OUT_OF_MEMORY, "fp8gemm: out of memory: host memory ran out");
  } catch (const std::exception& e) {
    try {
      return record_failure(FP8GEMM_ERROR_INTERNAL, (std::string("fp8gemm: internal error: ") + e.what()).c_str());
    } catch (...) {
      return record_failure(FP8GEMM_ERROR_INTERNAL, "fp8gemm: internal error: an exception");
    }
  } catch (...) {
    return record_failure(FP8GEMM_ERROR_INTERNAL, "fp8gemm: internal error: an exception of unknown type");
  }
}

template <typename... Args>
[[noreturn]] void invalid(fmt::format_string<Args...> format, Args&&... args) {
  detail::fail(ErrorCode::InvalidArgument, format, std::forward<Args>(args)...);
}

// The pointer `p` (named `name` in the message of `fn`) must be given: `what` says what it
// points to.
template <typename T>
T& required(T* p, const char* fn, const char* name, const char* what = "a descriptor") {
  if (p == nullptr) invalid("{}: {} is NULL; pass a pointer to {}", fn, name, what);
  return *p;
}

// Where a struct's first (0.1) layout ends: a smaller struct_size cannot be one of ours. Later
// fields start at or after the previous sizeof, so these stay as they are when structs grow.
template <typename T>
constexpr size_t first_size();
#define FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(type, last_field)           \
  template <>                                                        \
  constexpr size_t first_size<type>() {                              \
    return offsetof(type, last_field) + sizeof(type::last_field);    \
  }
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_gemm_options_t, b_constant)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_kernel_config_t, split_k)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_quantize_options_t, pow2_scales)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_gemm_shape_t, groups)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_prewarm_options_t, b_constant)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_prewarm_report_t, not_saved_reason)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_runtime_info_t, setting_count)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_stats_t, modules_loaded)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_cache_clear_report_t, failed)
FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH(fp8gemm_tune_options_t, user_data)
#undef FP8GEMM_C_FIRST_LAYOUT_ENDS_WITH

// The caller's struct_size must cover at least the first layout.
template <typename T>
void check_struct_size(const T& s, const char* fn, const char* name) {
  if (s.struct_size < first_size<T>())
    invalid("{}: {}->struct_size = {} is smaller than any version of the struct ({} bytes); set it to sizeof "
            "(the fp8gemm_default_*() initializers do)",
            fn, name, s.struct_size, first_size<T>());
}

// A versioned input: the caller's first struct_size bytes over `defaults` (NULL = defaults).
template <typename T>
T read_versioned(const T* in, T defaults, const char* fn, const char* name) {
  if (in == nullptr) return defaults;
  check_struct_size(*in, fn, name);
  std::memcpy(&defaults, in, std::min(in->struct_size, sizeof(T)));
  defaults.struct_size = sizeof(T);
  return defaults;
}

// A versioned output: only the first struct_size bytes of the caller's struct are written.
template <typename T>
void write_versioned(T* out, T value) {
  const size_t size = out->struct_size;
  value.struct_size = size;
  std::memcpy(out, &value, std::min(size, sizeof(T)));
}

// A zeroed struct of the library's own size, for callbacks.
template <typename T>
T library_struct() {
  T s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  return s;
}

// A listing entry point: reports how many `items` there are through `count` (if given), then
// hands each to `on_item` (if given) as a C struct of the library's size filled by
// `fill(item, c)`; the struct's strings point into `items` and last for the callback.
template <typename CStruct, typename Item, typename Fill>
void report_items(const std::vector<Item>& items, void (*on_item)(const CStruct*, void*), void* user_data,
                  size_t* count, Fill&& fill) {
  if (count != nullptr) *count = items.size();
  if (on_item == nullptr) return;
  for (const Item& item : items) {
    CStruct c = library_struct<CStruct>();
    fill(item, c);
    on_item(&c, user_data);
  }
}

inline Fp8Matrix to_cpp(const fp8gemm_fp8_matrix_t& m) { return {m.data, m.rows, m.cols, m.ld}; }
inline Bf16Matrix to_cpp(const fp8gemm_bf16_matrix_t& m) { return {m.data, m.rows, m.cols, m.ld}; }
inline Fp32Matrix to_cpp(const fp8gemm_fp32_matrix_t& m) { return {m.data, m.rows, m.cols, m.ld}; }
inline ScaleMatrix to_cpp(const fp8gemm_scale_matrix_t& s) {
  return {s.data, s.rows, s.cols, s.row_stride, s.col_stride};
}
inline Bf16Input to_cpp(const fp8gemm_bf16_input_t& m) { return {m.data, m.rows, m.cols, m.ld}; }
inline Fp8Output to_cpp(const fp8gemm_fp8_output_t& m) { return {m.data, m.rows, m.cols, m.ld}; }
inline ScaleOutput to_cpp(const fp8gemm_scale_output_t& s) {
  return {s.data, s.rows, s.cols, s.row_stride, s.col_stride};
}

GemmShape to_cpp(const fp8gemm_gemm_shape_t& s);
fp8gemm_gemm_shape_t to_c(const GemmShape& s);
GemmOptions read_gemm_options(const fp8gemm_gemm_options_t* options, const char* fn);

// An array of shapes, read with the stride of the caller's struct (shapes[0].struct_size).
std::vector<GemmShape> read_shapes(const fp8gemm_gemm_shape_t* shapes, size_t count, const char* fn);

// C strings of `strings`, kept beside them (the pointers live as long as `strings` does).
std::vector<const char*> c_strings(const std::vector<std::string>& strings);

}  // namespace fp8gemm::capi
