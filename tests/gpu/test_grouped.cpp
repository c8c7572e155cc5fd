// The grouped GEMMs (mixture of experts) on an sm_90 GPU, against per-expert fp64 references
// on the dequantized operands:
//   gemm_fp8_nt_grouped_contiguous: uneven segments, empty experts, one expert, one expert
//     holding every row, segments in any expert order, padding rows (exact zeros, whatever A
//     holds there), indices outside [-1, groups) on the device (zeros, nothing outside D),
//     experts whose B passes the along-M walk's limit (tiles walk along N, alone and in CTA
//     pairs sharing B);
//   gemm_fp8_nt_grouped_masked: masked_m 0, max_m and in between (rows past masked_m keep
//     their poison), max_m not a multiple of a tile, masked_m outside [0, max_m] (clamped),
//     and a CUDA graph replayed after new masked_m values are copied to the device;
//   bad host-visible arguments: Error(InvalidArgument) and nothing written.
// N and K have tails (N % 128 != 0, K % 128 != 0) throughout.

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/fp8_host.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

class GpuGrouped : public Sm90Test {};

// G experts' weights [N, K] (128x128 block scales each), stacked on the device as the grouped
// GEMMs read them: B [G * N, K] and b_scales [G * ceil(N/128), ceil(K/128)].
struct Experts {
  int64_t groups = 0, n = 0, k = 0, ld = 0;
  std::vector<host::Fp8Operand> host;
  DeviceBuffer data, scales;

  Fp8Matrix matrix() const { return {data.get(), groups * n, k, ld}; }
  ScaleMatrix scale_matrix() const {
    return {scales.get<float>(), groups * scale_blocks(n), scale_blocks(k), scale_blocks(k), 1};
  }
};

Experts make_experts(int64_t groups, int64_t n, int64_t k, int64_t ld, uint64_t seed) {
  Experts e;
  e.groups = groups;
  e.n = n;
  e.k = k;
  e.ld = ld;
  const size_t data_bytes = size_t(n * ld), scale_count = size_t(scale_blocks(n) * scale_blocks(k));
  e.data = DeviceBuffer(data_bytes * size_t(groups));
  e.scales = DeviceBuffer(scale_count * 4 * size_t(groups));
  for (int64_t g = 0; g < groups; ++g) {
    e.host.push_back(host::random_operand(n, k, ld, false, seed + uint64_t(g) * 1000003u));
    const host::Fp8Operand& op = e.host.back();
    check(cudaMemcpy(e.data.get<uint8_t>() + size_t(g) * data_bytes, op.data.data(), data_bytes,
                     cudaMemcpyHostToDevice),
          "upload B");
    check(cudaMemcpy(e.scales.get<float>() + size_t(g) * scale_count, op.scales.data(), scale_count * 4,
                     cudaMemcpyHostToDevice),
          "upload b_scales");
  }
  return e;
}

// Makes rows of a per-token operand NaN (data and scales): what A holds there must not matter.
void poison_rows(host::Fp8Operand* a, int64_t r0, int64_t rows) {
  for (int64_t r = r0; r < r0 + rows; ++r) {
    std::fill_n(a->data.begin() + r * a->ld, a->cols, uint8_t(0x7f));
    for (int64_t j = 0; j < scale_blocks(a->cols); ++j) a->scales[size_t(j * a->scale_stride + r)] = NAN;
  }
}

// ref[g] = A x B_g^T over all rows of A (fp64, [A rows, N] row-major on the host), for every
// expert g.
std::vector<std::vector<double>> expert_references(const host::Fp8Operand& a, const Experts& e) {
  const DeviceOperand da = upload(a);
  std::vector<std::vector<double>> refs(size_t(e.groups));
  DeviceBuffer ref(size_t(a.rows * e.n) * 8);
  for (int64_t g = 0; g < e.groups; ++g) {
    const DeviceOperand db = upload(e.host[size_t(g)]);
    reference_gemm(da, db, ref.get<double>());
    refs[size_t(g)].resize(size_t(a.rows * e.n));
    check(cudaMemcpy(refs[size_t(g)].data(), ref.get(), refs[size_t(g)].size() * 8, cudaMemcpyDeviceToHost),
          "download reference");
  }
  return refs;
}

