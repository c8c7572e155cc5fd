#include "runtime/gemm_launch.hpp"

#include "driver/driver_api.hpp"
#include "driver/tma_cache.hpp"
#include "runtime/launch_config.hpp"

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

void launch_gemm_1d1d(const LaunchPlan& plan, const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& sfa,
                      const CUtensorMap& sfb, const CUtensorMap& dmap, const CUtensorMap* cmap, int m,
                      CUstream stream, const GroupArgs& groups) {
  unsigned tx = plan.stage_tx_bytes;
  int with_c = cmap != nullptr ? 1 : 0;
  const int* group_k = groups.info;
  int num_groups = groups.groups, k_blocks = groups.k_blocks, skip_empty = groups.skip_empty ? 1 : 0;
  const CUtensorMap none{};  // not read when with_c == 0
  void* args[] = {const_cast<CUtensorMap*>(&a),    const_cast<CUtensorMap*>(&b),
                  const_cast<CUtensorMap*>(&sfa),  const_cast<CUtensorMap*>(&sfb),
                  const_cast<CUtensorMap*>(&dmap), const_cast<CUtensorMap*>(cmap != nullptr ? cmap : &none),
                  &m,                              &tx,
                  &with_c,                         &group_k,
                  &num_groups,                     &k_blocks,
                  &skip_empty};
  CUlaunchAttribute attrs[2];
  const CUlaunchConfig config = gemm_launch_config(plan.layout, plan.grid, stream, attrs);
  check_cu(driver().cuLaunchKernelEx(&config, plan.function, args, nullptr), "cuLaunchKernelEx(gemm_1d1d)");
}

void launch_gemm_1d2d(const LaunchPlan& plan, const CUtensorMap& a, const CUtensorMap& b,
                      const CUtensorMap& sfa, const CUtensorMap& dmap, const float* sfb, int64_t sfb_stride_n,
                      int64_t sfb_stride_k, void* d, int64_t ldd, int m, CUstream stream, const GroupArgs& groups) {
  long long stride_n = sfb_stride_n, stride_k = sfb_stride_k, ld = ldd;
  unsigned tx = plan.stage_tx_bytes;
  const int* group_info = groups.info;
  int num_groups = groups.groups, group_rows = groups.group_rows;
  void* args[] = {const_cast<CUtensorMap*>(&a), const_cast<CUtensorMap*>(&b), const_cast<CUtensorMap*>(&sfa),
                  const_cast<CUtensorMap*>(&dmap),
                  &sfb, &stride_n, &stride_k, &d, &ld, &m, &tx, &group_info, &num_groups, &group_rows};
  CUlaunchAttribute attrs[2];
  const CUlaunchConfig config = gemm_launch_config(plan.layout, plan.grid, stream, attrs);
  check_cu(driver().cuLaunchKernelEx(&config, plan.function, args, nullptr), "cuLaunchKernelEx(gemm_1d2d)");
}

}  // namespace fp8gemm::detail
