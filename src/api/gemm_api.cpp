// gemm_fp8_nt: validate -> plan (config, kernel) -> TMA descriptors -> launch.

#include "api/library.hpp"
#include "driver/tma.hpp"
#include "problem/validate.hpp"
#include "runtime/stats.hpp"
#include "util/error.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

void launch(const LaunchPlan& plan, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
            const ScaleMatrix& b_scales, const Bf16Matrix& d, Stream stream) {
  const int64_t m = a.rows, n = b.rows, k = a.cols;
  const CUtensorMap tma_a = encode_tma(tma_fp8_operand(a.data, m, k, a.ld, plan.a_box_rows));
  const CUtensorMap tma_b = encode_tma(tma_fp8_operand(b.data, n, k, b.ld, plan.layout.b_box_rows));
  const CUtensorMap tma_sfa = encode_tma(
      tma_per_token_scales(a_scales.data, m, a_scales.cols, a_scales.col_stride, plan.sfa_box_rows));
  CUtensorMap tma_d{};  // unused (and left zero) when the kernel stores D directly
  if (plan.layout.tma_store) tma_d = encode_tma(tma_bf16_output(d.data, m, n, d.ld));
  launch_gemm_1d2d(plan, tma_a, tma_b, tma_sfa, tma_d, b_scales.data, b_scales.row_stride, b_scales.col_stride,
                   d.data, d.ld, static_cast<int>(m), reinterpret_cast<CUstream>(stream));
}

}  // namespace

void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                 const ScaleMatrix& b_scales, const Bf16Matrix& d, Stream stream) {
  if (!validate_gemm_fp8_nt(a, a_scales, b, b_scales, d)) return;
  counters().gemm_calls.fetch_add(1, std::memory_order_relaxed);

  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  launch(runtime.plan(a.rows, b.rows, a.cols, Library::instance().store()), a, a_scales, b, b_scales, d, stream);
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
  launch(runtime.plan(a.rows, spec, Library::instance().store()), a, a_scales, b, b_scales, d, stream);
}

}  // namespace fp8gemm