// The rows `rows` of a per-token operand, in that order, as an operand of their own.
host::Fp8Operand select_rows(const host::Fp8Operand& a, const std::vector<int64_t>& rows) {
  host::Fp8Operand s;
  s.rows = int64_t(rows.size());
  s.cols = a.cols;
  s.ld = a.ld;
  s.per_token = true;
  s.scale_stride = (s.rows + 3) / 4 * 4;
  s.data.resize(size_t(s.rows * s.ld));
  s.scales.assign(size_t(scale_blocks(a.cols) * s.scale_stride), NAN);
  for (int64_t i = 0; i < s.rows; ++i) {
    const int64_t r = rows[size_t(i)];
    std::copy_n(a.data.begin() + r * a.ld, a.ld, s.data.begin() + i * s.ld);
    for (int64_t j = 0; j < scale_blocks(a.cols); ++j)
      s.scales[size_t(j * s.scale_stride + i)] = a.scales[size_t(j * a.scale_stride + r)];
  }
  return s;
}

// The fp64 products D must hold for a contiguous call: row r of A times expert
// group_of_row[r]'s B^T ([rows of A, N] row-major), 0 on rows of no valid expert. Each
// expert's reference covers its own rows only (the cost is the real rows x N x K).
std::vector<double> contiguous_reference(const host::Fp8Operand& a, const Experts& e,
                                         const std::vector<int32_t>& group_of_row) {
  std::vector<double> values(size_t(a.rows * e.n), 0.0);
  for (int64_t g = 0; g < e.groups; ++g) {
    std::vector<int64_t> rows;
    for (int64_t r = 0; r < a.rows; ++r)
      if (group_of_row[size_t(r)] == g) rows.push_back(r);
    if (rows.empty()) continue;
    const DeviceOperand da = upload(select_rows(a, rows));
    const DeviceOperand db = upload(e.host[size_t(g)]);
    DeviceBuffer ref(rows.size() * size_t(e.n) * 8);
    reference_gemm(da, db, ref.get<double>());
    std::vector<double> got(rows.size() * size_t(e.n));
    check(cudaMemcpy(got.data(), ref.get(), got.size() * 8, cudaMemcpyDeviceToHost), "download reference");
    for (size_t i = 0; i < rows.size(); ++i)
      std::copy_n(got.begin() + int64_t(i) * e.n, e.n, values.begin() + rows[i] * e.n);
  }
  return values;
}

// What each row of D must hold after the call.
enum class RowWant { Product, Zero, Untouched };

struct Expected {
  std::vector<RowWant> rows;
  std::vector<double> values;  // [rows, N]: the product rows' fp64 values (0 elsewhere)
};

struct HostCheck {
  double rel_error = 0, max_abs_error = 0;
  int64_t product_rows = 0;
  int64_t non_finite = 0;         // product elements left unwritten (poison) or NaN/Inf
  int64_t nonzero_padding = 0;    // elements of zero rows that are not exactly 0
  int64_t overwritten = 0;        // elements of untouched rows that lost their poison
  int64_t touched_outside = 0;    // guard elements and row padding (columns past N) modified
  std::string describe() const {
    char text[256];
    std::snprintf(text, sizeof(text),
                  "rel_error=%.3e max_abs=%.3e product_rows=%lld non_finite=%lld nonzero_padding=%lld "
                  "overwritten=%lld touched_outside=%lld",
                  rel_error, max_abs_error, (long long)product_rows, (long long)non_finite,
                  (long long)nonzero_padding, (long long)overwritten, (long long)touched_outside);
    return text;
  }
};

// Downloads the whole guarded buffer and checks every element against `want`.
HostCheck check_on_host(const GuardedOutput& out, const Expected& want) {
  check(cudaDeviceSynchronize(), "before the check");
  std::vector<uint16_t> got(size_t(out.total()));
  check(cudaMemcpy(got.data(), out.buffer.get(), got.size() * 2, cudaMemcpyDeviceToHost), "download D");
  HostCheck c;
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < out.total(); ++i) {
    const uint16_t bits = got[size_t(i)];
    const int64_t j = i - out.guard;
    if (j < 0 || j >= out.rows * out.ld || j % out.ld >= out.cols) {
      c.touched_outside += bits != host::kBf16Poison;
      continue;
    }
    const int64_t r = j / out.ld, col = j % out.ld;
    switch (want.rows[size_t(r)]) {
      case RowWant::Untouched:
        c.overwritten += bits != host::kBf16Poison;
        break;
      case RowWant::Zero:
        c.nonzero_padding += !(host::bf16_to_float(bits) == 0.0f);  // NaN (poison) counts
        break;
      case RowWant::Product: {
        const double g = host::bf16_to_float(bits), w = want.values[size_t(r * out.cols + col)];
        if (!std::isfinite(g)) {
          ++c.non_finite;
          break;
        }
        err2 += (g - w) * (g - w);
        ref2 += w * w;
        c.max_abs_error = std::max(c.max_abs_error, std::abs(g - w));
        break;
      }
    }
  }
  for (RowWant w : want.rows) c.product_rows += w == RowWant::Product;
  c.rel_error = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return c;
}

