// Correctness of gemm_fp8_nt on an sm_90 GPU against an fp64 reference on the
// dequantized operands: the DeepSeek-V3 dense shapes, partial tiles in M, N and K,
// sub-matrix views, and small odd shapes. Every case poisons D and its surroundings.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "common/reference.hpp"

#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

struct Case {
  int64_t m, n, k;
  int64_t lda_pad = 0, ldb_pad = 0, ldd_pad = 0, sfa_pad = 0;
  bool sfb_column_major = false;
};

class GpuTest : public Sm90Test {};

// Runs one case with operands already on the device; returns the comparison.
DeviceComparison run_case(const Case& c, const DeviceOperand& a, const DeviceOperand& b, const double* ref) {
  GuardedOutput out = make_output(c.m, c.n, c.n + c.ldd_pad);
  ScaleMatrix sa = per_token_scales(a.scales.get<float>(), c.m, c.k);
  sa.col_stride = a.host.scale_stride;
  ScaleMatrix sb = block_scales(b.scales.get<float>(), c.n, c.k);
  gemm_fp8_nt({a.data.get(), c.m, c.k, a.host.ld}, sa, {b.data.get(), c.n, c.k, b.host.ld}, sb,
              {out.d(), c.m, c.n, out.ld});
  check(cudaDeviceSynchronize(), "gemm_fp8_nt");
  return compare(out, ref);
}

void expect_good(const Case& c, const DeviceComparison& r) {
  std::printf("  M=%-5lld N=%-6lld K=%-6lld ld pads (%lld,%lld,%lld)  %s\n", (long long)c.m, (long long)c.n,
              (long long)c.k, (long long)c.lda_pad, (long long)c.ldb_pad, (long long)c.ldd_pad, r.describe().c_str());
  EXPECT_LT(r.rel_error, 1e-2) << r.describe();
  EXPECT_EQ(r.non_finite, 0u) << "unwritten or NaN outputs";
  EXPECT_EQ(r.touched_outside, 0u) << "wrote outside D";
}

host::Fp8Operand operand_a(const Case& c, uint64_t seed) {
  host::Fp8Operand a = host::random_operand(c.m, c.k, c.k + c.lda_pad, true, seed);
  if (c.sfa_pad > 0) {  // re-lay the scales with a wider column stride, NaN in the gap
    const int64_t kb = (c.k + 127) / 128, stride = a.scale_stride + c.sfa_pad;
    std::vector<float> wide(size_t(kb * stride), std::nanf(""));
    for (int64_t j = 0; j < kb; ++j)
      for (int64_t r = 0; r < c.m; ++r) wide[j * stride + r] = a.scales[j * a.scale_stride + r];
    a.scales = std::move(wide);
    a.scale_stride = stride;
  }
  return a;
}

void run_and_check(const Case& c, uint64_t seed) {
  const DeviceOperand a = upload(operand_a(c, seed));
  const DeviceOperand b = upload(host::random_operand(c.n, c.k, c.k + c.ldb_pad, false, seed + 1));
  DeviceBuffer ref(size_t(c.m * c.n) * 8);
  reference_gemm(a, b, ref.get<double>());
  expect_good(c, run_case(c, a, b, ref.get<double>()));
}

}  // namespace

TEST_F(GpuTest, ReferenceMatchesCpu) {
  // The device reference itself, against the host reference, on a small shape.
  const host::Fp8Operand ha = host::random_operand(70, 400, 416, true, 11);
  const host::Fp8Operand hb = host::random_operand(136, 400, 400, false, 12);
  std::vector<int64_t> rows(70);
  for (int i = 0; i < 70; ++i) rows[i] = i;
  const std::vector<double> cpu = host::reference_rows(ha, hb, rows);
  const DeviceOperand a = upload(ha), b = upload(hb);
  DeviceBuffer ref(70 * 136 * 8);
  reference_gemm(a, b, ref.get<double>());
  std::vector<double> gpu(70 * 136);
  check(cudaMemcpy(gpu.data(), ref.get(), gpu.size() * 8, cudaMemcpyDeviceToHost), "copy");
  for (size_t i = 0; i < gpu.size(); ++i) ASSERT_NEAR(gpu[i], cpu[i], 1e-9 * (1 + std::fabs(cpu[i]))) << i;
}

