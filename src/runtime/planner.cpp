#include "runtime/planner.hpp"

#include "util/log.hpp"

namespace fp8gemm::detail {

PlannedKernel plan_kernel(KernelKind kind, int64_t m, int64_t n, int64_t k, const DeviceTraits& device,
                          KernelStore& store) {
  constexpr size_t kMaxTries = 4;
  const std::vector<RankedConfig> ranked = rank_configs(kind, m, n, k, device);
  PlannedKernel first;
  for (size_t i = 0; i < ranked.size() && i < kMaxTries; ++i) {
    PlannedKernel p;
    p.spec = ranked[i].spec;
    p.binary = store.get(p.spec, &p.source);
    if (!p.binary->resources.slow_path()) return p;
    log(LogLevel::Debug, "{} compiled to a slow path (local memory or serialized wgmma); trying the next candidate",
        p.spec.slug());
    if (i == 0) first = p;
  }
  log(LogLevel::Warn, "every candidate kernel for M={} N={} K={} compiled to a slow path; using {}", m, n, k,
      first.spec.slug());
  return first;
}

}  // namespace fp8gemm::detail
