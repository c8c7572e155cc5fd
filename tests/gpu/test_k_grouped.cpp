// The k-grouped weight gradient (gemm_fp8_nt_wgrad_k_grouped) on an sm_90 GPU, against
// per-group fp64 references on the dequantized operands: K_g not all equal and not
// multiples of 128 (each group's last scale block partial), empty groups, a single group,
// M with a tail (a tile that ends inside a group's rows must not reach the next group),
// no C / separate C / C == D, bad K_g on the device (negative, more columns than A has:
// nothing written outside D), a CUDA graph replayed with new K_g, one full-size shape of
// the DeepSeek-V3 set checked on sampled elements, and bad host arguments.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "common/fp8_host.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

class GpuKGrouped : public Sm90Test {};

// want[g][r][c] = sum over group g's columns of A(r, i) B(c, i), in fp64 (only the first
// `valid` columns of each group count: the rest are zeros in both operands anyway).
std::vector<double> reference(const host::Fp8Operand& a, const host::Fp8Operand& b, const std::vector<int32_t>& ks) {
  const int64_t m = a.rows, n = b.rows, groups = int64_t(ks.size());
  std::vector<double> want(size_t(groups * m * n), 0.0);
  int64_t at = 0;
  std::vector<double> arow, brow;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t k = std::max<int32_t>(ks[size_t(g)], 0);
    std::vector<double> av(size_t(m * k)), bv(size_t(n * k));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t i = 0; i < k; ++i) av[size_t(r * k + i)] = a.value(r, at + i);
    for (int64_t c = 0; c < n; ++c)
      for (int64_t i = 0; i < k; ++i) bv[size_t(c * k + i)] = b.value(c, at + i);
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double s = 0;
        for (int64_t i = 0; i < k; ++i) s += av[size_t(r * k + i)] * bv[size_t(c * k + i)];
        want[size_t((g * m + r) * n + c)] = s;
      }
    at += k_grouped_columns(ks[size_t(g)]);
  }
  return want;
}

// D [groups * M, N] with row padding (ld = N + 4) and guard rows before and after, C random.
struct Problem {
  int64_t m = 0, n = 0, k_total = 0, groups = 0;
  std::vector<int32_t> ks;
  host::Fp8Operand ha, hb;
  DeviceOperand a, b;
  DeviceBuffer group_k;
  Fp32Output out;

  Fp8Matrix a_matrix() const { return {a.data.get(), m, k_total, k_total}; }
  Fp8Matrix b_matrix() const { return {b.data.get(), n, k_total, k_total}; }
  ScaleMatrix a_scales() const { return per_token_scales(a.scales.get<float>(), m, k_total); }
  ScaleMatrix b_scales() const { return per_token_scales(b.scales.get<float>(), n, k_total); }
  Fp32Matrix d_matrix() const { return out.d_matrix(); }
  Fp32Matrix c_matrix() const { return out.c_matrix(); }
};

Problem make_problem(int64_t m, int64_t n, const std::vector<int32_t>& ks, uint64_t seed) {
  Problem p;
  p.m = m;
  p.n = n;
  p.ks = ks;
  p.groups = int64_t(ks.size());
  k_group_starts(ks, &p.k_total);
  if (p.k_total == 0) p.k_total = 128;  // every group empty: A and B still need a K (one block nobody reads)
  p.ha = k_grouped_operand(m, p.k_total, ks, seed);
  p.hb = k_grouped_operand(n, p.k_total, ks, seed + 17);
  p.a = upload(p.ha);
  p.b = upload(p.hb);
  p.group_k = upload_ints(ks);
  p.out = make_fp32_output(p.groups * m, n, n + 4, seed * 3 + 1);
  return p;
}

