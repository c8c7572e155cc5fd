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
  std::vector<std::string> warnings;  // ptxas/NVRTC warning lines
  // ptxas notes that the kernel will run slowly although it compiled: wgmma serialized
  // (C7514, C7520: a wgmma issued on a divergent path) or waited for (C7517, C7519:
  // warpgroup.arrive/wait injected), setmaxnreg ignored (C7508).
  std::vector<std::string> performance_notes;

  bool uses_local_memory() const {
    return stack_frame_bytes > 0 || spill_store_bytes > 0 || spill_load_bytes > 0;
  }
  // A kernel the planner should not pick when a candidate without these issues exists.
  bool slow_path() const { return uses_local_memory() || !performance_notes.empty(); }
  // Why, for messages: "local memory", "wgmma serialized" (a performance note), or "".
  const char* slow_path_reason() const {
    return uses_local_memory() ? "local memory" : !performance_notes.empty() ? "wgmma serialized" : "";
  }
};

ResourceUsage parse_resource_report(const std::string& log);

}  // namespace fp8gemm::detail
