#include "util/error.hpp"

namespace fp8gemm {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::NoDriver: return "no CUDA driver";
    case ErrorCode::NoDevice: return "no CUDA device";
    case ErrorCode::UnsupportedDevice: return "unsupported device";
    case ErrorCode::CompileFailed: return "kernel compile failed";
    case ErrorCode::CudaError: return "CUDA error";
    case ErrorCode::Internal: return "internal error";
    case ErrorCode::NotCached: return "kernel not cached";
  }
  return "unknown error";
}

Error::Error(ErrorCode code, const std::string& message)
    : std::runtime_error(std::string("fp8gemm: ") + to_string(code) + ": " + message),
      code_(code) {}

}  // namespace fp8gemm
