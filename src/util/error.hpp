#pragma once

#include <string>

#include <fmt/format.h>

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::detail {

template <typename... Args>
[[noreturn]] void fail(ErrorCode code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

// A real check (release builds keep it): an internal invariant that must hold.
#define FP8GEMM_CHECK(cond, ...)                                                      \
  do {                                                                                \
    if (!(cond))                                                                      \
      ::fp8gemm::detail::fail(::fp8gemm::ErrorCode::Internal,                         \
                              "internal check failed at {}:{}: {}: {}", __FILE__,     \
                              __LINE__, #cond, ::fmt::format(__VA_ARGS__));           \
  } while (0)

}  // namespace fp8gemm::detail
