// The weight-gradient GEMM on an sm_90 GPU: D fp32 = C + A x B^T with per-token scales on
// both operands, against the fp64 reference on the dequantized operands, for no C, a
// separate C and C == D (accumulate in place), with partial tiles in M, N and K.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "common/fp8_host.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

class GpuWgrad : public Sm90Test {};

enum class CMode { None, Separate, InPlace };

void run_case(int64_t m, int64_t n, int64_t k, CMode mode) {
  SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " C mode " << int(mode));
  const DeviceOperand a = upload(host::random_operand(m, k, k, true, uint64_t(m + 7 * k)));
  const DeviceOperand b = upload(host::random_operand(n, k, k, true, uint64_t(n + 11 * k)));
  DeviceBuffer ref(size_t(m * n) * 8);
  reference_gemm(a, b, ref.get<double>());
  std::vector<double> want(size_t(m * n));
  check(cudaMemcpy(want.data(), ref.get(), want.size() * 8, cudaMemcpyDeviceToHost), "download reference");
  const int64_t ld = n + 4;
  std::vector<float> c_host(size_t(m * ld), 0.0f);
  host::SplitMix64 rng(uint64_t(m * n));
  for (float& v : c_host) v = float(rng.uniform() * 200 - 100);
  DeviceBuffer d(c_host.size() * 4), c(c_host.size() * 4);
  const std::vector<float> poison(c_host.size(), NAN);
  check(cudaMemcpy(d.get(), mode == CMode::InPlace ? c_host.data() : poison.data(), c_host.size() * 4,
                   cudaMemcpyHostToDevice),
        "init D");
  check(cudaMemcpy(c.get(), c_host.data(), c_host.size() * 4, cudaMemcpyHostToDevice), "init C");
  const Fp32Matrix dm{d.get<float>(), m, n, ld}, cm{c.get<float>(), m, n, ld};
  gemm_fp8_nt_wgrad({a.data.get(), m, k, a.host.ld}, per_token_scales(a.scales.get<float>(), m, k),
                    {b.data.get(), n, k, b.host.ld}, per_token_scales(b.scales.get<float>(), n, k), dm,
                    mode == CMode::None ? nullptr : mode == CMode::Separate ? &cm : &dm);
  check(cudaDeviceSynchronize(), "wgrad");
  std::vector<float> got(c_host.size());
  check(cudaMemcpy(got.data(), d.get(), got.size() * 4, cudaMemcpyDeviceToHost), "download D");
  double num = 0, den = 0;
  int64_t bad = 0, padding_touched = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < ld; ++col) {
      const float g = got[size_t(r * ld + col)];
      if (col >= n) {  // row padding: untouched
        const float before = mode == CMode::InPlace ? c_host[size_t(r * ld + col)] : NAN;
        padding_touched += !(std::isnan(before) ? std::isnan(g) : g == before);
        continue;
      }
      const double w = want[size_t(r * n + col)] + (mode == CMode::None ? 0.0 : double(c_host[size_t(r * ld + col)]));
      if (!std::isfinite(g)) ++bad;
      num += (g - w) * (g - w);
      den += w * w;
    }
  const double rel = std::sqrt(num / std::max(den, 1e-300));
  std::printf("  wgrad M=%-5lld N=%-5lld K=%-6lld C=%d  rel_error=%.3e\n", (long long)m, (long long)n, (long long)k,
              int(mode), rel);
  EXPECT_EQ(bad, 0) << "unwritten or non-finite outputs";
  EXPECT_EQ(padding_touched, 0) << "wrote outside D";
  EXPECT_LT(rel, 5e-4);  // measured ~2e-4: the tensor cores' accumulation within a 128-deep K block
}

}  // namespace

TEST_F(GpuWgrad, AgainstFp64Reference) {
  for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace})
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{256, 512, 1024}, {300, 264, 1040},
                           {129, 4096, 512}, {2112, 4096, 7168}})
      run_case(m, n, k, mode);
}

// 192-row tiles (three math warpgroups, one wgmma buffer each) with tails in M, N and K: the
// planner picks 192x96 and 192x128 tiles for these shapes (Heuristics tests keep it so).
TEST_F(GpuWgrad, ThreeMathWarpgroups) {
  for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run_case(1100, 4100, 1040, mode);
}

TEST_F(GpuWgrad, ThreeMathWarpgroupsLongK) {
  for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run_case(1300, 2052, 7200, mode);
}

// The wgrad shapes of the DeepSeek-V3 set (M and K swapped roles: D [M, N] += A x B^T).
TEST_F(GpuWgrad, DeepSeekShapes) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{576, 4096, 7168}, {7168, 4096, 2048}})
    run_case(m, n, k, CMode::InPlace);
}

// All wgrad shapes of the DeepSeek-V3 set at full size, accumulating in place, checked
// on 4096 sampled elements against fp64 dot products on the host (the full fp64
// reference would take minutes for the largest).
TEST_F(GpuWgrad, DeepSeekShapesSampled) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{2112, 4096, 7168}, {576, 4096, 7168},
                         {24576, 4096, 1536}, {32768, 4096, 512}, {7168, 4096, 16384}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k);
    const host::Fp8Operand ha = host::random_operand(m, k, k, true, uint64_t(3 * m + k));
    const host::Fp8Operand hb = host::random_operand(n, k, k, true, uint64_t(5 * n + k));
    const DeviceOperand a = upload(ha), b = upload(hb);
    std::vector<float> c_host(size_t(m * n));
    host::SplitMix64 rng(uint64_t(m + n + k));
    for (float& v : c_host) v = float(rng.uniform() * 200 - 100);
    DeviceBuffer d(c_host.size() * 4);
    check(cudaMemcpy(d.get(), c_host.data(), c_host.size() * 4, cudaMemcpyHostToDevice), "init D");
    const Fp32Matrix dm{d.get<float>(), m, n, n};
    gemm_fp8_nt_wgrad({a.data.get(), m, k, k}, per_token_scales(a.scales.get<float>(), m, k), {b.data.get(), n, k, k},
                      per_token_scales(b.scales.get<float>(), n, k), dm, &dm);
    check(cudaDeviceSynchronize(), "wgrad");
    std::vector<float> got(c_host.size());
    check(cudaMemcpy(got.data(), d.get(), got.size() * 4, cudaMemcpyDeviceToHost), "download D");
    double num = 0, den = 0, worst = 0;
    int64_t bad = 0;
    for (int s = 0; s < 4096; ++s) {
      const int64_t r = int64_t(rng.next() % uint64_t(m)), col = int64_t(rng.next() % uint64_t(n));
      double want = c_host[size_t(r * n + col)];
      for (int64_t i = 0; i < k; ++i) want += ha.value(r, i) * hb.value(col, i);
      const double g = got[size_t(r * n + col)];
      bad += !std::isfinite(g);
      num += (g - want) * (g - want);
      den += want * want;
      worst = std::max(worst, std::abs(g - want) / std::max(std::abs(want), 1.0));
    }
    const double rel = std::sqrt(num / den);
    std::printf("  wgrad M=%-5lld N=%-5lld K=%-6lld C=D  sampled rel_error=%.3e worst=%.3e\n", (long long)m,
                (long long)n, (long long)k, rel, worst);
    EXPECT_EQ(bad, 0);
    EXPECT_LT(rel, 5e-4);  // measured ~2e-4: the tensor cores' accumulation within a 128-deep K block
  }
}
