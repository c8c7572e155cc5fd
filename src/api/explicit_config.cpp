#include "api/explicit_config.hpp"

#include "api/library.hpp"
#include "families/family.hpp"
#include "tuning/settings.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {

KernelSpec explicit_spec(KernelKind kind, int64_t n, int64_t k, const fp8gemm::KernelConfig& config, const char* fn) {
  const Family& f = family(kind);
  int tma_store = config.tma_store;
  if (tma_store < -1 || tma_store > 2)
    fail(ErrorCode::InvalidArgument, "{}: config tma_store = {} must be -1 (the default for the tile), 0, 1 or 2", fn,
         tma_store);
  if (tma_store < 0) tma_store = f.fp32_output ? 0 : int(config.block_n % (config.split_k == 2 ? 128 : 64) == 0);
  const KernelSpec spec{kind, n, f.k_at_run_time ? 0 : k,
                        detail::KernelConfig{config.block_m, config.block_n, config.stages, config.group_n,
                                             config.multicast, tma_store, config.split_k}};
  if (const std::string why = spec_illegal_reason(spec); !why.empty() && n > 0 && k > 0)
    fail(ErrorCode::InvalidArgument, "{}: config {}: {}", fn, spec.slug(), why);
  return spec;
}

const LaunchPlan& explicit_plan(DeviceRuntime& runtime, int64_t m, const KernelSpec& spec, const char* fn) {
  const DeviceProps& device = runtime.props();
  const int smem = kernel_layout(spec).smem_bytes;
  if (smem > device.max_smem_optin)
    fail(ErrorCode::InvalidArgument, "{}: config {} needs {} bytes of shared memory; device {} allows {}", fn,
         spec.slug(), smem, device.ordinal, device.max_smem_optin);
  return runtime.plan(m, spec, Library::instance().store(), !current_cache_only());
}

}  // namespace fp8gemm::detail
