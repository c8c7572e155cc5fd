#include "runtime/planner.hpp"

#include <algorithm>
#include <tuple>

#include "families/family.hpp"

#include "runtime/stats.hpp"
#include "util/log.hpp"

namespace fp8gemm::detail {

GemmProblem cost_model_problem(const GemmProblem& problem) {
  GemmProblem p = problem;
  p.groups = family(p.kind).groups_in_cost_model ? std::max<int64_t>(p.groups, 1) : 1;
  return p;
}

PlannedKernel plan_kernel(const GemmProblem& problem, const DeviceTraits& device, KernelStore& store,
                          const PlanOptions& options) {
  constexpr size_t kMaxTries = 4;
  const KernelKind kind = problem.kind;
  const int64_t m = problem.m, n = problem.n, k = problem.k;
  // (A k-grouped kernel takes K at run time: its spec's k is 0.)
  const int64_t spec_k = family(kind).k_at_run_time ? 0 : k;
  // (A tuned spec is a plain kernel: a constant-B variant is only ever run for a call that
  // asked for it, so one found in a database is ignored.)
  int skipped = 0;  // candidates compiled here and passed over
  if (options.tuned != nullptr && std::tie(options.tuned->kind, options.tuned->n, options.tuned->k) == std::tie(kind, n, spec_k) &&
      options.tuned->option == 0 && spec_illegal_reason(*options.tuned).empty() &&
      kernel_layout(*options.tuned).smem_bytes <= device.max_smem_bytes) {
    PlannedKernel p;
    p.spec = *options.tuned;
    p.binary = store.get(p.spec, &p.source, options.may_compile);
    if (!p.binary->resources.slow_path()) {
      counters().tuned_plans.fetch_add(1);
      return p;
    }
    log(LogLevel::Warn, "tuned kernel {} compiled to a slow path here; using the heuristic", p.spec.slug());
    skipped += p.source == KernelSource::Compiled ? 1 : 0;
  }
  const std::vector<RankedConfig> ranked = rank_configs(cost_model_problem(problem), device);
  PlannedKernel first;
  for (size_t i = 0; i < ranked.size() && i < kMaxTries; ++i) {
    PlannedKernel p;
    p.spec = ranked[i].spec;
    p.binary = store.get(p.spec, &p.source, options.may_compile);
    p.compiled_and_skipped = skipped;
    if (!p.binary->resources.slow_path()) return p;
    log(LogLevel::Info, "{} compiled to a slow path ({}); trying the next candidate", p.spec.slug(),
        p.binary->resources.slow_path_reason());
    skipped += p.source == KernelSource::Compiled ? 1 : 0;
    if (i == 0) first = p;
  }
  first.compiled_and_skipped = skipped - (first.source == KernelSource::Compiled ? 1 : 0);
  log(LogLevel::Warn, "every candidate kernel for M={} N={} K={} compiled to a slow path; using {}", m, n, k,
      first.spec.slug());
  return first;
}

}  // namespace fp8gemm::detail
