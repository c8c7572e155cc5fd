#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fp8gemm/fp8gemm.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/problem.hpp"
#include "runtime/device_runtime.hpp"

namespace fp8gemm::detail {

// The operands a problem is timed on, as the public entry point of its kind takes them:
//   Gemm1D2D / Gemm1D1D: A [M, K], B [N, K], D [M, N] (weight gradient: fp32, accumulated in
//     place: C = D, as a training step calls it);
//   GroupedContiguous: the rows split evenly over the experts, each segment padded to
//     kGroupedSegmentRows (group_of_row: -1 on the padding), B [groups * N, K];
//   GroupedMasked: every expert at masked_m = expected_m = ceil(M / groups) rows, max_m
//     that rounded up to kGroupedSegmentRows, A and D [groups * max_m, ...], B [groups * N, K];
//   KGrouped: groups groups of ceil(M / groups) rows and k_grouped_columns(K) columns each
//     (group_k = K), A [rows, groups x columns], D fp32 [groups x rows, N], C = D.
// Sizes only (host side, no device needed); the data is random.
struct TuneLayout {
  int64_t a_rows = 0;      // rows of A and of its per-token scales
  int64_t b_rows = 0;      // rows of B: N, or the experts' N stacked
  int64_t cols = 0;        // columns of A and B (k-grouped: all groups')
  int64_t d_rows = 0;      // rows of D (N columns; bf16, or fp32 for the weight gradients)
  int64_t expected_m = 0;  // GroupedMasked: the expected_m argument
  std::vector<int32_t> group_info;  // group_of_row, masked_m or group_k; empty for the dense kinds
  size_t a_bytes = 0, sfa_bytes = 0, b_bytes = 0, sfb_bytes = 0, d_bytes = 0;
};

TuneLayout tune_layout(const GemmProblem& problem);

// Where one copy of the operands lives (device pointers; the group data is shared).
struct TuneBuffers {
  const void* a = nullptr;
  const void* sfa = nullptr;
  const void* b = nullptr;
  const void* sfb = nullptr;
  void* d = nullptr;
  const int32_t* group_info = nullptr;
};

// The arguments of one timed call: views of one copy of the buffers.
struct TuneArgs {
  Fp8Matrix a, b;
  ScaleMatrix a_scales, b_scales;
  void* d = nullptr;
  int64_t d_rows = 0, n = 0;
  const int32_t* group_info = nullptr;
  int64_t groups = 0, expected_m = 0;

  Bf16Matrix bf16_d() const { return Bf16Matrix{d, d_rows, n, n}; }
  Fp32Matrix fp32_d() const { return Fp32Matrix{static_cast<float*>(d), d_rows, n, n}; }
};

TuneArgs tune_args(const GemmProblem& problem, const TuneLayout& layout, const TuneBuffers& buffers);

// Checks the arguments with the validation of the kind's public entry point (throws
// Error(InvalidArgument) naming it). Returns false if the call has nothing to do.
bool validate_tune_args(KernelKind kind, const TuneArgs& args);

// Launches one call of a planned kernel with the library's internal launch functions (as
// the public entry points do after validation and planning).
void launch_tune_call(const LaunchPlan& plan, KernelKind kind, const TuneArgs& args, CUstream stream);

}  // namespace fp8gemm::detail
