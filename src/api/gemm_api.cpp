// gemm_fp8_nt: validate -> plan (tuned or heuristic config, kernel) -> TMA descriptors -> launch.

#include "api/library.hpp"
#include "problem/validate.hpp"
#include "runtime/gemm_launch.hpp"
#include "runtime/stats.hpp"
#include "tuning/settings.hpp"
#include "tuning/tuner.hpp"
#include "util/error.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

void launch(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
            const ScaleMatrix& b_scales, const Bf16Matrix& d, Stream stream) {
  launch_gemm(plan, a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream));
}

// The plan of a problem's first call in this context: the tuning database's winner
// (tuning it first in mode On), else the heuristic; in cache-only mode nothing compiles.
const LaunchPlan& plan_first_call(DeviceRuntime& runtime, int64_t m, int64_t n, int64_t k,
                                  KernelKind kind = KernelKind::Gemm1D2D) {
  Library& library = Library::instance();
  PlanOptions options;
  options.may_compile = !current_cache_only();
  const TuningMode mode = current_tuning_mode();
  std::optional<KernelSpec> tuned;
  if (mode != TuningMode::Off) {
    const TuningMetadata metadata = device_metadata(runtime.props());
    if (mode == TuningMode::On)
      tuned = library.tuned_or_tune(metadata, kind, m, n, k, [&] {
        return tune_problem(runtime, library.store(), m, n, k, TunerSettings{}, kind).best;
      });
    else
      tuned = library.find_tuned(metadata, kind, m, n, k);
  }
  if (tuned) options.tuned = &*tuned;
  return runtime.plan(m, n, k, library.store(), options, kind);
}

}  // namespace

void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, Stream stream) {
  if (!validate_gemm_fp8_nt(a, a_scales, b, b_scales, d)) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);

  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  const LaunchPlan* plan = runtime.find_plan(a.rows, b.rows, a.cols);
  if (plan == nullptr) plan = &plan_first_call(runtime, a.rows, b.rows, a.cols);
  launch(*plan, a, a_scales, b, b_scales, d, stream);
}

void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, const fp8gemm::KernelConfig& config,
                 Stream stream) {
  const bool work = validate_gemm_fp8_nt(a, a_scales, b, b_scales, d);
  const KernelSpec spec{KernelKind::Gemm1D2D, b.rows, a.cols,
                        detail::KernelConfig{config.block_m, config.block_n, config.stages, config.group_n,
                                             config.multicast,
                                             config.tma_store < 0 ? int(config.block_n % (config.split_k == 2 ? 128 : 64) == 0)
                                                                  : config.tma_store,
                                             config.split_k}};
  // Shapes that validate have N % 8 == 0 and K % 16 == 0, so what is left is the config.
  if (const std::string why = spec_illegal_reason(spec); !why.empty() && b.rows > 0 && a.cols > 0)
    fail(ErrorCode::InvalidArgument, "gemm_fp8_nt: config {}: {}", spec.slug(), why);
  if (!work) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);

  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  if (kernel_layout(spec).smem_bytes > device.max_smem_optin)
    fail(ErrorCode::InvalidArgument, "gemm_fp8_nt: config {} needs {} bytes of shared memory; device {} allows {}",
         spec.slug(), kernel_layout(spec).smem_bytes, device.ordinal, device.max_smem_optin);
  launch(runtime.plan(a.rows, spec, Library::instance().store(), !current_cache_only()), a, a_scales, b, b_scales, d,
         stream);
}

void gemm_fp8_nt_wgrad(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                       const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c, Stream stream) {
  if (!validate_gemm_fp8_nt_wgrad(a, a_scales, b, b_scales, d, c)) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  const LaunchPlan* plan = runtime.find_plan(a.rows, b.rows, a.cols, KernelKind::Gemm1D1D);
  if (plan == nullptr) plan = &plan_first_call(runtime, a.rows, b.rows, a.cols, KernelKind::Gemm1D1D);
  launch_gemm_wgrad(*plan, a, a_scales, b, b_scales, d, c, reinterpret_cast<CUstream>(stream));
}

}  // namespace fp8gemm