void expect_good(const HostCheck& c) {
  EXPECT_EQ(c.non_finite, 0) << "product rows not written: " << c.describe();
  EXPECT_EQ(c.nonzero_padding, 0) << "padding rows must be exact zeros: " << c.describe();
  EXPECT_EQ(c.overwritten, 0) << "rows past masked_m must not be written: " << c.describe();
  EXPECT_EQ(c.touched_outside, 0) << "wrote outside D: " << c.describe();
  EXPECT_LT(c.rel_error, 1e-2) << c.describe();  // bf16 output, as for gemm_fp8_nt
}

// ---------------------------------------------------------------------------
// Contiguous
// ---------------------------------------------------------------------------

std::string config_label(const KernelConfig& c) {
  return "bm" + std::to_string(c.block_m) + "_bn" + std::to_string(c.block_n) + "_s" + std::to_string(c.stages) +
         (c.tma_store >= 0 ? "_ts" + std::to_string(c.tma_store) : std::string());
}

struct ContiguousCase {
  const char* name;
  int64_t n, k;
  std::vector<int64_t> group_rows;  // real rows of each expert; G = size
  std::vector<int> order = {};      // expert order of the segments; empty: 0, 1, .., G-1
  int64_t a_pad = 0, b_pad = 0, d_pad = 0;  // leading dimension = cols + pad
  // Changes the row -> expert map after the layout is built (bad device data).
  std::function<void(std::vector<int32_t>&, int64_t groups)> corrupt = nullptr;
  const KernelConfig* config = nullptr;  // the library's choice when null
};

void run_contiguous(const ContiguousCase& cc) {
  SCOPED_TRACE(cc.name);
  const int64_t groups = int64_t(cc.group_rows.size()), n = cc.n, k = cc.k;
  std::vector<int> order = cc.order;
  if (order.empty())
    for (int g = 0; g < int(groups); ++g) order.push_back(g);
  // Segments padded to kGroupedSegmentRows, -1 on the padding.
  std::vector<int32_t> group_of_row;
  for (int g : order) {
    const int64_t rows = cc.group_rows[size_t(g)];
    const int64_t padded = (rows + kGroupedSegmentRows - 1) / kGroupedSegmentRows * kGroupedSegmentRows;
    group_of_row.insert(group_of_row.end(), size_t(rows), g);
    group_of_row.insert(group_of_row.end(), size_t(padded - rows), -1);
  }
  if (cc.corrupt) cc.corrupt(group_of_row, groups);
  const int64_t m = int64_t(group_of_row.size());
  ASSERT_EQ(m % kGroupedSegmentRows, 0);

  host::Fp8Operand a = host::random_operand(m, k, k + cc.a_pad, true, uint64_t(m * 3 + k + groups));
  // Padding rows hold NaN: their output must be zeros whatever A holds.
  for (int64_t r = 0; r < m; ++r)
    if (group_of_row[size_t(r)] == -1) poison_rows(&a, r, 1);
  const Experts e = make_experts(groups, n, k, k + cc.b_pad, uint64_t(n * 7 + k));

  Expected want;
  want.values = contiguous_reference(a, e, group_of_row);
  for (int64_t r = 0; r < m; ++r) {
    const int32_t g = group_of_row[size_t(r)];
    want.rows.push_back(g >= 0 && g < groups ? RowWant::Product : RowWant::Zero);
  }

  const DeviceOperand da = upload(a);
  DeviceBuffer map(group_of_row.size() * 4);
  check(cudaMemcpy(map.get(), group_of_row.data(), group_of_row.size() * 4, cudaMemcpyHostToDevice), "upload map");
  GuardedOutput out = make_output(m, n, n + cc.d_pad);
  const Fp8Matrix am{da.data.get(), m, k, a.ld};
  const ScaleMatrix as{da.scales.get<float>(), m, scale_blocks(k), 1, a.scale_stride};
  const Bf16Matrix dm{out.d(), m, n, out.ld};
  if (cc.config != nullptr)
    gemm_fp8_nt_grouped_contiguous(am, as, e.matrix(), e.scale_matrix(), dm, map.get<int32_t>(), groups, *cc.config);
  else
    gemm_fp8_nt_grouped_contiguous(am, as, e.matrix(), e.scale_matrix(), dm, map.get<int32_t>(), groups);
  check(cudaDeviceSynchronize(), "grouped contiguous");
  if (cc.config != nullptr) expect_kernel_in_disk_cache(config_slug_prefix("gemm1d2d_gc", n, k, *cc.config));

  const HostCheck c = check_on_host(out, want);
  std::printf("  contiguous %-28s G=%-2lld M=%-5lld N=%-4lld K=%-5lld %s %s\n", cc.name, (long long)groups,
              (long long)m, (long long)n, (long long)k,
              cc.config != nullptr ? config_label(*cc.config).c_str() : "", c.describe().c_str());
  expect_good(c);
  // The library's own comparison agrees (padding rows compared against 0).
  DeviceBuffer ref(want.values.size() * 8);
  check(cudaMemcpy(ref.get(), want.values.data(), want.values.size() * 8, cudaMemcpyHostToDevice), "upload want");
  const DeviceComparison dc = compare(out, ref.get<double>());
  EXPECT_EQ(dc.non_finite, 0u) << dc.describe();
  EXPECT_EQ(dc.touched_outside, 0u) << dc.describe();
  EXPECT_LT(dc.rel_error, 1e-2) << dc.describe();
}

