// The weight-gradient GEMM on an sm_90 GPU: D fp32 = C + A x B^T with per-token scales on
// both operands, against the fp64 reference on the dequantized operands, for no C, a
// separate C and C == D (accumulate in place), with partial tiles in M, N and K, and every
// tile height of the kernel through explicit configs.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
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
// from 16 to 192 columns, run as explicit configs, with tails in M, N and K. (128x144 and
// 128x152, WidthsInStepsOfEight, run their K loop in unrolled rounds of the stage ring where
// it is at stage 0 and single blocks elsewhere: 9 K blocks on 4 stages take both.)
TEST_F(GpuWgrad, ExplicitConfigsCoverEveryTile) {
  for (const KernelConfig& config : {KernelConfig{64, 128, 6, 8, 0, 0}, KernelConfig{128, 16, 6, 8, 0, 0},
                                     KernelConfig{128, 144, 4, 8, 0, 0},
                                     KernelConfig{128, 192, 3, 8, 0, 0}, KernelConfig{192, 96, 4, 8, 0, 0},
                                     KernelConfig{192, 128, 3, 8, 0, 0}, KernelConfig{192, 64, 5, 16, 0, -1}})
    for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run_case(1100, 4100, 1040, mode, config);
}

// Widths 8 past a multiple of 16: the tile's last 16-column slab overlaps the one before it,
// and every whole tile stores it. N = 4100 leaves the last tile 148 of 152 columns (there the
// overlapping slab holds columns no other slab does, and is clipped at N) and 20 of 136, 120
// and 40 (the overlapping slab not stored: the slabs before it hold every column left of N);
// N = 4096 leaves 144 of 152 and 16 of 40 (not stored either). 176 columns touch three
// 128-column blocks of B's scales.
TEST_F(GpuWgrad, WidthsInStepsOfEight) {
  for (const KernelConfig& config : {KernelConfig{128, 152, 4, 8, 0, 0}, KernelConfig{128, 136, 4, 8, 0, 0},
                                     KernelConfig{192, 120, 3, 8, 0, 0}, KernelConfig{64, 40, 6, 8, 0, 0},
                                     KernelConfig{128, 176, 3, 8, 0, 0}})
    for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run_case(1100, 4100, 1040, mode, config);
  for (const KernelConfig& config : {KernelConfig{128, 152, 4, 8, 0, 0}, KernelConfig{64, 40, 6, 8, 0, 0}})
    for (CMode mode : {CMode::None, CMode::InPlace}) run_case(700, 4096, 1040, mode, config);
}

// Long K on few tiles, with and without C: every tile's K loop is many times the pipeline's
// depth, so the C loads that overlap it are spread over it (small enough for the sanitizers).
TEST_F(GpuWgrad, LongKOnFewTiles) {
  const std::optional<KernelConfig> configs[] = {std::nullopt, KernelConfig{192, 128, 3, 8, 0, 0},
                                                 KernelConfig{128, 64, 6, 8, 0, 0}};
  for (const std::optional<KernelConfig>& config : configs)
    for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run_case(300, 264, 8208, mode, config);
}

// 192-row tiles with a long K loop (the planner's choice for this shape, and explicitly).
TEST_F(GpuWgrad, ThreeMathWarpgroupsLongK) {
  for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) {
    run_case(1300, 2052, 7200, mode);
    run_case(1300, 2052, 7200, mode, KernelConfig{192, 128, 3, 8, 0, 0});
  }
}

// C == D and a separate C compute the same single fp32 addition D = fl(C + P), bit for bit
// (the header's promise, whichever way each path adds; P rounded once by the kernel). P is
// taken from a call without C; rows of A that are zero make P exactly 0 there, so that C's
// subnormals, signed zeros and extremes meet a zero addend (subnormals must survive).
TEST_F(GpuWgrad, InPlaceAndSeparateCAreOneAdditionBitForBit) {
  const int64_t m = 300, n = 264, k = 1040;
  host::Fp8Operand ha = host::random_operand(m, k, k, true, 41);
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < k; ++c) ha.data[size_t(r * k + c)] = 0;
  const DeviceOperand a = upload(ha), b = upload(host::random_operand(n, k, k, true, 43));
  Fp32Output out = make_fp32_output(m, n, n + 4, 47);
  const float specials[] = {1e-40f, -1e-40f, 0.0f, -0.0f, 1.17549435e-38f, 3.0e38f, -3.0e38f, 1e-45f};
  for (int64_t r = 0; r < m; r += 7)
    for (int64_t c = 0; c < n; c += 5) out.c_host[size_t(r * out.ld + c)] = specials[size_t((r + c) % 8)];
  check(cudaMemcpy(out.c.get(), out.c_host.data(), out.c_host.size() * 4, cudaMemcpyHostToDevice), "upload C");
  const Fp8Matrix am{a.data.get(), m, k, k}, bm{b.data.get(), n, k, k};
  const ScaleMatrix sa = per_token_scales(a.scales.get<float>(), m, k), sb = per_token_scales(b.scales.get<float>(), n, k);
  for (std::optional<KernelConfig> config : {std::optional<KernelConfig>{}, std::optional<KernelConfig>{KernelConfig{192, 128, 3, 8, 0, 0}}}) {
    SCOPED_TRACE(config ? "192x128 tiles" : "planned");
    std::vector<std::vector<float>> d;  // None, Separate, InPlace
    for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) {
      init_fp32_output(out, mode);
      const Fp32Matrix dm = out.d_matrix(), cm = out.c_matrix();
      if (config)
        gemm_fp8_nt_wgrad(am, sa, bm, sb, dm, c_argument(mode, dm, cm), *config);
      else
        gemm_fp8_nt_wgrad(am, sa, bm, sb, dm, c_argument(mode, dm, cm));
      check(cudaDeviceSynchronize(), "wgrad");
      std::vector<float> got(size_t(m * out.ld));
      check(cudaMemcpy(got.data(), dm.data, got.size() * 4, cudaMemcpyDeviceToHost), "download D");
      d.push_back(std::move(got));
    }
    int64_t differ_in_place = 0, differ_sum = 0, nonzero_p = 0;
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        const size_t i = size_t(r * out.ld + c);
        const float want = out.c_host[i] + d[0][i];  // fl(C + P) on the host
        differ_sum += std::memcmp(&d[1][i], &want, 4) != 0;
        differ_in_place += std::memcmp(&d[2][i], &d[1][i], 4) != 0;
        if (r < 16) nonzero_p += d[0][i] != 0.0f;
      }
    EXPECT_EQ(differ_sum, 0) << "separate C: D != fl(C + P)";
    EXPECT_EQ(differ_in_place, 0) << "in place: D differs from the separate C's";
    EXPECT_EQ(nonzero_p, 0) << "rows of A that are zero: P must be 0";
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