void run(Problem& p, CMode mode, const std::vector<double>& want, const KernelConfig* config = nullptr) {
  SCOPED_TRACE(testing::Message() << "M=" << p.m << " N=" << p.n << " groups=" << p.groups << " C mode " << int(mode)
                                  << (config != nullptr ? " explicit bm" + std::to_string(config->block_m) + " bn" +
                                                              std::to_string(config->block_n)
                                                        : std::string()));
  init_fp32_output(p.out, mode);
  const Fp32Matrix dm = p.d_matrix(), cm = p.c_matrix();
  if (config != nullptr)
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), dm, c_argument(mode, dm, cm),
                                p.group_k.get<int32_t>(), p.groups, *config);
  else
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), dm, c_argument(mode, dm, cm),
                                p.group_k.get<int32_t>(), p.groups);
  check(cudaDeviceSynchronize(), "k-grouped wgrad");
  if (config != nullptr) expect_kernel_in_disk_cache(config_slug_prefix("gemm1d1d_kg", p.n, -1, *config));
  const Fp32Comparison r = compare_fp32(p.out, mode, want);
  std::printf("  k-grouped M=%-5lld N=%-5lld groups=%-3lld K=%-6lld C=%d  %s\n", (long long)p.m, (long long)p.n,
              (long long)p.groups, (long long)p.k_total, int(mode), r.describe().c_str());
  expect_fp32_good(r);
}

}  // namespace

TEST_F(GpuKGrouped, UnevenGroupsWithEmptyAndPartialBlocks) {
  // K_g: whole blocks, empty, partial last block (300 = 2 x 128 + 44), a larger one, a
  // single 16-column group; M = 200 ends inside a 128-row tile.
  Problem p = make_problem(200, 264, {256, 0, 300, 1040, 16}, 11);
  const std::vector<double> want = reference(p.ha, p.hb, p.ks);
  for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run(p, mode, want);
}

// Groups whose K is many times the pipeline's depth next to short and empty ones, with and
// without C (small enough for the sanitizers).
TEST_F(GpuKGrouped, LongAndShortGroups) {
  Problem p = make_problem(200, 264, {4096, 0, 2200, 128, 3072}, 13);
  const std::vector<double> want = reference(p.ha, p.hb, p.ks);
  for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run(p, mode, want);
}

// The explicit-config overload: tile heights 64, 128 and 192 (three math warpgroups), widths
// with one and two wgmma buffers, on uneven, empty and partial groups (M and N with tails).
TEST_F(GpuKGrouped, ExplicitConfigs) {
  Problem p = make_problem(200, 264, {256, 0, 300, 1040, 16}, 31);
  const std::vector<double> want = reference(p.ha, p.hb, p.ks);
  // (136 and 152 columns: 8 past a multiple of 16. On N = 264 the first tile stores its
  // overlapping last slab; the second, 128 / 112 columns wide, leaves it out.)
  const KernelConfig configs[] = {{64, 96, 6, 8},   {128, 128, 4, 8}, {128, 192, 3, 8},
                                  {192, 128, 3, 8}, {128, 136, 4, 8}, {128, 152, 4, 8}};
  for (const KernelConfig& config : configs) {
    run(p, CMode::InPlace, want, &config);
    run(p, CMode::None, want, &config);
  }
}

TEST_F(GpuKGrouped, SingleGroupAndEqualGroups) {
  {
    Problem p = make_problem(256, 512, {1024}, 21);
    run(p, CMode::InPlace, reference(p.ha, p.hb, p.ks));
  }
  {
    Problem p = make_problem(128, 1024, std::vector<int32_t>(8, 512), 23);
    run(p, CMode::Separate, reference(p.ha, p.hb, p.ks));
  }
  {
    // Every group empty: D = C (separate C), D untouched (in place), zeros (no C).
    Problem p = make_problem(64, 128, {0, 0, 0}, 25);
    const std::vector<double> zeros(size_t(p.groups * p.m * p.n), 0.0);
    for (CMode mode : {CMode::None, CMode::Separate, CMode::InPlace}) run(p, mode, zeros);
  }
}

