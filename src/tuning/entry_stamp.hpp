#pragma once

#include <string>

#include "tuning/tuning_db.hpp"

namespace fp8gemm::detail {

// A tuned entry holds while this build would still time the same contest: the planner's
// first choice for the entry's problem is the one it was measured against, and the winner's
// kernel compiles to the same cache key (generated source, kernel headers, NVRTC, options).
// A kernel or planner change under an unchanged version string retires the entries it
// touches, and only those. Pure host logic (no GPU).

// The entry's problem as it was tuned: its kind, M, N, K and groups.
GemmProblem tuned_problem(const TunedEntry& entry);

// Sets entry.planned and entry.kernel_key as this build makes them for the device.
void stamp_tuned_entry(TunedEntry& entry, const TuningMetadata& device);

// "" if the entry holds for this build on the device, else why it does not (for a warning).
std::string tuned_entry_stale_reason(const TunedEntry& entry, const TuningMetadata& device);

}  // namespace fp8gemm::detail
