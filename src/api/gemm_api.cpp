// gemm_fp8_nt: validate -> plan (tuned or heuristic config, kernel) -> TMA descriptors -> launch.

#include "api/library.hpp"
#include "problem/validate.hpp"
#include "runtime/gemm_launch.hpp"
#include "runtime/stats.hpp"
#include "tuning/settings.hpp"
#include "util/error.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

void launch(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
            const ScaleMatrix& b_scales, const Bf16Matrix& d, Stream stream) {
  launch_gemm(plan, a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream));
}

}  // namespace

void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, Stream stream) {
  gemm_fp8_nt(a, a_scales, b, b_scales, d, GemmOptions{}, stream);
}

void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, const GemmOptions& options, Stream stream) {
  if (!validate_gemm_fp8_nt(a, a_scales, b, b_scales, d)) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);

  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  const LaunchPlan& plan = plan_for_call(runtime, GemmProblem{KernelKind::Gemm1D2D, a.rows, b.rows, a.cols});
  // With constant B, the same config loading B early where that pays (one more hash lookup).
  if (options.b_constant && !(plan.constant_b == plan.spec))
    launch(runtime.plan(a.rows, plan.constant_b, Library::instance().store(), !current_cache_only()), a, a_scales, b,
           b_scales, d, stream);
  else
    launch(plan, a, a_scales, b, b_scales, d, stream);
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
  const LaunchPlan& plan = plan_for_call(runtime, GemmProblem{KernelKind::Gemm1D1D, a.rows, b.rows, a.cols});
  launch_gemm_wgrad(plan, a, a_scales, b, b_scales, d, c, reinterpret_cast<CUstream>(stream));
}

}  // namespace fp8gemm
