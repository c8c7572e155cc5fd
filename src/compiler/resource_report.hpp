#pragma once

#include <string>
#include <vector>

namespace fp8gemm::detail {

// What ptxas reported for a kernel (`--ptxas-options=-v`).
struct ResourceUsage {
  bool parsed = false;
  int registers = 0;
  int stack_frame_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  std::vector<std::string> warnings;  // ptxas/NVRTC warning lines, e.g. an ignored setmaxnreg

  bool uses_local_memory() const {
    return stack_frame_bytes > 0 || spill_store_bytes > 0 || spill_load_bytes > 0;
  }
};

ResourceUsage parse_resource_report(const std::string& log);

}  // namespace fp8gemm::detail
