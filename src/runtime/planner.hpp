#pragma once

#include <cstdint>
#include <memory>

#include "heuristics/heuristics.hpp"
#include "runtime/kernel_store.hpp"

namespace fp8gemm::detail {

// The kernel a problem runs, with its binary.
struct PlannedKernel {
  KernelSpec spec;
  std::shared_ptr<const KernelBinary> binary;
  KernelSource source = KernelSource::Memory;
};

// The tuned spec if one is given (and legal, and not a slow path), else the heuristic's
// ranked candidates, in order, skipping any that compiled to a slow path (local memory,
// or wgmma serialized by ptxas: it happens to one config at one shape now and then). If
// the first few all do, the first is used, with a warning.
struct PlanOptions {
  bool may_compile = true;          // false: cache-only (a missing kernel throws NotCached)
  const KernelSpec* tuned = nullptr;  // a measured winner to use first (tuning database)
  // The problem's groups (problem_groups): GroupedMasked's experts, which the cost model
  // splits m over (m = groups x expected_m) so that it counts each expert's tiles; KGrouped's
  // groups, which only tell problems apart (m is all groups' rows, planned as one matrix);
  // 1 otherwise.
  int64_t groups = 1;
};

// The groups rank_configs splits m over for a problem of `groups` groups: GroupedMasked's
// experts; 1 for the other kinds (planned as one matrix of m rows).
int64_t cost_model_groups(KernelKind kind, int64_t groups);

PlannedKernel plan_kernel(KernelKind kind, int64_t m, int64_t n, int64_t k, const DeviceTraits& device,
                          KernelStore& store, const PlanOptions& options = {});

}  // namespace fp8gemm::detail
