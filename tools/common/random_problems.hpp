#pragma once

// Pseudo-random GEMM problems of every kind, off the shape sets: the draw of
// tools/plan_sweep and of the CTest Nvrtc.PlannedKernelsForRandomShapesTakeNoSlowPath.
// splitmix64, so that a seed gives the same problems on every platform (no <random>
// distribution, whose results the standard leaves to the implementation). Problem i has
// kind i % 5 (dense 1D2D, contiguous, masked, weight gradient, k-grouped); rows per group
// log-uniform in [1, 70000]; N log-uniform in [8, 70000], a multiple of 8; K log-uniform
// in [16, 40000], a multiple of 16, and every third problem whole 128-column blocks;
// 1-32 groups for masked and k-grouped problems (m counts all groups' rows).
// Needs the library's src/ on the include path.

#include <cmath>
#include <cstdint>

#include "problem/gemm_problem.hpp"

namespace fp8gemm::host {

class RandomProblems {
 public:
  explicit RandomProblems(uint64_t seed) : state_(seed) {}

  detail::GemmProblem next() {
    using detail::KernelKind;
    static constexpr KernelKind kKinds[] = {KernelKind::Gemm1D2D, KernelKind::GroupedContiguous,
                                            KernelKind::GroupedMasked, KernelKind::Gemm1D1D, KernelKind::KGrouped};
    detail::GemmProblem p;
    p.kind = kKinds[count_++ % 5];
    const bool per_group = p.kind == KernelKind::GroupedMasked || p.kind == KernelKind::KGrouped;
    p.groups = per_group ? 1 + static_cast<int64_t>(word() % 32) : 1;
    p.m = log_uniform(1, 70000) * p.groups;
    p.n = at_least(8, log_uniform(8, 70000) / 8 * 8);
    const int64_t k = log_uniform(16, 40000);
    p.k = word() % 3 == 0 ? at_least(128, k / 128 * 128) : at_least(16, k / 16 * 16);
    return p;
  }

 private:
  uint64_t word() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t log_uniform(double lo, double hi) {
    const double u = static_cast<double>(word() >> 11) / 9007199254740992.0;  // [0, 1)
    return static_cast<int64_t>(std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo))));
  }
  static int64_t at_least(int64_t lo, int64_t v) { return v < lo ? lo : v; }

  uint64_t state_;
  uint64_t count_ = 0;
};

}  // namespace fp8gemm::host
