#pragma once

#include <cuda.h>

#include "fp8gemm/fp8gemm.hpp"
#include "runtime/device_runtime.hpp"

namespace fp8gemm::detail {

// Encodes the tensor maps of a validated problem for a plan and launches its kernel on
// `stream` (the plan's context must be current).
// Grouped kernels: b holds the experts' matrices stacked ([groups * N, K]) and `groups`
// the device-side group data.
void launch_gemm(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, CUstream stream, const GroupArgs& groups = {});

// The group arguments of the m-grouped kernels: group_of_row (contiguous) or masked_m
// (masked, whose experts own a_rows / groups rows each of A and D).
GroupArgs m_grouped_args(bool masked, const int32_t* group_info, int64_t groups, int64_t a_rows);

// The same for the weight gradient: both scale tensors per token (M-major / N-major),
// D fp32, C fp32 or null.
void launch_gemm_wgrad(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                       const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c, CUstream stream);

// The same for the k-grouped weight gradient: D and C [groups * M, N] (group g's matrix at
// rows g * M), group_k [groups] on the device.
void launch_gemm_k_grouped(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales,
                           const Fp8Matrix& b, const ScaleMatrix& b_scales, const Fp32Matrix& d,
                           const Fp32Matrix* c, const int32_t* group_k, int groups, CUstream stream);

}  // namespace fp8gemm::detail
