#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <tuple>

#include "problem/problem.hpp"

namespace fp8gemm::detail {

// One GEMM problem as a call, prewarm and the tuner plan it: the kind, the sizes the kernel
// choice depends on, and the groups. The planner, the plans of a device and the tuning
// database all take it; the rules of each kind:
//   m: dense, M; GroupedContiguous, the power-of-two bucket of all experts' rows;
//      GroupedMasked, groups x expected_m; KGrouped, groups x the rows of each group's D.
//   k: KGrouped, the columns of each group (the planned K).
//   groups: the experts or groups of the grouped kinds (GroupedContiguous: those its rows are
//      split over when timed; its kernel choice does not depend on them); 1 for dense kinds.
struct GemmProblem {
  KernelKind kind = KernelKind::Gemm1D2D;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t groups = 1;

  // The groups that tell problems of one kind, N, K and M apart (among a device's plans and
  // in the tuning database): GroupedMasked's experts (the cost model plans each expert's
  // rows) and KGrouped's groups (each its own D); 1 for the other kinds (a contiguous grouped
  // problem is planned as one matrix of all experts' rows, whatever their count).
  int64_t plan_groups() const;
  // The same problem with `groups` replaced by plan_groups(): what a plan is keyed by.
  GemmProblem plan_key() const;

  bool operator==(const GemmProblem& o) const {
    return std::tie(kind, m, n, k, groups) == std::tie(o.kind, o.m, o.n, o.k, o.groups);
  }
};

struct GemmProblemHash {
  size_t operator()(const GemmProblem& p) const {
    return (std::hash<int64_t>{}(p.m) * 31 + std::hash<int64_t>{}(p.n) * 1000003 + std::hash<int64_t>{}(p.k)) * 7 +
           static_cast<size_t>(p.kind) + static_cast<size_t>(p.groups) * 131;
  }
};

}  // namespace fp8gemm::detail