TEST_F(GpuGrouped, ContiguousUnevenGroups) {
  run_contiguous({"uneven", 264, 528, {130, 7, 300, 64}});
}

TEST_F(GpuGrouped, ContiguousEmptyGroupsAndWideRows) {
  // Experts 1 and 4 (the last) have no rows; A, B and D rows are wider than K, K and N.
  run_contiguous({"empty groups, ld > cols", 520, 1040, {200, 0, 128, 0, 33}, {}, 32, 16, 8});
}

TEST_F(GpuGrouped, ContiguousSingleGroup) {
  run_contiguous({"single group", 264, 528, {257}});
}

TEST_F(GpuGrouped, ContiguousOneGroupHoldsAllRows) {
  run_contiguous({"one group holds all rows", 520, 1040, {0, 0, 640, 0}});
}

// Stripes along M with a partial last stripe: 2304 rows after padding (with 128-row tiles
// 18 M blocks: two whole stripes of 8 and one of 2; with 192 columns 9 N blocks, the last
// partial, 162 tiles on 132 SMs).
TEST_F(GpuGrouped, ContiguousManyTileStripes) {
  run_contiguous({"stripes along M", 1552, 256, {1000, 700, 450}});
}

TEST_F(GpuGrouped, ContiguousSegmentsInAnyExpertOrder) {
  run_contiguous({"experts out of order", 264, 528, {100, 260, 5}, {2, 0, 1}});
}

// A buffer of fixed capacity: whole 128-row blocks of padding (-1) after the last segment
// come out as zeros (with 256-row tiles: a block whose second half is padding, and a block
// of padding only).
void trailing_padding(std::vector<int32_t>& map, int64_t) { map.insert(map.end(), 384, -1); }

TEST_F(GpuGrouped, ContiguousTrailingPaddingBlocks) {
  run_contiguous({"trailing padding blocks", 264, 528, {130, 300}, {}, 0, 0, 0, trailing_padding});
}

// Indices outside [-1, groups) on the device: those rows come out as zeros, nothing outside
// D is written (the guards and the row padding keep their poison). The first row of every
// 128-row block keeps a valid expert, so the block's expert is well defined.
TEST_F(GpuGrouped, ContiguousIndexOutOfRangeOnTheDevice) {
  run_contiguous({"bad indices", 264, 528, {200, 128, 50}, {}, 0, 0, 8,
                  [](std::vector<int32_t>& map, int64_t groups) {
                    map[5] = int32_t(groups);  // expert 0's first block
                    map[77] = -3;
                    map[130] = INT_MAX;        // expert 0's second block
                    map[199] = INT_MIN;
                    map[300] = 1000;           // expert 1's block
                    map[385] = int32_t(groups) + 1;  // expert 2's block, among valid rows
                  }});
}

