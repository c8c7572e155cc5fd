#pragma once

#include <cuda.h>

#include "fp8gemm/fp8gemm.hpp"
#include "runtime/device_runtime.hpp"

namespace fp8gemm::detail {

// Encodes the tensor maps of a validated problem for a plan and launches its kernel on
// `stream` (the plan's context must be current).
void launch_gemm(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, CUstream stream);

}  // namespace fp8gemm::detail
