#include "runtime/gemm_launch.hpp"

#include "driver/tma_cache.hpp"

namespace fp8gemm::detail {

void launch_gemm(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, CUstream stream, const GroupArgs& groups) {
  const int64_t m = a.rows, n = d.cols, k = a.cols;
  // Copies: a later call on this thread may reuse a cache slot before the launch reads
  // the parameters (it copies them at cuLaunchKernelEx, so these only live until then).
  const CUtensorMap tma_a = encode_tma_cached(tma_fp8_operand(a.data, m, k, a.ld, plan.a_box_rows));
  const CUtensorMap tma_b = encode_tma_cached(tma_fp8_operand(b.data, b.rows, k, b.ld, plan.layout.b_box_rows));
  const CUtensorMap tma_sfa = encode_tma_cached(
      tma_per_token_scales(a_scales.data, m, a_scales.cols, a_scales.col_stride, plan.sfa_box_rows));
  CUtensorMap tma_d{};  // unused (and left zero) when the kernel stores D directly
  if (plan.layout.tma_store) tma_d = encode_tma_cached(tma_bf16_output(d.data, m, n, d.ld));
  launch_gemm_1d2d(plan, tma_a, tma_b, tma_sfa, tma_d, b_scales.data, b_scales.row_stride, b_scales.col_stride,
                   d.data, d.ld, static_cast<int>(m), stream, groups);
}

GroupArgs m_grouped_args(bool masked, const int32_t* group_info, int64_t groups, int64_t a_rows) {
  return GroupArgs{group_info, static_cast<int>(groups), masked ? static_cast<int>(a_rows / groups) : 0};
}

namespace {

// The weight gradient's operand maps (A, B and both per-token scale tensors), shared by the
// dense and k-grouped launches.
struct WgradOperands {
  CUtensorMap a, b, sfa, sfb;
};

WgradOperands wgrad_operands(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales,
                             const Fp8Matrix& b, const ScaleMatrix& b_scales) {
  const int64_t m = a.rows, n = b.rows, k = a.cols;
  WgradOperands o;
  o.a = encode_tma_cached(tma_fp8_operand(a.data, m, k, a.ld, plan.a_box_rows));
  o.b = encode_tma_cached(tma_fp8_operand(b.data, n, k, b.ld, plan.layout.b_box_rows));
  o.sfa = encode_tma_cached(tma_per_token_scales(a_scales.data, m, a_scales.cols, a_scales.col_stride, plan.sfa_box_rows));
  o.sfb = encode_tma_cached(
      tma_per_token_scales(b_scales.data, n, b_scales.cols, b_scales.col_stride, plan.spec.config.block_n));
  return o;
}

}  // namespace

void launch_gemm_wgrad(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                       const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c, CUstream stream) {
  const int64_t m = a.rows, n = b.rows;
  const WgradOperands o = wgrad_operands(plan, a, a_scales, b, b_scales);
  const CUtensorMap tma_d = encode_tma_cached(tma_fp32_output(d.data, m, n, d.ld));
  // C (possibly D itself) is loaded tile by tile through the same kind of map.
  CUtensorMap tma_c{};
  if (c != nullptr) tma_c = encode_tma_cached(tma_fp32_output(c->data, m, n, c->ld));
  launch_gemm_1d1d(plan, o.a, o.b, o.sfa, o.sfb, tma_d, c != nullptr ? &tma_c : nullptr, static_cast<int>(m), stream);
}

void launch_gemm_k_grouped(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales,
                           const Fp8Matrix& b, const ScaleMatrix& b_scales, const Fp32Matrix& d,
                           const Fp32Matrix* c, const int32_t* group_k, int groups, CUstream stream) {
  const int64_t m = a.rows, n = b.rows, k = a.cols;
  const WgradOperands o = wgrad_operands(plan, a, a_scales, b, b_scales);
  const CUtensorMap tma_d = encode_tma_cached(tma_fp32_output_grouped(d.data, groups, m, n, d.ld));
  CUtensorMap tma_c{};
  if (c != nullptr) tma_c = encode_tma_cached(tma_fp32_output_grouped(c->data, groups, m, n, c->ld));
  GroupArgs args;
  args.info = group_k;
  args.groups = groups;
  args.k_blocks = static_cast<int>((k + 127) / 128);
  args.skip_empty = c != nullptr && c->data == d.data;  // D already holds an empty group's result
  launch_gemm_1d1d(plan, o.a, o.b, o.sfa, o.sfb, tma_d, c != nullptr ? &tma_c : nullptr, static_cast<int>(m), stream,
                   args);
}

}  // namespace fp8gemm::detail
