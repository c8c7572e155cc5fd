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

// The plan of a call with an explicit config, for the shape the call stands for: the
// config checked against the kind's rules (before the context is touched), then planned
// with the rows the planned call would use.
struct ExplicitGrouped {
  GemmProblem problem;
  KernelSpec spec;
};
ExplicitGrouped explicit_grouped(const GemmShape& shape, int64_t n, int64_t k, const fp8gemm::KernelConfig& config,
                                 const char* fn) {
  const GemmProblem problem = planned_problem(shape, fn);
  return {problem, explicit_spec(problem.kind, n, k, config, fn)};
}
const LaunchPlan& plan_explicit(const CallContext& call, const ExplicitGrouped& e, const char* fn) {
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  return explicit_plan(call_runtime(call), e.problem.m, e.spec, fn);
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
  const ExplicitGrouped e = explicit_grouped(
      grouped_call_shape(GemmKind::GroupedContiguous, a.rows, a.cols, d.cols, groups), d.cols, a.cols, config, fn);
  if (!work) return;
  CallContext call(stream);
  launch_gemm(plan_explicit(call, e, fn), a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream),
              m_grouped_args(false, group_of_row, groups, a.rows));
}

void gemm_fp8_nt_grouped_masked(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* masked_m,
                                int64_t groups, int64_t expected_m, const fp8gemm::KernelConfig& config,
                                Stream stream) {
  const char* fn = "gemm_fp8_nt_grouped_masked";
  const bool work = validate_gemm_grouped(true, a, a_scales, b, b_scales, d, masked_m, groups, expected_m);
  const ExplicitGrouped e = explicit_grouped(
      grouped_call_shape(GemmKind::GroupedMasked, a.rows, a.cols, d.cols, groups, expected_m), d.cols, a.cols, config,
      fn);
  if (!work) return;
  CallContext call(stream);
  launch_gemm(plan_explicit(call, e, fn), a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream),
              m_grouped_args(true, masked_m, groups, a.rows));
}

void gemm_fp8_nt_wgrad_k_grouped(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                 const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                                 const int32_t* group_k, int64_t groups, const fp8gemm::KernelConfig& config,
                                 Stream stream) {
  const char* fn = "gemm_fp8_nt_wgrad_k_grouped";
  const bool work = validate_gemm_k_grouped(a, a_scales, b, b_scales, d, c, group_k, groups);
  const ExplicitGrouped e = explicit_grouped(
      grouped_call_shape(GemmKind::KGroupedWeightGradient, a.rows, a.cols, b.rows, groups), b.rows, a.cols, config, fn);
  if (!work) return;
  CallContext call(stream);
  launch_gemm_k_grouped(plan_explicit(call, e, fn), a, a_scales, b, b_scales, d, c, group_k, static_cast<int>(groups),
                        reinterpret_cast<CUstream>(stream));
}

}  // namespace fp8gemm
