#include "tuning/tune_operands.hpp"

#include <algorithm>

#include "families/family.hpp"
#include "problem/validate.hpp"
#include "runtime/gemm_launch.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t v, int64_t multiple) { return ceil_div(v, multiple) * multiple; }

// The [N, K] matrices stacked in B: the experts' for the m-grouped kinds, else one.
int64_t b_matrices(const GemmProblem& p) { return family(p.kind).m_grouping != 0 ? p.groups : 1; }

// GroupedContiguous: M rows split evenly over the experts (the first M % groups get one
// more), each expert's segment padded to kGroupedSegmentRows; padding rows are -1.
void split_contiguous_rows(const GemmProblem& p, TuneLayout* l) {
  for (int64_t e = 0; e < p.groups; ++e) {
    const int64_t rows = p.m / p.groups + (e < p.m % p.groups ? 1 : 0);
    l->group_info.insert(l->group_info.end(), static_cast<size_t>(rows), static_cast<int32_t>(e));
    l->group_info.insert(l->group_info.end(), static_cast<size_t>(round_up(rows, kGroupedSegmentRows) - rows), -1);
  }
  l->a_rows = l->d_rows = static_cast<int64_t>(l->group_info.size());
}

// GroupedMasked: every expert at the expected rows, in a max_m of whole segments.
void mask_expert_rows(const GemmProblem& p, TuneLayout* l) {
  l->expected_m = ceil_div(p.m, p.groups);
  l->a_rows = l->d_rows = p.groups * round_up(l->expected_m, kGroupedSegmentRows);
  l->group_info.assign(static_cast<size_t>(p.groups), static_cast<int32_t>(l->expected_m));
}

// KGrouped: every group at the planned K, its columns side by side in A and B.
void k_group_columns(const GemmProblem& p, TuneLayout* l) {
  l->a_rows = ceil_div(p.m, p.groups);
  l->b_rows = p.n;
  l->cols = p.groups * k_grouped_columns(p.k);
  l->d_rows = p.groups * l->a_rows;
  l->group_info.assign(static_cast<size_t>(p.groups), static_cast<int32_t>(p.k));
}

}  // namespace

TuneLayout tune_layout(const GemmProblem& p) {
  FP8GEMM_CHECK(p.m > 0 && p.n > 0 && p.k > 0 && p.groups >= 1, "tuning problem m={} n={} k={} groups={}", p.m, p.n,
                p.k, p.groups);
  TuneLayout l;
  l.a_rows = l.d_rows = p.m;
  l.b_rows = b_matrices(p) * p.n;
  l.cols = p.k;
  const Family& f = family(p.kind);
  if (f.m_grouping == 1) split_contiguous_rows(p, &l);
  if (f.m_grouping == 2) mask_expert_rows(p, &l);
  if (f.k_at_run_time) k_group_columns(p, &l);
  const bool wgrad = f.fp32_output;
  const int64_t kb = scale_blocks(l.cols);
  l.a_bytes = static_cast<size_t>(l.a_rows * l.cols);
  l.b_bytes = static_cast<size_t>(l.b_rows * l.cols);
  l.sfa_bytes = static_cast<size_t>(per_token_scale_stride(l.a_rows) * kb) * 4;
  // Weight gradients: per-token scales of B; the others: the (experts') 128x128 blocks.
  const int64_t sfb_rows = wgrad ? per_token_scale_stride(l.b_rows) : b_matrices(p) * scale_blocks(p.n);
  l.sfb_bytes = static_cast<size_t>(sfb_rows * kb) * 4;
  l.d_bytes = static_cast<size_t>(l.d_rows * p.n) * (wgrad ? 4 : 2);
  return l;
}

TuneArgs tune_args(const GemmProblem& p, const TuneLayout& l, const TuneBuffers& buffers) {
  const float* sfb = static_cast<const float*>(buffers.sfb);
  const int64_t kb = scale_blocks(l.cols);
  const ScaleMatrix b_scales = family(p.kind).fp32_output ? per_token_scales(sfb, l.b_rows, l.cols)
                                                          : ScaleMatrix{sfb, b_matrices(p) * scale_blocks(p.n), kb, kb, 1};
  return TuneArgs{Fp8Matrix{buffers.a, l.a_rows, l.cols, l.cols},
                  Fp8Matrix{buffers.b, l.b_rows, l.cols, l.cols},
                  per_token_scales(static_cast<const float*>(buffers.sfa), l.a_rows, l.cols),
                  b_scales,
                  buffers.d,
                  l.d_rows,
                  p.n,
                  buffers.group_info,
                  p.groups,
                  l.expected_m};
}

// (Both follow the family: K at run time, fp32 output, m-grouping; the weight gradients
// accumulate in place, C = D, as a training step calls them.)
bool validate_tune_args(KernelKind kind, const TuneArgs& x) {
  const Family& f = family(kind);
  if (!f.gemm) fail(ErrorCode::Internal, "the tuner does not time {} kernels", kind_name(kind));
  const Fp32Matrix d = x.fp32_d();
  if (f.k_at_run_time)
    return validate_gemm_k_grouped(x.a, x.a_scales, x.b, x.b_scales, d, &d, x.group_info, x.groups);
  if (f.fp32_output) return validate_gemm_fp8_nt_wgrad(x.a, x.a_scales, x.b, x.b_scales, d, &d);
  if (f.m_grouping != 0)
    return validate_gemm_grouped(f.m_grouping == 2, x.a, x.a_scales, x.b, x.b_scales, x.bf16_d(), x.group_info,
                                 x.groups, x.expected_m);
  return validate_gemm_fp8_nt(x.a, x.a_scales, x.b, x.b_scales, x.bf16_d());
}

void launch_tune_call(const LaunchPlan& plan, KernelKind kind, const TuneArgs& x, CUstream stream) {
  const Family& f = family(kind);
  if (!f.gemm) fail(ErrorCode::Internal, "the tuner does not time {} kernels", kind_name(kind));
  const Fp32Matrix d = x.fp32_d();
  if (f.k_at_run_time)
    return launch_gemm_k_grouped(plan, x.a, x.a_scales, x.b, x.b_scales, d, &d, x.group_info,
                                 static_cast<int>(x.groups), stream);
  if (f.fp32_output) return launch_gemm_wgrad(plan, x.a, x.a_scales, x.b, x.b_scales, d, &d, stream);
  const GroupArgs groups =
      f.m_grouping != 0 ? m_grouped_args(f.m_grouping == 2, x.group_info, x.groups, x.a.rows) : GroupArgs{};
  launch_gemm(plan, x.a, x.a_scales, x.b, x.b_scales, x.bf16_d(), stream, groups);
}

}  // namespace fp8gemm::detail