// Bad K_g on the device: a negative value counts as 0, and groups claiming columns past A's K
// are cut off there. Nothing is written outside D; the groups before the cut are exact.
TEST_F(GpuKGrouped, BadCountsOnTheDeviceStayInsideD) {
  Problem p = make_problem(192, 256, {384, 256, 512}, 31);
  const std::vector<int32_t> bad = {384, -5, 1 << 30};  // group 1 negative, group 2 far past K
  check(cudaMemcpy(p.group_k.get(), bad.data(), bad.size() * 4, cudaMemcpyHostToDevice), "upload bad group_k");
  // With group 1 empty, group 2 starts at column 384 and runs to the end of A (columns of
  // groups 1 and 2): its result is that sum, finite; group 0 is exact.
  std::vector<int32_t> as_read = {384, 0, int32_t(p.k_total - 384)};
  std::vector<double> want_bad = reference(p.ha, p.hb, as_read);
  for (CMode mode : {CMode::None, CMode::InPlace}) {
    SCOPED_TRACE(int(mode));
    init_fp32_output(p.out, mode);
    const Fp32Matrix dm = p.d_matrix();
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), dm,
                                c_argument(mode, dm, dm), p.group_k.get<int32_t>(), p.groups);
    check(cudaDeviceSynchronize(), "k-grouped wgrad with bad counts");
    expect_fp32_good(compare_fp32(p.out, mode, want_bad));
  }
}

// Captured once, replayed after new K_g are copied to the device (same A and B buffers).
TEST_F(GpuKGrouped, CudaGraphFollowsTheCountsOnTheDevice) {
  Problem p = make_problem(128, 384, {512, 256, 384, 128}, 41);  // 4 groups, K = 1280
  const TestStream stream;
  const Fp32Matrix dm = p.d_matrix();
  auto call = [&] {
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), dm, nullptr,
                                p.group_k.get<int32_t>(), p.groups, stream);
  };
  // Compile outside the capture (the first call may compile and load a module).
  init_fp32_output(p.out, CMode::None);
  call();
  check(cudaStreamSynchronize(stream), "warm-up");
  const CapturedGraph graph(stream, call);
  // Counts that keep every group's start (each within its padded width) and ones that move
  // them (groups shrink to fewer blocks; the layout follows the counts).
  for (const std::vector<int32_t>& counts :
       {std::vector<int32_t>{512, 256, 384, 128}, std::vector<int32_t>{500, 16, 0, 100},
        std::vector<int32_t>{128, 128, 128, 896}}) {
    SCOPED_TRACE(testing::Message() << counts[0] << "," << counts[1] << "," << counts[2] << "," << counts[3]);
    check(cudaMemcpy(p.group_k.get(), counts.data(), counts.size() * 4, cudaMemcpyHostToDevice), "new counts");
    init_fp32_output(p.out, CMode::None);  // also waits for the counts' upload
    graph.replay(stream);
    // The reference reads the same buffers with these counts' layout: columns a group does
    // not cover count through zero padding only where the operand has zeros, so compare
    // against the products over exactly the columns each group reads.
    std::vector<double> want(size_t(p.groups * p.m * p.n), 0.0);
    int64_t at = 0;
    for (int64_t g = 0; g < p.groups; ++g) {
      const int64_t width = k_grouped_columns(counts[size_t(g)]);
      for (int64_t r = 0; r < p.m; ++r)
        for (int64_t c = 0; c < p.n; ++c) {
          double s = 0;
          for (int64_t i = at; i < std::min(at + width, p.k_total); ++i) s += p.ha.value(r, i) * p.hb.value(c, i);
          want[size_t((g * p.m + r) * p.n + c)] = s;
        }
      at += width;
    }
    expect_fp32_good(compare_fp32(p.out, CMode::None, want));
  }
}

