#pragma once

#include <cuda.h>

#include "fp8gemm/fp8gemm.hpp"
#include "runtime/device_runtime.hpp"

namespace fp8gemm::detail {

// The grouped kernels' run-time arguments (all zero for a dense GEMM): group_of_row
// (contiguous), masked_m (masked) or group_k (k-grouped) on the device, the number of
// groups and, masked, the rows per expert in A and D; k-grouped: the K blocks of A and B,
// and whether tiles of empty groups are skipped (D already holds C).
struct GroupArgs {
  const int* info = nullptr;
  int groups = 0;
  int group_rows = 0;
  int k_blocks = 0;
  bool skip_empty = false;
};

// Launches gemm_1d1d_kernel for a plan: D (fp32, through tensor map `dmap`) = C + A x B^T,
// C through `cmap` (which may map D itself) or absent (nullptr: C = 0). m: rows of A (of
// each group's D when k-grouped).
void launch_gemm_1d1d(const LaunchPlan& plan, const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& sfa,
                      const CUtensorMap& sfb, const CUtensorMap& dmap, const CUtensorMap* cmap, int m,
                      CUstream stream, const GroupArgs& groups = {});

// Launches gemm_1d2d_kernel for a plan.
void launch_gemm_1d2d(const LaunchPlan& plan, const CUtensorMap& a, const CUtensorMap& b,
                      const CUtensorMap& sfa, const CUtensorMap& d_map, const float* sfb, int64_t sfb_stride_n,
                      int64_t sfb_stride_k, void* d, int64_t ldd, int m, CUstream stream, const GroupArgs& groups = {});

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