// The explicit-config overload: each config on segments of every kind (uneven, empty, padding
// rows (a whole padding-only tile with 64-row tiles), out-of-order experts, a bad index,
// padding blocks after the last segment), tile heights and widths the planner does not pick
// for these sizes, direct and TMA-store epilogues, N and K tails. CTA pairs sharing B: pairs
// of M blocks in one expert (shared), in two (each CTA loads its own B), and an odd block
// count (a partner past M).
TEST_F(GpuGrouped, ContiguousExplicitConfigs) {
  const KernelConfig configs[] = {{64, 48, 8, 8},          {128, 192, 4, 8},       {128, 128, 5, 8, 0, 0},
                                  {128, 112, 5, 4, 0, 1},   {128, 192, 4, 8, 2, 1}, {128, 128, 5, 8, 2, 0},
                                  {64, 112, 8, 8, 2, 0}};
  for (const KernelConfig& config : configs) {
    SCOPED_TRACE(config_label(config));
    run_contiguous({"explicit, uneven", 264, 528, {130, 7, 300, 0, 64}, {}, 0, 0, 0, nullptr, &config});
    run_contiguous({"explicit, out of order, bad index", 1552, 656, {1000, 260, 5}, {2, 0, 1}, 0, 0, 8,
                    [](std::vector<int32_t>& map, int64_t groups) { map[300] = int32_t(groups); }, &config});
    run_contiguous({"explicit, trailing padding", 264, 528, {130, 300}, {}, 0, 0, 0, trailing_padding, &config});
  }
}

// Experts whose B (N x K bytes) passes 24 MiB (kAlongMMaxExpertBBytes, src/problem/problem.hpp)
// walk their tiles in stripes of N blocks: the library's choice, the 128x192 tile alone and in CTA
// pairs sharing B, on a pair of M blocks in one expert, a pair over two experts (each CTA
// loads its own B) and a partner past M, with N and K tails.
TEST_F(GpuGrouped, ContiguousExpertsPastTheAlongMLimitWalkAlongN) {
  constexpr int64_t n = 4104, k = 6208;
  static_assert(n * k > (int64_t(24) << 20), "the experts' B must pass the along-M limit");
  const KernelConfig alone{128, 192, 4, 8}, pairs{128, 192, 4, 8, 2, 1};
  run_contiguous({"along N, library's choice", n, k, {130, 70, 40}, {1, 2, 0}});
  run_contiguous({"along N, 128x192", n, k, {130, 70, 40}, {1, 2, 0}, 0, 0, 8, nullptr, &alone});
  run_contiguous({"along N, B pairs", n, k, {130, 70, 40, 5}, {1, 2, 0, 3}, 0, 0, 8, nullptr, &pairs});
}

// ---------------------------------------------------------------------------
// Masked
// ---------------------------------------------------------------------------

struct MaskedSetup {
  int64_t groups, max_m, n, k;
  host::Fp8Operand a;
  DeviceOperand da;
  Experts e;
  std::vector<std::vector<double>> refs;
  DeviceBuffer masked;
  GuardedOutput out;

  Fp8Matrix a_matrix() const { return {da.data.get(), groups * max_m, k, a.ld}; }
  ScaleMatrix a_scales() const { return {da.scales.get<float>(), groups * max_m, scale_blocks(k), 1, a.scale_stride}; }
  Bf16Matrix d() const { return {out.d(), groups * max_m, n, out.ld}; }

  void set_masked(const std::vector<int32_t>& values) {
    check(cudaMemcpy(masked.get(), values.data(), values.size() * 4, cudaMemcpyHostToDevice), "upload masked_m");
    check(cudaDeviceSynchronize(), "upload masked_m");  // a pageable copy may still be in flight
  }

  // Rows r < clamp(masked_m[g], 0, max_m) of each expert are products, the others untouched.
  Expected expected(const std::vector<int32_t>& masked_m) const {
    Expected want;
    want.values.assign(size_t(groups * max_m * n), 0.0);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t used = std::clamp<int64_t>(masked_m[size_t(g)], 0, max_m);
      for (int64_t i = 0; i < max_m; ++i) {
        const int64_t r = g * max_m + i;
        want.rows.push_back(i < used ? RowWant::Product : RowWant::Untouched);
        if (i < used) std::copy_n(refs[size_t(g)].begin() + r * n, n, want.values.begin() + r * n);
      }
    }
    return want;
  }
};

