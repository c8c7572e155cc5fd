// gemm_fp8_nt and gemm_fp8_nt_wgrad (planned, or with an explicit config): validate -> plan -> TMA descriptors -> launch.

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

// The spec a call with an explicit config runs: the kind's kernel for N and K with exactly
// `config` (tma_store -1: the forward kernel's default for the tile width, no TMA-store
// epilogue for the weight gradient). Shapes that validate have N and K the kernels take, so
// what is left to reject is the config: Error(InvalidArgument) saying why.
KernelSpec explicit_spec(KernelKind kind, int64_t n, int64_t k, const fp8gemm::KernelConfig& config, const char* fn) {
  int tma_store = config.tma_store;
  if (tma_store < -1 || tma_store > 2)
    fail(ErrorCode::InvalidArgument, "{}: config tma_store = {} must be -1 (the default for the tile), 0, 1 or 2", fn,
         tma_store);
  if (tma_store < 0)
    tma_store = family(kind).fp32_output ? 0 : int(config.block_n % (config.split_k == 2 ? 128 : 64) == 0);
  const KernelSpec spec{kind, n, k,
                        detail::KernelConfig{config.block_m, config.block_n, config.stages, config.group_n,
                                             config.multicast, tma_store, config.split_k}};
  if (const std::string why = spec_illegal_reason(spec); !why.empty() && n > 0 && k > 0)
    fail(ErrorCode::InvalidArgument, "{}: config {}: {}", fn, spec.slug(), why);
  return spec;
}

// The plan of an explicit spec in the call's runtime: Error(InvalidArgument) when its shared
// memory exceeds what the device allows.
const LaunchPlan& explicit_plan(DeviceRuntime& runtime, int64_t m, const KernelSpec& spec, const char* fn) {
  const DeviceProps& device = runtime.props();
  const int smem = kernel_layout(spec).smem_bytes;
  if (smem > device.max_smem_optin)
    fail(ErrorCode::InvalidArgument, "{}: config {} needs {} bytes of shared memory; device {} allows {}", fn,
         spec.slug(), smem, device.ordinal, device.max_smem_optin);
  return runtime.plan(m, spec, Library::instance().store(), !current_cache_only());
}

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
