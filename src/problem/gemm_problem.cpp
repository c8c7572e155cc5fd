#include "problem/gemm_problem.hpp"

#include <algorithm>

#include "families/family.hpp"

namespace fp8gemm::detail {

int64_t GemmProblem::plan_groups() const {
  return family(kind).groups_in_plan ? std::max<int64_t>(groups, 1) : 1;
}

GemmProblem GemmProblem::plan_key() const {
  GemmProblem key = *this;
  key.groups = plan_groups();
  return key;
}

}  // namespace fp8gemm::detail