// nan_past: rows of expert g from nan_past[g] on hold NaN in A (empty: none).
std::unique_ptr<MaskedSetup> make_masked(int64_t groups, int64_t max_m, int64_t n, int64_t k, int64_t d_pad,
                                         const std::vector<int32_t>& nan_past = {}) {
  auto s = std::make_unique<MaskedSetup>();
  s->groups = groups;
  s->max_m = max_m;
  s->n = n;
  s->k = k;
  s->a = host::random_operand(groups * max_m, k, k, true, uint64_t(groups * max_m + 5 * k));
  for (size_t g = 0; g < nan_past.size(); ++g) {
    const int64_t from = std::clamp<int64_t>(nan_past[g], 0, max_m);
    poison_rows(&s->a, int64_t(g) * max_m + from, max_m - from);
  }
  s->da = upload(s->a);
  s->e = make_experts(groups, n, k, k, uint64_t(n * 11 + k));
  s->refs = expert_references(s->a, s->e);
  s->masked = DeviceBuffer(size_t(groups) * 4);
  s->out = make_output(groups * max_m, n, n + d_pad);
  return s;
}

void run_masked(const char* name, int64_t groups, int64_t max_m, int64_t n, int64_t k, int64_t expected_m,
                const std::vector<int32_t>& masked_m, const KernelConfig* config = nullptr) {
  SCOPED_TRACE(name);
  // Rows past masked_m hold NaN in A: they must neither be written nor matter.
  std::unique_ptr<MaskedSetup> s = make_masked(groups, max_m, n, k, 8, masked_m);
  s->set_masked(masked_m);
  if (config != nullptr)
    gemm_fp8_nt_grouped_masked(s->a_matrix(), s->a_scales(), s->e.matrix(), s->e.scale_matrix(), s->d(),
                               s->masked.get<int32_t>(), groups, expected_m, *config);
  else
    gemm_fp8_nt_grouped_masked(s->a_matrix(), s->a_scales(), s->e.matrix(), s->e.scale_matrix(), s->d(),
                               s->masked.get<int32_t>(), groups, expected_m);
  check(cudaDeviceSynchronize(), "grouped masked");
  if (config != nullptr) expect_kernel_in_disk_cache(config_slug_prefix("gemm1d2d_gm", n, k, *config));
  const HostCheck c = check_on_host(s->out, s->expected(masked_m));
  std::printf("  masked %-32s G=%-2lld max_m=%-4lld N=%-4lld K=%-5lld  %s\n", name, (long long)groups,
              (long long)max_m, (long long)n, (long long)k, c.describe().c_str());
  expect_good(c);
}

TEST_F(GpuGrouped, MaskedZeroFullAndPartialGroups) {
  run_masked("0, max_m and between", 4, 192, 264, 528, 100, {0, 192, 77, 130});
}

TEST_F(GpuGrouped, MaskedMaxMNotATileMultiple) {
  run_masked("max_m 100", 3, 100, 520, 1040, 50, {100, 0, 37});
}

TEST_F(GpuGrouped, MaskedTilesOf256Rows) {
  // Wide enough for the planner's 256-row tiles (checked): a tile covers rows past masked_m,
  // whole 64-row waves of them (150: the last wave of the second warpgroup), and with
  // max_m = 320 an expert's second tile reaches into the next expert's rows. Only rows
  // below masked_m may be written; N and K have tails.
  const std::string kernel = kernel_name(GemmShape{4 * 192, 4104, 656, GemmKind::GroupedMasked, 4});
  EXPECT_NE(kernel.find("_bm256_"), std::string::npos) << kernel;
  run_masked("256-row tiles", 4, 320, 4104, 656, 192, {150, 320, 0, 255});
}

// The explicit-config overload, including 256-row tiles on experts of more than 256 rows
// (which the planner does not pick): only rows below masked_m are written. CTA pairs sharing
// B (two M blocks of one expert): an odd block count leaves the last partner past masked_m
// (its rows the next expert's, or past the end of A), storing nothing.
TEST_F(GpuGrouped, MaskedExplicitConfigs) {
  const KernelConfig configs[] = {{64, 96, 8, 8},         {128, 192, 4, 8},       {256, 128, 3, 8},
                                  {256, 64, 4, 8, 0, 0},  {128, 192, 4, 8, 2, 1}, {128, 128, 5, 8, 2, 0},
                                  {64, 112, 8, 8, 2, 0}};
  for (const KernelConfig& config : configs) {
    SCOPED_TRACE(config_label(config));
    run_masked("explicit", 3, 600, 520, 1040, 300, {600, 0, 313}, &config);
    if (config.multicast == 2) run_masked("explicit, partner past A", 2, 384, 520, 1040, 300, {200, 384}, &config);
  }
}

