#pragma once

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::detail {

// The process-wide tuning mode and cache-only switch: initialized from FP8GEMM_TUNING and
// FP8GEMM_CACHE_ONLY, changed by fp8gemm::set_tuning_mode / set_cache_only.
TuningMode current_tuning_mode();
void store_tuning_mode(TuningMode mode);
bool current_cache_only();
void store_cache_only(bool on);

}  // namespace fp8gemm::detail
