// gemm_fp8_nt_grouped_contiguous / _masked / gemm_fp8_nt_wgrad_k_grouped: validate -> plan
// (tuned or heuristic config for the expected size, or an explicit config; the real row or
// column counts stay on the device) -> TMA descriptors -> launch.

#include "api/explicit_config.hpp"
#include "api/library.hpp"
#include "problem/validate.hpp"
#include "runtime/gemm_launch.hpp"
#include "runtime/stats.hpp"
#include "util/error.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

// The plan of a call in its context (checked for an sm_90 device), for the shape the call
// stands for: planned, tuned and prewarmed as that GemmShape (planned_problem).
const LaunchPlan& plan_grouped(const CallContext& call, const GemmShape& shape, const char* fn) {
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  DeviceRuntime& runtime = call_runtime(call);
  return plan_for_call(call, runtime, planned_problem(shape, fn));
}

// A call with an explicit config: the config is checked against the kind's rules first
// (from the kind, N and K alone, before the context is touched or the shape of an empty
// call is formed), then planned with the rows the planned call would use.
KernelSpec grouped_spec(GemmKind kind, int64_t n, int64_t k, const fp8gemm::KernelConfig& config, const char* fn) {
  return explicit_spec(kernel_kind_of(kind, fn), n, k, config, fn);
}
const LaunchPlan& plan_explicit(const CallContext& call, const GemmShape& shape, const KernelSpec& spec,
                                const char* fn) {
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  return explicit_plan(call_runtime(call), planned_problem(shape, fn).m, spec, fn);
}

}  // namespace

void gemm_fp8_nt_grouped_contiguous(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                    const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* group_of_row,
                                    int64_t groups, Stream stream) {
  if (!validate_gemm_grouped(false, a, a_scales, b, b_scales, d, group_of_row, groups, 0)) return;
  // The total M changes from batch to batch: planned for its power-of-two bucket so that the
  // kernel choice (and what prewarm compiled or tune measured) stays the same.
  CallContext call(stream);
  const GemmShape shape = grouped_call_shape(GemmKind::GroupedContiguous, a.rows, a.cols, d.cols, groups);
  const LaunchPlan& plan = plan_grouped(call, shape, "gemm_fp8_nt_grouped_contiguous");
  launch_gemm(plan, a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream),
              m_grouped_args(false, group_of_row, groups, a.rows));
}

void gemm_fp8_nt_grouped_masked(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* masked_m,
                                int64_t groups, int64_t expected_m, Stream stream) {
  if (!validate_gemm_grouped(true, a, a_scales, b, b_scales, d, masked_m, groups, expected_m)) return;
  // Planned per expert at the expected rows (the real counts are on the device).
  CallContext call(stream);
  const GemmShape shape = grouped_call_shape(GemmKind::GroupedMasked, a.rows, a.cols, d.cols, groups, expected_m);
  const LaunchPlan& plan = plan_grouped(call, shape, "gemm_fp8_nt_grouped_masked");
  launch_gemm(plan, a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream),
              m_grouped_args(true, masked_m, groups, a.rows));
}

void gemm_fp8_nt_wgrad_k_grouped(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                 const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                                 const int32_t* group_k, int64_t groups, Stream stream) {
  if (!validate_gemm_k_grouped(a, a_scales, b, b_scales, d, c, group_k, groups)) return;
  // Planned for all groups' rows at the bucket of the mean K per group (the real K_g are on
  // the device; a batch's token counts move within a bucket without changing the kernel).
  CallContext call(stream);
  const GemmShape shape = grouped_call_shape(GemmKind::KGroupedWeightGradient, a.rows, a.cols, b.rows, groups);
  const LaunchPlan& plan = plan_grouped(call, shape, "gemm_fp8_nt_wgrad_k_grouped");
  launch_gemm_k_grouped(plan, a, a_scales, b, b_scales, d, c, group_k, static_cast<int>(groups),
                        reinterpret_cast<CUstream>(stream));
}

void gemm_fp8_nt_grouped_contiguous(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                    const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* group_of_row,
                                    int64_t groups, const fp8gemm::KernelConfig& config, Stream stream) {
  const char* fn = "gemm_fp8_nt_grouped_contiguous";
  const bool work = validate_gemm_grouped(false, a, a_scales, b, b_scales, d, group_of_row, groups, 0);
  const KernelSpec spec = grouped_spec(GemmKind::GroupedContiguous, d.cols, a.cols, config, fn);
  if (!work) return;
  CallContext call(stream);
  const GemmShape shape = grouped_call_shape(GemmKind::GroupedContiguous, a.rows, a.cols, d.cols, groups);
  launch_gemm(plan_explicit(call, shape, spec, fn), a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream),
              m_grouped_args(false, group_of_row, groups, a.rows));
}

void gemm_fp8_nt_grouped_masked(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* masked_m,
                                int64_t groups, int64_t expected_m, const fp8gemm::KernelConfig& config,
                                Stream stream) {
  const char* fn = "gemm_fp8_nt_grouped_masked";
  const bool work = validate_gemm_grouped(true, a, a_scales, b, b_scales, d, masked_m, groups, expected_m);
  const KernelSpec spec = grouped_spec(GemmKind::GroupedMasked, d.cols, a.cols, config, fn);
  if (!work) return;  // (expected_m is checked only when there is work: form the shape after)
  CallContext call(stream);
  const GemmShape shape = grouped_call_shape(GemmKind::GroupedMasked, a.rows, a.cols, d.cols, groups, expected_m);
  launch_gemm(plan_explicit(call, shape, spec, fn), a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream),
              m_grouped_args(true, masked_m, groups, a.rows));
}

void gemm_fp8_nt_wgrad_k_grouped(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                 const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                                 const int32_t* group_k, int64_t groups, const fp8gemm::KernelConfig& config,
                                 Stream stream) {
  const char* fn = "gemm_fp8_nt_wgrad_k_grouped";
  const bool work = validate_gemm_k_grouped(a, a_scales, b, b_scales, d, c, group_k, groups);
  const KernelSpec spec = grouped_spec(GemmKind::KGroupedWeightGradient, b.rows, a.cols, config, fn);
  if (!work) return;
  CallContext call(stream);
  const GemmShape shape = grouped_call_shape(GemmKind::KGroupedWeightGradient, a.rows, a.cols, b.rows, groups);
  launch_gemm_k_grouped(plan_explicit(call, shape, spec, fn), a, a_scales, b, b_scales, d, c, group_k,
                        static_cast<int>(groups), reinterpret_cast<CUstream>(stream));
}

}  // namespace fp8gemm