TEST_F(GpuTest, SmallOddShapes) {
  for (const Case& c : {Case{1, 8, 16}, Case{3, 8, 16}, Case{65, 136, 144}, Case{200, 264, 400},
                        Case{130, 2056, 4112}, Case{64, 128, 128}, Case{128, 256, 256}})
    run_and_check(c, 100 + c.m);
}

TEST_F(GpuTest, SubMatrixViews) {
  for (const Case& c : {Case{129, 576, 7168, 32, 16, 24, 4}, Case{1000, 2120, 7184, 48, 16, 8, 12},
                        Case{7, 4096, 512, 16, 64, 56, 0}, Case{4096, 2112, 1024, 128, 0, 64, 20}})
    run_and_check(c, 200 + c.m);
}

TEST_F(GpuTest, ColumnMajorBlockScales) {
  const Case c{300, 1032, 1296};
  const DeviceOperand a = upload(operand_a(c, 31));
  host::Fp8Operand hb = host::random_operand(c.n, c.k, c.k, false, 32);
  const DeviceOperand b = upload(hb);
  DeviceBuffer ref(size_t(c.m * c.n) * 8);
  reference_gemm(a, b, ref.get<double>());
  // Same scales, stored transposed: [ceil(K/128)][ceil(N/128)].
  const int64_t nb = (c.n + 127) / 128, kb = (c.k + 127) / 128;
  std::vector<float> t(size_t(nb * kb));
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t j = 0; j < kb; ++j) t[j * nb + i] = hb.scales[i * kb + j];
  DeviceBuffer sbt(t.size() * 4);
  check(cudaMemcpy(sbt.get(), t.data(), t.size() * 4, cudaMemcpyHostToDevice), "copy");
  GuardedOutput out = make_output(c.m, c.n, c.n);
  gemm_fp8_nt({a.data.get(), c.m, c.k, c.k}, per_token_scales(a.scales.get<float>(), c.m, c.k),
              {b.data.get(), c.n, c.k, c.k}, ScaleMatrix{sbt.get<float>(), nb, kb, 1, nb}, {out.d(), c.m, c.n, c.n});
  check(cudaDeviceSynchronize(), "gemm");
  expect_good(c, compare(out, ref.get<double>()));
}

// The acceptance sweep: M in {1, 7, 64, 128, 129, 1000, 4096} against every (N, K) of the
// DeepSeek-V3 dense set plus one with partial N and K tiles; K = 16384 is among them.
TEST_F(GpuTest, DeepSeekDenseSweep) {
  const int64_t nks[][2] = {{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512},
                            {7168, 16384}, {4096, 7168}, {7168, 2048}, {2120, 7184}};
  const int64_t ms[] = {1, 7, 64, 128, 129, 1000, 4096};
  for (const auto& nk : nks) {
    const DeviceOperand b = upload(host::random_operand(nk[0], nk[1], nk[1], false, 1000 + nk[0] + nk[1]));
    for (int64_t m : ms) {
      const Case c{m, nk[0], nk[1]};
      SCOPED_TRACE(testing::Message() << "M=" << m << " N=" << nk[0] << " K=" << nk[1]);
      const DeviceOperand a = upload(operand_a(c, 7 * m + nk[1]));
      DeviceBuffer ref(size_t(m * nk[0]) * 8);
      reference_gemm(a, b, ref.get<double>());
      expect_good(c, run_case(c, a, b, ref.get<double>()));
    }
  }
}

