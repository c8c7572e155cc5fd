#pragma once

#include <cstdint>
#include <memory>

#include "heuristics/heuristics.hpp"
#include "problem/gemm_problem.hpp"
#include "runtime/kernel_store.hpp"

namespace fp8gemm::detail {

// The kernel a problem runs, with its binary.
struct PlannedKernel {
  KernelSpec spec;
  std::shared_ptr<const KernelBinary> binary;
  KernelSource source = KernelSource::Memory;
  int compiled_and_skipped = 0;  // candidates this plan compiled and passed over (slow path)
};

// The tuned spec if one is given (and legal, and not a slow path), else the heuristic's
// ranked candidates, in order, skipping any that compiled to a slow path (local memory,
// or wgmma serialized by ptxas: it happens to one config at one shape now and then). If
// the first few all do, the first is used, with a warning.
struct PlanOptions {
  bool may_compile = true;          // false: cache-only (a missing kernel throws NotCached)
  const KernelSpec* tuned = nullptr;  // a measured winner to use first (tuning database)
};

// The problem as rank_configs sees it: its groups are those the cost model splits m over
// (GroupedMasked's experts; 1 for the other kinds, planned as one matrix of m rows).
GemmProblem cost_model_problem(const GemmProblem& problem);

// (GroupedMasked: the cost model splits the problem's m over its experts, m = groups x
// expected_m, so that it counts each expert's tiles.)
PlannedKernel plan_kernel(const GemmProblem& problem, const DeviceTraits& device, KernelStore& store,
                          const PlanOptions& options = {});

}  // namespace fp8gemm::detail
