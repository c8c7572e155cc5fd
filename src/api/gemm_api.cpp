// gemm_fp8_nt and gemm_fp8_nt_wgrad (planned, or with an explicit config): validate -> plan -> TMA descriptors -> launch.

#include "api/explicit_config.hpp"
#include "api/library.hpp"
#include "families/family.hpp"
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
  DeviceRuntime& runtime = call_runtime(call);
  const LaunchPlan& plan = plan_for_call(call, runtime, GemmProblem{KernelKind::Gemm1D2D, a.rows, b.rows, a.cols});
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
  const KernelSpec spec = explicit_spec(KernelKind::Gemm1D2D, b.rows, a.cols, config, "gemm_fp8_nt");
  if (!work) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  CallContext call(stream);
  DeviceRuntime& runtime = call_runtime(call);
  launch(explicit_plan(runtime, a.rows, spec, "gemm_fp8_nt"), a, a_scales, b, b_scales, d, stream);
}

void gemm_fp8_nt_wgrad(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                       const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c, Stream stream) {
  if (!validate_gemm_fp8_nt_wgrad(a, a_scales, b, b_scales, d, c)) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  CallContext call(stream);
  DeviceRuntime& runtime = call_runtime(call);
  const LaunchPlan& plan = plan_for_call(call, runtime, GemmProblem{KernelKind::Gemm1D1D, a.rows, b.rows, a.cols});
  launch_gemm_wgrad(plan, a, a_scales, b, b_scales, d, c, reinterpret_cast<CUstream>(stream));
}

void gemm_fp8_nt_wgrad(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                       const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                       const fp8gemm::KernelConfig& config, Stream stream) {
  const bool work = validate_gemm_fp8_nt_wgrad(a, a_scales, b, b_scales, d, c);
  const KernelSpec spec = explicit_spec(KernelKind::Gemm1D1D, b.rows, a.cols, config, "gemm_fp8_nt_wgrad");
  if (!work) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  CallContext call(stream);
  DeviceRuntime& runtime = call_runtime(call);
  launch_gemm_wgrad(explicit_plan(runtime, a.rows, spec, "gemm_fp8_nt_wgrad"), a, a_scales, b, b_scales, d, c,
                    reinterpret_cast<CUstream>(stream));
}

}  // namespace fp8gemm
