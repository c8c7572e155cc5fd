// The C API's status, messages and version, and the conversions its functions share.

#include "capi/c_api_internal.hpp"
#include "fp8gemm/version.hpp"

namespace fp8gemm::capi {

static_assert(FP8GEMM_MAX_DIMENSION == kMaxDimension && FP8GEMM_MAX_K_1D2D == kMaxK1D2D &&
                  FP8GEMM_MAX_TILES == kMaxTiles && FP8GEMM_GROUPED_SEGMENT_ROWS == kGroupedSegmentRows,
              "the C limits are the C++ ones");
static_assert(int(FP8GEMM_GEMM_FORWARD) == int(GemmKind::Forward) &&
                  int(FP8GEMM_GEMM_WEIGHT_GRADIENT) == int(GemmKind::WeightGradient) &&
                  int(FP8GEMM_GEMM_GROUPED_CONTIGUOUS) == int(GemmKind::GroupedContiguous) &&
                  int(FP8GEMM_GEMM_GROUPED_MASKED) == int(GemmKind::GroupedMasked) &&
                  int(FP8GEMM_GEMM_K_GROUPED_WEIGHT_GRADIENT) == int(GemmKind::KGroupedWeightGradient),
              "GemmKind values are cast across");
static_assert(int(FP8GEMM_TUNING_OFF) == int(TuningMode::Off) &&
                  int(FP8GEMM_TUNING_CACHED) == int(TuningMode::Cached) &&
                  int(FP8GEMM_TUNING_ON) == int(TuningMode::On),
              "TuningMode values are cast across");

namespace {

// The message of this thread's last status-returning call. `fallback` replaces it when the
// text could not be stored (no memory for the string).
thread_local std::string t_message;
thread_local const char* t_fallback = nullptr;

}  // namespace

fp8gemm_status_t record_failure(fp8gemm_status_t status, const char* message) noexcept {
  try {
    t_message = message;
    t_fallback = nullptr;
  } catch (...) {
    t_fallback = "fp8gemm: the error message could not be stored (out of memory)";
  }
  return status;
}

void record_success() noexcept {
  t_message.clear();  // keeps the capacity: never allocates
  t_fallback = nullptr;
}

fp8gemm_status_t status_of(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidArgument: return FP8GEMM_ERROR_INVALID_ARGUMENT;
    case ErrorCode::NoDriver: return FP8GEMM_ERROR_NO_DRIVER;
    case ErrorCode::NoDevice: return FP8GEMM_ERROR_NO_DEVICE;
    case ErrorCode::UnsupportedDevice: return FP8GEMM_ERROR_UNSUPPORTED_DEVICE;
    case ErrorCode::CompileFailed: return FP8GEMM_ERROR_COMPILE_FAILED;
    case ErrorCode::CudaError: return FP8GEMM_ERROR_CUDA;
    case ErrorCode::Internal: return FP8GEMM_ERROR_INTERNAL;
    case ErrorCode::NotCached: return FP8GEMM_ERROR_NOT_CACHED;
  }
  return FP8GEMM_ERROR_INTERNAL;
}

GemmShape to_cpp(const fp8gemm_gemm_shape_t& s) {
  GemmShape shape;
  shape.m = s.m;
  shape.n = s.n;
  shape.k = s.k;
  shape.kind = static_cast<GemmKind>(s.kind);  // a value outside the enum is rejected by the C++ checks
  shape.groups = s.groups;
  return shape;
}

fp8gemm_gemm_shape_t to_c(const GemmShape& s) {
  fp8gemm_gemm_shape_t shape = library_struct<fp8gemm_gemm_shape_t>();
  shape.m = s.m;
  shape.n = s.n;
  shape.k = s.k;
  shape.kind = static_cast<fp8gemm_gemm_kind_t>(s.kind);
  shape.groups = s.groups;
  return shape;
}

GemmOptions read_gemm_options(const fp8gemm_gemm_options_t* options, const char* fn) {
  fp8gemm_gemm_options_t defaults = library_struct<fp8gemm_gemm_options_t>();
  const fp8gemm_gemm_options_t o = read_versioned(options, defaults, fn, "options");
  GemmOptions out;
  out.b_constant = o.b_constant != 0;
  return out;
}

std::vector<GemmShape> read_shapes(const fp8gemm_gemm_shape_t* shapes, size_t count, const char* fn) {
  std::vector<GemmShape> out;
  if (count == 0) return out;
  if (shapes == nullptr) invalid("{}: shapes is NULL but count = {}", fn, count);
  // The caller's array has the stride of its own struct, which may be older or newer than ours.
  const size_t stride = shapes[0].struct_size;
  check_struct_size(shapes[0], fn, "shapes[0]");
  if (stride % alignof(fp8gemm_gemm_shape_t) != 0)
    invalid("{}: shapes[0].struct_size = {} is not the size of an array element (sizeof)", fn, stride);
  const char* base = reinterpret_cast<const char*>(shapes);
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    fp8gemm_gemm_shape_t s = fp8gemm_default_gemm_shape();
    size_t size = 0;
    std::memcpy(&size, base + i * stride, sizeof size);
    if (size != stride)
      invalid("{}: shapes[{}].struct_size = {} differs from shapes[0].struct_size = {}; all must be sizeof the same "
              "struct",
              fn, i, size, stride);
    std::memcpy(&s, base + i * stride, std::min(stride, sizeof s));
    out.push_back(to_cpp(s));
  }
  return out;
}

std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  out.reserve(strings.size());
  for (const std::string& s : strings) out.push_back(s.c_str());
  return out;
}

}  // namespace fp8gemm::capi

using namespace fp8gemm;

extern "C" {

const char* fp8gemm_status_string(fp8gemm_status_t status) {
  switch (status) {
    case FP8GEMM_SUCCESS: return "success";
    case FP8GEMM_ERROR_INVALID_ARGUMENT: return to_string(ErrorCode::InvalidArgument);
    case FP8GEMM_ERROR_NO_DRIVER: return to_string(ErrorCode::NoDriver);
    case FP8GEMM_ERROR_NO_DEVICE: return to_string(ErrorCode::NoDevice);
    case FP8GEMM_ERROR_UNSUPPORTED_DEVICE: return to_string(ErrorCode::UnsupportedDevice);
    case FP8GEMM_ERROR_COMPILE_FAILED: return to_string(ErrorCode::CompileFailed);
    case FP8GEMM_ERROR_CUDA: return to_string(ErrorCode::CudaError);
    case FP8GEMM_ERROR_INTERNAL: return to_string(ErrorCode::Internal);
    case FP8GEMM_ERROR_NOT_CACHED: return to_string(ErrorCode::NotCached);
    case FP8GEMM_ERROR_OUT_OF_MEMORY: return "out of memory";
    case FP8GEMM_ERROR_BUFFER_TOO_SMALL: return "buffer too small";
  }
  return "unknown status";
}

const char* fp8gemm_last_error_message(void) {
  return capi::t_fallback != nullptr ? capi::t_fallback : capi::t_message.c_str();
}

fp8gemm_status_t fp8gemm_version(int* major, int* minor, int* patch) {
  if (major != nullptr) *major = FP8GEMM_VERSION_MAJOR;
  if (minor != nullptr) *minor = FP8GEMM_VERSION_MINOR;
  if (patch != nullptr) *patch = FP8GEMM_VERSION_PATCH;
  capi::record_success();
  return FP8GEMM_SUCCESS;
}

const char* fp8gemm_version_string(void) { return FP8GEMM_VERSION_STRING; }

}  // extern "C"
