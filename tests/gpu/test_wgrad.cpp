// The weight-gradient GEMM on an sm_90 GPU: D fp32 = C + A x B^T with per-token scales on
// both operands, against the fp64 reference on the dequantized operands, for no C, a
// separate C and C == D (accumulate in place), with partial tiles in M, N and K, and every
// tile height of the kernel through explicit configs.

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <tuple>
#include <vector>

#include "common/fp8_host.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

class GpuWgrad : public Sm90Test {};

// One weight gradient [m, n, k] in `mode`, planned by the library or run with `config`.
void run_case(int64_t m, int64_t n, int64_t k, CMode mode, std::optional<KernelConfig> config = std::nullopt) {
  SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " C mode " << int(mode)
                                  << (config ? " config " : "") << (config ? config->block_m : 0) << "x"
                                  << (config ? config->block_n : 0));
  const DeviceOperand a = upload(host::random_operand(m, k, k, true, uint64_t(m + 7 * k)));
  const DeviceOperand b = upload(host::random_operand(n, k, k, true, uint64_t(n + 11 * k)));
  DeviceBuffer ref(size_t(m * n) * 8);
  reference_gemm(a, b, ref.get<double>());
  std::vector<double> want(size_t(m * n));
  check(cudaMemcpy(want.data(), ref.get(), want.size() * 8, cudaMemcpyDeviceToHost), "download reference");
  const Fp32Output out = make_fp32_output(m, n, n + 4, uint64_t(m * n));
  init_fp32_output(out, mode);
  const Fp32Matrix dm = out.d_matrix(), cm = out.c_matrix();
  const Fp8Matrix am{a.data.get(), m, k, a.host.ld}, bm{b.data.get(), n, k, b.host.ld};
  const ScaleMatrix sa = per_token_scales(a.scales.get<float>(), m, k), sb = per_token_scales(b.scales.get<float>(), n, k);
  if (config)
    gemm_fp8_nt_wgrad(am, sa, bm, sb, dm, c_argument(mode, dm, cm), *config);
  else
    gemm_fp8_nt_wgrad(am, sa, bm, sb, dm, c_argument(mode, dm, cm));
  check(cudaDeviceSynchronize(), "wgrad");
  const Fp32Comparison c = compare_fp32(out, mode, want);
  std::printf("  wgrad M=%-5lld N=%-5lld K=%-6lld C=%d%s  %s\n", (long long)m, (long long)n, (long long)k, int(mode),
              config ? " (explicit config)" : "", c.describe().c_str());
  expect_fp32_good(c);
}

}  // namespace

TEST_F(GpuWgrad, AgainstFp64Reference) {
  for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace})
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{256, 512, 1024}, {300, 264, 1040},
                           {129, 4096, 512}, {2112, 4096, 7168}})
      run_case(m, n, k, mode);
}

// Every tile height (one, two and three math warpgroups: 64, 128 and 192 rows) and widths
// from 16 to 192 columns, run as explicit configs, with tails in M, N and K.
TEST_F(GpuWgrad, ExplicitConfigsCoverEveryTile) {
  for (const KernelConfig& config : {KernelConfig{64, 128, 6, 8, 0, 0}, KernelConfig{128, 16, 6, 8, 0, 0},
                                     KernelConfig{128, 192, 3, 8, 0, 0}, KernelConfig{192, 96, 4, 8, 0, 0},
                                     KernelConfig{192, 128, 3, 8, 0, 0}, KernelConfig{192, 64, 5, 16, 0, -1}})
    for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run_case(1100, 4100, 1040, mode, config);
}

// 192-row tiles with a long K loop (the planner's choice for this shape, and explicitly).
TEST_F(GpuWgrad, ThreeMathWarpgroupsLongK) {
  for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) {
    run_case(1300, 2052, 7200, mode);
    run_case(1300, 2052, 7200, mode, KernelConfig{192, 128, 3, 8, 0, 0});
  }
}

// The wgrad shapes of the DeepSeek-V3 set (M and K swapped roles: D [M, N] += A x B^T).
TEST_F(GpuWgrad, DeepSeekShapes) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{576, 4096, 7168}, {7168, 4096, 2048}})
    run_case(m, n, k, CMode::InPlace);
}

// All wgrad shapes of the DeepSeek-V3 set at full size, accumulating in place, checked
// on 4096 sampled elements against fp64 dot products on the host.
TEST_F(GpuWgrad, DeepSeekShapesSampled) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{2112, 4096, 7168}, {576, 4096, 7168},
                         {24576, 4096, 1536}, {32768, 4096, 512}, {7168, 4096, 16384}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k);
    const host::Fp8Operand ha = host::random_operand(m, k, k, true, uint64_t(3 * m + k));
    const host::Fp8Operand hb = host::random_operand(n, k, k, true, uint64_t(5 * n + k));
    const DeviceOperand a = upload(ha), b = upload(hb);
    const Fp32Output out = make_fp32_output(m, n, n, uint64_t(m + n + k));
    init_fp32_output(out, CMode::InPlace);
    const Fp32Matrix dm = out.d_matrix();
    gemm_fp8_nt_wgrad({a.data.get(), m, k, k}, per_token_scales(a.scales.get<float>(), m, k), {b.data.get(), n, k, k},
                      per_token_scales(b.scales.get<float>(), n, k), dm, &dm);
    check(cudaDeviceSynchronize(), "wgrad");
    const Fp32Comparison c = sampled_compare_fp32(out, CMode::InPlace, 4096, uint64_t(m * k), [&](int64_t r, int64_t col) {
      double s = 0;
      for (int64_t i = 0; i < k; ++i) s += ha.value(r, i) * hb.value(col, i);
      return s;
    });
    std::printf("  wgrad M=%-5lld N=%-5lld K=%-6lld C=D  sampled %s\n", (long long)m, (long long)n, (long long)k,
                c.describe().c_str());
    expect_fp32_good(c);
  }
}
