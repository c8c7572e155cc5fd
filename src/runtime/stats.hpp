#pragma once

#include <atomic>
#include <cstdint>

namespace fp8gemm::detail {

// Process-wide counters behind fp8gemm::stats().
struct Counters {
  std::atomic<uint64_t> gemm_calls{0};
  std::atomic<uint64_t> kernels_compiled{0};
  std::atomic<uint64_t> disk_hits{0};
  std::atomic<uint64_t> modules_loaded{0};
  std::atomic<uint64_t> problems_tuned{0};
  std::atomic<uint64_t> tuned_plans{0};
};

Counters& counters();

}  // namespace fp8gemm::detail