// One k-grouped shape of the DeepSeek-V3 set at full size (8 groups, D [8 x 4096, 7168],
// K_g uneven around 4096), in place, on 4096 sampled elements against fp64 dot products.
TEST_F(GpuKGrouped, DeepSeekShapeSampled) {
  const int64_t m = 4096, n = 7168;
  std::vector<int32_t> ks;
  host::SplitMix64 rng(51);
  for (int g = 0; g < 8; ++g) ks.push_back(int32_t((0.7 + 0.6 * rng.uniform()) * 4096) / 16 * 16);
  int64_t k_total = 0;
  const std::vector<int64_t> starts = k_group_starts(ks, &k_total);
  const host::Fp8Operand ha = k_grouped_operand(m, k_total, ks, 52), hb = k_grouped_operand(n, k_total, ks, 53);
  const DeviceOperand a = upload(ha), b = upload(hb);
  const DeviceBuffer group_k = upload_ints(ks);
  const Fp32Output out = make_fp32_output(8 * m, n, n, 54);
  init_fp32_output(out, CMode::InPlace);
  const Fp32Matrix dm = out.d_matrix();
  gemm_fp8_nt_wgrad_k_grouped({a.data.get(), m, k_total, k_total}, per_token_scales(a.scales.get<float>(), m, k_total),
                              {b.data.get(), n, k_total, k_total}, per_token_scales(b.scales.get<float>(), n, k_total),
                              dm, &dm, group_k.get<int32_t>(), 8);
  check(cudaDeviceSynchronize(), "k-grouped wgrad");
  const Fp32Comparison c = sampled_compare_fp32(out, CMode::InPlace, 4096, 55, [&](int64_t row, int64_t col) {
    const int64_t g = row / m, r = row % m;
    double s = 0;
    for (int64_t i = starts[size_t(g)]; i < starts[size_t(g)] + ks[size_t(g)]; ++i) s += ha.value(r, i) * hb.value(col, i);
    return s;
  });
  std::printf("  k-grouped groups=8 M=%lld N=%lld K=%lld C=D  sampled %s\n", (long long)m, (long long)n,
              (long long)k_total, c.describe().c_str());
  expect_fp32_good(c);
}

TEST_F(GpuKGrouped, BadArgumentsThrowBeforeLaunching) {
  Problem p = make_problem(128, 256, {256, 128}, 61);
  const Fp32Matrix dm = p.d_matrix();
  auto expect_invalid = [&](const char* what, auto&& call) {
    init_fp32_output(p.out, CMode::None);
    expect_rejected(what, call, [&] {
      std::vector<float> got(p.out.d.bytes() / 4);
      check(cudaMemcpy(got.data(), p.out.d.get(), got.size() * 4, cudaMemcpyDeviceToHost), "download D");
      return std::all_of(got.begin(), got.end(), [](float v) { return std::isnan(v); });
    });
  };
  const int32_t* gk = p.group_k.get<int32_t>();
  expect_invalid("groups = 0", [&] {
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), dm, nullptr, gk, 0);
  });
  expect_invalid("null group_k", [&] {
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), dm, nullptr, nullptr, 2);
  });
  expect_invalid("d.rows != groups * M", [&] {
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), {dm.data, p.m, p.n, dm.ld},
                                nullptr, gk, 2);
  });
  expect_invalid("K of A and B differ", [&] {
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), {p.b.data.get(), p.n, 256, p.k_total},
                                per_token_scales(p.b.scales.get<float>(), p.n, 256), dm, nullptr, gk, 2);
  });
  const Fp32Matrix cm_bad{p.out.c.get<float>(), p.m, p.n, dm.ld};
  expect_invalid("C not [groups * M, N]", [&] {
    gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), dm, &cm_bad, gk, 2);
  });
  EXPECT_NO_THROW(gemm_fp8_nt_wgrad_k_grouped(p.a_matrix(), p.a_scales(), p.b_matrix(), p.b_scales(), dm, nullptr, gk, 2));
  check(cudaDeviceSynchronize(), "valid call");
}
