// gemm_fp8_nt: validate -> plan (config, kernel) -> TMA descriptors -> launch.

#include "api/library.hpp"
#include "driver/tma.hpp"
#include "problem/validate.hpp"
#include "runtime/stats.hpp"

namespace fp8gemm {

using namespace detail;

void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, Stream stream) {
  if (!validate_gemm_fp8_nt(a, a_scales, b, b_scales, d)) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);

  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);

  const int64_t m = a.rows, n = b.rows, k = a.cols;
  const LaunchPlan& plan = runtime.plan(m, n, k, Library::instance().store());
  const int block_m = plan.spec.config.block_m;
  const CUtensorMap tma_a = encode_tma(tma_fp8_operand(a.data, m, k, a.ld, block_m));
  const CUtensorMap tma_b = encode_tma(tma_fp8_operand(b.data, n, k, b.ld, plan.spec.config.block_n));
  const CUtensorMap tma_sfa =
      encode_tma(tma_per_token_scales(a_scales.data, m, a_scales.cols, a_scales.col_stride, block_m));
  launch_gemm_1d2d(plan, tma_a, tma_b, tma_sfa, b_scales.data, b_scales.row_stride, b_scales.col_stride,
                   d.data, d.ld, static_cast<int>(m), reinterpret_cast<CUstream>(stream));
}

}  // namespace fp8gemm