TEST_F(GpuGrouped, MaskedValuesOutsideTheRangeAreClamped) {
  // masked_m > max_m uses max_m rows (nothing of the next expert's rows); < 0 uses none.
  run_masked("clamped", 4, 128, 264, 528, 64, {1000, -5, 128, INT_MAX});
}

// A captured call replayed with new masked_m values copied to the device between replays:
// the host never reads masked_m, so each replay follows the values on the device.
TEST_F(GpuGrouped, MaskedCudaGraphFollowsMaskedMOnTheDevice) {
  const int64_t groups = 4, max_m = 128, n = 264, k = 528, expected_m = 64;
  std::unique_ptr<MaskedSetup> s = make_masked(groups, max_m, n, k, 0);
  const TestStream stream;
  auto call = [&] {
    gemm_fp8_nt_grouped_masked(s->a_matrix(), s->a_scales(), s->e.matrix(), s->e.scale_matrix(), s->d(),
                               s->masked.get<int32_t>(), groups, expected_m, stream);
  };
  // A first call outside the capture compiles and loads the kernel.
  const std::vector<int32_t> first = {64, 0, 128, 17};
  s->set_masked(first);
  call();
  check(cudaStreamSynchronize(stream), "first call");
  expect_good(check_on_host(s->out, s->expected(first)));

  std::unique_ptr<CapturedGraph> graph;
  try {
    graph = std::make_unique<CapturedGraph>(stream, call);
  } catch (const std::exception& ex) {
    FAIL() << "the call failed under capture: " << ex.what();
  }
  for (const std::vector<int32_t>& values : {std::vector<int32_t>{1, 128, 0, 99}, std::vector<int32_t>{128, 3, 64, 0},
                                             std::vector<int32_t>{0, 0, 0, 0}, std::vector<int32_t>{127, 65, 300, 128}}) {
    SCOPED_TRACE(testing::Message() << "masked_m " << values[0] << " " << values[1] << " " << values[2] << " "
                                    << values[3]);
    s->set_masked(values);
    poison(s->out);
    check(cudaDeviceSynchronize(), "poison");
    graph->replay(stream);
    const HostCheck c = check_on_host(s->out, s->expected(values));
    std::printf("  masked graph replay masked_m={%d,%d,%d,%d}  %s\n", values[0], values[1], values[2], values[3],
                c.describe().c_str());
    expect_good(c);
  }
}

// ---------------------------------------------------------------------------
// Bad host-visible arguments: InvalidArgument, nothing launched
// ---------------------------------------------------------------------------

template <typename Call>
void expect_invalid(const char* what, const GuardedOutput& out, Call&& call) {
  expect_rejected(what, call, [&] { return all_poisoned(out); });
}