// Every kernel family run explicitly (the planner picks only some of them for the
// shapes above): 1 or 2 math warpgroups, 1 or 2 waves per warpgroup, block_n beyond
// 128, both multicast sides, both epilogues, with partial tiles and odd block counts
// (a pair's partner tile past the end of M or N).
TEST_F(GpuTest, EveryConfigFamily) {
  const KernelConfig configs[] = {
      {64, 128, 8, 8, 0},  {64, 48, 8, 8, 1},   {64, 160, 7, 8, 2},  {128, 192, 4, 8, 0}, {128, 160, 5, 8, 2},
      {128, 144, 5, 4, 1}, {256, 128, 3, 8, 1}, {256, 128, 3, 8, 2}, {256, 64, 4, 16, 0}, {256, 112, 4, 1, 1},
      // block_n % 64 == 0 defaults to the TMA-store epilogue; these store directly.
      {128, 128, 6, 8, 0, 0}, {256, 128, 4, 8, 1, 0},
      // Split-K over a CTA pair, both epilogues, one and two math warpgroups.
      {64, 48, 8, 8, 0, -1, 2}, {64, 64, 8, 8, 0, 0, 2}, {64, 128, 7, 8, 0, 1, 2}, {128, 64, 6, 8, 0, -1, 2},
      {128, 128, 4, 8, 0, 1, 2},
      // One slab buffer per math warpgroup (slabs stored one after another).
      {256, 128, 4, 8, 1, 2}, {64, 128, 8, 8, 0, 2}, {128, 128, 5, 8, 0, 2, 2},
      // TMA stores with block_n not a multiple of 64 (the last slab overlaps the one before).
      {128, 144, 5, 8, 0, 1}, {64, 80, 8, 8, 0, 1}, {256, 112, 3, 8, 1, 1}, {128, 160, 5, 8, 2, 2},
      // 176 columns: tiles that touch three 128-column blocks of B's scales (N = 2120 and
      // 7168 put tiles at every offset modulo 128).
      {128, 176, 4, 8, 0, 1}, {64, 176, 7, 8, 0, 0}, {128, 176, 4, 8, 2, 1}, {64, 176, 6, 8, 0, 0, 2},
      // Three math warpgroups (192-row tiles), A pairs on the planner's narrow picks of long K
      // loops among them (192x112 with overlapping TMA-store slabs, 192x96).
      {192, 128, 4, 8, 0, 1}, {192, 112, 5, 8, 0, 0}, {192, 128, 4, 8, 1, 1}, {192, 16, 8, 8, 0, 0},
      {192, 112, 4, 8, 1, 1}, {192, 96, 4, 8, 1, 1},
  };
  // M = 700: 3 blocks of 256, 6 of 128 (+1 partial), 11 of 64; N = 2120: odd block counts
  // for most block_n; K = 7184 ends in a partial K block.
  const Case shapes[] = {{700, 2120, 7184}, {4096, 7168, 2048}, {129, 576, 1536}};
  for (const Case& c : shapes) {
    const DeviceOperand a = upload(operand_a(c, 11 + c.m));
    const DeviceOperand b = upload(host::random_operand(c.n, c.k, c.k, false, 13 + c.n));
    DeviceBuffer ref(size_t(c.m * c.n) * 8);
    reference_gemm(a, b, ref.get<double>());
    for (const KernelConfig& config : configs) {
      SCOPED_TRACE(testing::Message() << "M=" << c.m << " N=" << c.n << " K=" << c.k << " bm" << config.block_m
                                      << " bn" << config.block_n << " mc" << config.multicast);
      GuardedOutput out = make_output(c.m, c.n, c.n);
      gemm_fp8_nt({a.data.get(), c.m, c.k, a.host.ld}, per_token_scales(a.scales.get<float>(), c.m, c.k),
                  {b.data.get(), c.n, c.k, b.host.ld}, block_scales(b.scales.get<float>(), c.n, c.k),
                  {out.d(), c.m, c.n, out.ld}, config);
      check(cudaDeviceSynchronize(), "gemm_fp8_nt(config)");
      std::printf("  bm%-3d bn%-3d s%d g%-2d mc%d ", config.block_m, config.block_n, config.stages, config.group_n,
                  config.multicast);
      expect_good(c, compare(out, ref.get<double>()));
    }
  }
}
