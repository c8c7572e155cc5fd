#pragma once

#include <cstdint>
#include <optional>

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::cli {

struct CheckOptions {
  int64_t m = 129, n = 2120, k = 7184;  // partial tiles in every dimension
  uint64_t seed = 1;
  bool skip_without_gpu = false;
  std::optional<KernelConfig> config;  // run this kernel config instead of the library's choice
  bool expect_warm = false;            // fail if the first call compiled or tuned anything
  bool b_constant = false;             // call with GemmOptions::b_constant
};

// Runs one gemm_fp8_nt on the GPU and compares it with an fp64 reference.
// Returns the process exit code.
int run_check(const CheckOptions& options);

}  // namespace fp8gemm::cli