TEST_F(GpuGrouped, BadArgumentsThrowBeforeLaunching) {
  const int64_t groups = 4, n = 264, k = 528, nb = scale_blocks(n), kb = scale_blocks(k);
  // Contiguous: 4 segments of 128 rows, every row of expert g.
  const int64_t m = groups * kGroupedSegmentRows;
  std::vector<int32_t> map(static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r) map[size_t(r)] = int32_t(r / kGroupedSegmentRows);
  const DeviceOperand a = upload(host::random_operand(m, k, k, true, 3));
  const Experts e = make_experts(groups, n, k, k, 4);
  DeviceBuffer map_buffer(map.size() * 4);
  check(cudaMemcpy(map_buffer.get(), map.data(), map.size() * 4, cudaMemcpyHostToDevice), "upload map");
  const GuardedOutput out = make_output(m, n, n);
  const int32_t* group_of_row = map_buffer.get<int32_t>();
  const Fp8Matrix am{a.data.get(), m, k, k};
  const ScaleMatrix as = per_token_scales(a.scales.get<float>(), m, k);
  const Fp8Matrix bm = e.matrix();
  const ScaleMatrix bs = e.scale_matrix();
  const Bf16Matrix dm{out.d(), m, n, n};
  auto contiguous = [&](const Fp8Matrix& a_, const ScaleMatrix& as_, const Fp8Matrix& b_, const ScaleMatrix& bs_,
                        const Bf16Matrix& d_, const int32_t* map_, int64_t g_) {
    gemm_fp8_nt_grouped_contiguous(a_, as_, b_, bs_, d_, map_, g_);
  };
  expect_invalid("contiguous groups = 0", out, [&] { contiguous(am, as, bm, bs, dm, group_of_row, 0); });
  expect_invalid("contiguous groups = -1", out, [&] { contiguous(am, as, bm, bs, dm, group_of_row, -1); });
  expect_invalid("contiguous b.rows != groups * N", out, [&] {
    contiguous(am, as, {bm.data, (groups - 1) * n, k, k}, {bs.data, (groups - 1) * nb, kb, kb, 1}, dm, group_of_row,
               groups);
  });
  expect_invalid("contiguous b.rows = groups * N - 8", out,
                 [&] { contiguous(am, as, {bm.data, groups * n - 8, k, k}, bs, dm, group_of_row, groups); });
  expect_invalid("contiguous M % 128 != 0", out, [&] {
    const int64_t m2 = m - 64;
    contiguous({am.data, m2, k, k}, per_token_scales(as.data, m2, k), bm, bs, {dm.data, m2, n, n}, group_of_row,
               groups);
  });
  expect_invalid("contiguous null group_of_row", out, [&] { contiguous(am, as, bm, bs, dm, nullptr, groups); });
  // ceil(G * N / 128) scale rows instead of G * ceil(N / 128): N = 264 is not a multiple of 128.
  expect_invalid("contiguous b_scales not stacked per expert", out, [&] {
    contiguous(am, as, bm, block_scales(bs.data, groups * n, k), dm, group_of_row, groups);
  });

  // Masked: max_m = 128 rows per expert.
  const int64_t max_m = m / groups;
  DeviceBuffer masked(size_t(groups) * 4);
  const std::vector<int32_t> masked_m(static_cast<size_t>(groups), static_cast<int32_t>(max_m));
  check(cudaMemcpy(masked.get(), masked_m.data(), masked_m.size() * 4, cudaMemcpyHostToDevice), "upload masked_m");
  const int32_t* mm = masked.get<int32_t>();
  auto masked_call = [&](const Fp8Matrix& a_, const ScaleMatrix& as_, const Fp8Matrix& b_, const ScaleMatrix& bs_,
                         const Bf16Matrix& d_, const int32_t* mm_, int64_t g_, int64_t expected_m) {
    gemm_fp8_nt_grouped_masked(a_, as_, b_, bs_, d_, mm_, g_, expected_m);
  };
  expect_invalid("masked groups = 0", out, [&] { masked_call(am, as, bm, bs, dm, mm, 0, 64); });
  expect_invalid("masked groups = -2", out, [&] { masked_call(am, as, bm, bs, dm, mm, -2, 64); });
  expect_invalid("masked a.rows % groups != 0", out, [&] {
    const int64_t m2 = m - 3;
    masked_call({am.data, m2, k, k}, per_token_scales(as.data, m2, k), bm, bs, {dm.data, m2, n, n}, mm, groups, 64);
  });
  expect_invalid("masked b.rows != groups * N", out,
                 [&] { masked_call(am, as, {bm.data, (groups + 1) * n, k, k}, bs, dm, mm, groups, 64); });
  expect_invalid("masked expected_m = 0", out, [&] { masked_call(am, as, bm, bs, dm, mm, groups, 0); });
  expect_invalid("masked expected_m < 0", out, [&] { masked_call(am, as, bm, bs, dm, mm, groups, -1); });
  expect_invalid("masked expected_m > max_m", out, [&] { masked_call(am, as, bm, bs, dm, mm, groups, max_m + 1); });
  expect_invalid("masked null masked_m", out, [&] { masked_call(am, as, bm, bs, dm, nullptr, groups, 64); });
  expect_invalid("masked d.rows != a.rows", out,
                 [&] { masked_call(am, as, bm, bs, {dm.data, m - groups * 8, n, n}, mm, groups, 64); });

  // The unmodified arguments are valid (so each rejection above is about its change).
  EXPECT_NO_THROW(contiguous(am, as, bm, bs, dm, group_of_row, groups));
  EXPECT_NO_THROW(masked_call(am, as, bm, bs, dm, mm, groups, max_m));
  check(cudaDeviceSynchronize(), "valid calls");
}

}  // namespace
