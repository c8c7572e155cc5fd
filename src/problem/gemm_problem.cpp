#include "problem/gemm_problem.hpp"

#include <algorithm>

namespace fp8gemm::detail {

int64_t GemmProblem::plan_groups() const {
  return kind == KernelKind::GroupedMasked || kind == KernelKind::KGrouped ? std::max<int64_t>(groups, 1) : 1;
}

GemmProblem GemmProblem::plan_key() const {
  GemmProblem key = *this;
  key.groups = plan_groups();
  return key;
}

}  // namespace fp8gemm::detail
