// gemm_fp8_nt_grouped_contiguous / _masked / gemm_fp8_nt_wgrad_k_grouped: validate -> plan
// (heuristic config for the expected size; the real row or column counts stay on the
// device) -> TMA descriptors -> launch.

#include "api/library.hpp"
#include "problem/validate.hpp"
#include "runtime/gemm_launch.hpp"
#include "runtime/stats.hpp"
#include "tuning/settings.hpp"
#include "tuning/tuning_db.hpp"
#include "util/error.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

// `m` is what the config choice plans for: all rows (contiguous) or groups x expected_m.
// plan_groups: GroupedMasked's expert count for the cost model (1: plan m as one matrix).
void run_grouped(KernelKind kind, int64_t m, int64_t plan_groups, const Fp8Matrix& a, const ScaleMatrix& a_scales,
                 const Fp8Matrix& b, const ScaleMatrix& b_scales, const Bf16Matrix& d, const GroupArgs& groups,
                 Stream stream) {
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  const int64_t n = d.cols, k = a.cols;
  const LaunchPlan* plan = runtime.find_plan(m, n, k, kind, plan_groups);
  if (plan == nullptr) {
    // Not tuned yet: the heuristic's choice (the tuner times dense and weight-gradient
    // problems only).
    PlanOptions options;
    options.groups = plan_groups;
    options.may_compile = !current_cache_only();
    plan = &runtime.plan(m, n, k, Library::instance().store(), options, kind);
  }
  launch_gemm(*plan, a, a_scales, b, b_scales, d, reinterpret_cast<CUstream>(stream), groups);
}

}  // namespace

void gemm_fp8_nt_grouped_contiguous(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                    const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* group_of_row,
                                    int64_t groups, Stream stream) {
  if (!validate_gemm_grouped(false, a, a_scales, b, b_scales, d, group_of_row, groups, 0)) return;
  // The total M changes from batch to batch: plan for its power-of-two bucket so that the
  // kernel choice (and what prewarm compiled) stays the same.
  run_grouped(KernelKind::GroupedContiguous, m_bucket(a.rows), 1, a, a_scales, b, b_scales, d,
              GroupArgs{group_of_row, static_cast<int>(groups), 0}, stream);
}

void gemm_fp8_nt_grouped_masked(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* masked_m,
                                int64_t groups, int64_t expected_m, Stream stream) {
  if (!validate_gemm_grouped(true, a, a_scales, b, b_scales, d, masked_m, groups, expected_m)) return;
  run_grouped(KernelKind::GroupedMasked, groups * expected_m, groups, a, a_scales, b, b_scales, d,
              GroupArgs{masked_m, static_cast<int>(groups), static_cast<int>(a.rows / groups)}, stream);
}

void gemm_fp8_nt_wgrad_k_grouped(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                 const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                                 const int32_t* group_k, int64_t groups, Stream stream) {
  if (!validate_gemm_k_grouped(a, a_scales, b, b_scales, d, c, group_k, groups)) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);
  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  // Planned for all groups' rows at the bucket of the mean K per group (the real K_g are on
  // the device; a batch's token counts move within a bucket without changing the kernel).
  const int64_t m = groups * a.rows, n = b.rows, k = k_grouped_planning_k(a.cols, groups);
  const LaunchPlan* plan = runtime.find_plan(m, n, k, KernelKind::KGrouped);
  if (plan == nullptr) {
    PlanOptions options;
    options.may_compile = !current_cache_only();
    plan = &runtime.plan(m, n, k, Library::instance().store(), options, KernelKind::KGrouped);
  }
  launch_gemm_k_grouped(*plan, a, a_scales, b, b_scales, d, c, group_k, static_cast<int>(groups),
                        reinterpret_cast<CUstream>(stream));
}

}  // namespace fp8gemm
