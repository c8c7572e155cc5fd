#include <gtest/gtest.h>

#include <functional>
#include <utility>

#include "fp8gemm/fp8gemm.hpp"
#include "support/fake_grouped.hpp"
#include "problem/validate.hpp"
#include "support/expect_invalid.hpp"

using namespace fp8gemm;
using fp8gemm::detail::validate_device;
using fp8gemm::detail::validate_gemm_fp8_nt;

namespace {

// Fake, well-aligned, non-overlapping device addresses: validation never dereferences.
struct Args {
  int64_t m = 129, n = 2120, k = 7184;
  Fp8Matrix a{reinterpret_cast<void*>(0x100000000), m, k, k};
  Fp8Matrix b{reinterpret_cast<void*>(0x200000000), n, k, k};
  Bf16Matrix d{reinterpret_cast<void*>(0x300000000), m, n, n};
  ScaleMatrix sa = per_token_scales(reinterpret_cast<const float*>(0x400000000), m, k);
  ScaleMatrix sb = block_scales(reinterpret_cast<const float*>(0x500000000), n, k);
  bool run() const { return validate_gemm_fp8_nt(a, sa, b, sb, d); }
};

using fp8gemm::test::expect_invalid;

// Expects InvalidArgument whose message names `needle`.
void expect_rejected(const std::function<void(Args&)>& mutate, const std::string& needle) {
  Args args;
  mutate(args);
  expect_invalid([&] { args.run(); }, needle);
}

}  // namespace

TEST(Validation, ValidArgumentsPass) {
  EXPECT_TRUE(Args().run());
  Args views;  // sub-matrix views: leading dimensions wider than the matrices
  views.a.ld = views.k + 64;
  views.b.ld = views.k + 16;
  views.d.ld = views.n + 8;
  views.sa.col_stride = 256;
  EXPECT_TRUE(views.run());
  Args transposed_sb;  // column-major block scales are accepted too
  transposed_sb.sb.row_stride = 1;
  transposed_sb.sb.col_stride = transposed_sb.sb.rows;
  EXPECT_TRUE(transposed_sb.run());
}

TEST(Validation, EmptyProblemsAreNoOps) {
  Args m0;
  m0.a.rows = m0.d.rows = m0.sa.rows = 0;
  m0.a.data = nullptr;  // nothing is read: null is fine
  m0.d.data = nullptr;
  EXPECT_FALSE(m0.run());
  Args n0;
  n0.b.rows = n0.d.cols = 0;
  EXPECT_FALSE(n0.run());
}

TEST(Validation, NullPointers) {
  expect_rejected([](Args& a) { a.a.data = nullptr; }, "a.data is null");
  expect_rejected([](Args& a) { a.b.data = nullptr; }, "b.data is null");
  expect_rejected([](Args& a) { a.d.data = nullptr; }, "d.data is null");
  expect_rejected([](Args& a) { a.sa.data = nullptr; }, "a_scales.data is null");
  expect_rejected([](Args& a) { a.sb.data = nullptr; }, "b_scales.data is null");
}

TEST(Validation, MisalignedPointers) {
  expect_rejected([](Args& a) { a.a.data = reinterpret_cast<void*>(0x100000008); }, "a.data");
  expect_rejected([](Args& a) { a.b.data = reinterpret_cast<void*>(0x200000001); }, "b.data");
  expect_rejected([](Args& a) { a.d.data = reinterpret_cast<void*>(0x300000004); }, "d.data");
  expect_rejected([](Args& a) { a.sa.data = reinterpret_cast<const float*>(0x400000004); }, "a_scales.data");
  expect_rejected([](Args& a) { a.sb.data = reinterpret_cast<const float*>(0x500000002); }, "b_scales.data");
}

TEST(Validation, LeadingDimensions) {
  expect_rejected([](Args& a) { a.a.ld = a.k + 8; }, "a.ld");
  expect_rejected([](Args& a) { a.a.ld = a.k - 16; }, "a.ld");
  expect_rejected([](Args& a) { a.b.ld = a.k + 1; }, "b.ld");
  expect_rejected([](Args& a) { a.d.ld = a.n + 4; }, "d.ld");
  expect_rejected([](Args& a) { a.d.ld = a.n - 8; }, "d.ld");
}

TEST(Validation, ShapeRules) {
  expect_rejected([](Args& a) { a.a.cols = a.b.cols = 7176; a.a.ld = a.b.ld = 7184; }, "not a multiple of 16");
  expect_rejected([](Args& a) { a.b.rows = a.d.cols = 2116; }, "not a multiple of 8");
  expect_rejected([](Args& a) { a.a.rows = -1; }, "negative");
  expect_rejected([](Args& a) { a.b.rows = -8; }, "negative");
  expect_rejected([](Args& a) { a.d.rows = -1; }, "negative");
  expect_rejected([](Args& a) { a.b.cols = 7168; }, "K of A and B must match");
  expect_rejected([](Args& a) { a.d.rows = 128; }, "D is [128");
  expect_rejected([](Args& a) { a.a.cols = a.b.cols = 0; a.sa.cols = a.sb.cols = 0; }, "K = 0");
  expect_rejected([](Args& a) { a.a.rows = a.d.rows = a.sa.rows = (int64_t(1) << 31) - 1; }, "at most");
}

TEST(Validation, ScaleShapesAndLayouts) {
  expect_rejected([](Args& a) { a.sa.cols -= 1; }, "a_scales is [129, 56]");
  expect_rejected([](Args& a) { a.sa.rows = 128; }, "a_scales is [128");
  // K-major per-token scales (row_stride = ceil(K/128), col_stride = 1): the common mistake.
  expect_rejected([](Args& a) { a.sa.row_stride = a.sa.cols; a.sa.col_stride = 1; }, "must be M-major");
  expect_rejected([](Args& a) { a.sa.col_stride = 130; }, "multiple of 4");
  expect_rejected([](Args& a) { a.sa.col_stride = 128; }, ">= M");
  expect_rejected([](Args& a) { a.sb.rows = 16; }, "b_scales is [16");
  expect_rejected([](Args& a) { a.sb.cols = 57 + 1; }, "b_scales is");
  expect_rejected([](Args& a) { a.sb.row_stride = 2; a.sb.col_stride = 2; }, "one stride must be 1");
  expect_rejected([](Args& a) { a.sb.row_stride = 10; }, "one stride must be 1");  // rows overlap
}

TEST(Validation, OutputMustNotOverlapInputs) {
  expect_rejected([](Args& a) { a.d.data = const_cast<void*>(a.a.data); }, "D overlaps A");
  expect_rejected([](Args& a) { a.d.data = reinterpret_cast<void*>(0x500000000 - 64); }, "D overlaps b_scales");
}

TEST(Validation, DeviceMustBeSm90) {
  EXPECT_NO_THROW(validate_device(9, 0, "NVIDIA H200", 0));
  for (auto cc : {std::pair{8, 0}, std::pair{8, 9}, std::pair{10, 0}, std::pair{12, 0}}) {
    try {
      validate_device(cc.first, cc.second, "some GPU", 1);
      ADD_FAILURE() << "accepted sm_" << cc.first << cc.second;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::UnsupportedDevice);
      EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("device 1"), std::string::npos) << e.what();
    }
  }
}

namespace {

struct QuantArgs {
  int64_t rows = 300, cols = 2056;
  Bf16Input x{reinterpret_cast<void*>(0x100000000), rows, cols, 2056};
  Fp8Output q{reinterpret_cast<void*>(0x200000000), rows, cols, 2064};
  ScaleOutput s = per_token_scale_output(reinterpret_cast<float*>(0x300000000), rows, cols);
  bool per_block = false;
  bool run() const {
    return per_block ? detail::validate_quantize("quantize_per_block", x, q, s, scale_blocks(rows), scale_blocks(cols))
                     : detail::validate_quantize("quantize_per_token", x, q, s, rows, scale_blocks(cols));
  }
};

void expect_quant_rejected(const std::function<void(QuantArgs&)>& mutate, const std::string& needle) {
  QuantArgs args;
  mutate(args);
  expect_invalid([&] { args.run(); }, needle);
}

}  // namespace

TEST(Validation, QuantizeArguments) {
  EXPECT_TRUE(QuantArgs().run());
  QuantArgs block;
  block.per_block = true;
  block.s = block_scale_output(reinterpret_cast<float*>(0x300000000), block.rows, block.cols);
  EXPECT_TRUE(block.run());
  QuantArgs empty;
  empty.x.rows = empty.q.rows = 0;
  empty.s.rows = 0;
  EXPECT_FALSE(empty.run());  // nothing to do, nothing checked further
  expect_quant_rejected([](QuantArgs& a) { a.x.rows = -1; }, "negative size");
  expect_quant_rejected([](QuantArgs& a) { a.q.cols = 2048; }, "the same as x's shape");
  expect_quant_rejected([](QuantArgs& a) { a.x.data = nullptr; }, "x.data is null");
  expect_quant_rejected([](QuantArgs& a) { a.q.data = reinterpret_cast<void*>(0x200000008); }, "q.data");
  expect_quant_rejected([](QuantArgs& a) { a.s.data = reinterpret_cast<float*>(0x300000002); }, "scales.data");
  expect_quant_rejected([](QuantArgs& a) { a.x.ld = 2060; }, "x.ld");
  expect_quant_rejected([](QuantArgs& a) { a.q.ld = 2056; }, "q.ld");
  expect_quant_rejected([](QuantArgs& a) { a.s.cols = 16; }, "scales is [300, 16]");
  expect_quant_rejected([](QuantArgs& a) { a.s.col_stride = 100; }, "strides");
  expect_quant_rejected([](QuantArgs& a) { a.q.data = reinterpret_cast<void*>(0x100000100); }, "q overlaps x");
  expect_quant_rejected([](QuantArgs& a) { a.s.data = reinterpret_cast<float*>(0x200000040); }, "scales overlaps q");
  expect_quant_rejected([](QuantArgs& a) {
    a.per_block = true;  // per-token scales given to the per-block quantizer
  }, "must be [3, 17]");
  // Transposed: q is [cols, rows], scales [cols, ceil(rows/128)].
  const Bf16Input x{reinterpret_cast<void*>(0x100000000), 300, 2056, 2056};
  const Fp8Output qt{reinterpret_cast<void*>(0x200000000), 2056, 300, 304};
  float* s = reinterpret_cast<float*>(0x300000000);
  EXPECT_TRUE(detail::validate_quantize("quantize_transposed_per_token", x, qt, per_token_scale_output(s, 2056, 300),
                                        2056, 3, true));
  try {
    detail::validate_quantize("quantize_transposed_per_token", x, Fp8Output{qt.data, 300, 2056, 2064},
                              per_token_scale_output(s, 2056, 300), 2056, 3, true);
    ADD_FAILURE() << "accepted an untransposed q";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the transpose of x's shape"), std::string::npos) << e.what();
  }
}

TEST(Validation, TransposeAndScaleConversion) {
  const int64_t n = 300, k = 2064;
  const Fp8Matrix w{reinterpret_cast<void*>(0x100000000), n, k, k};
  const ScaleMatrix ws = block_scales(reinterpret_cast<const float*>(0x200000000), n, k);
  const Fp8Output wt{reinterpret_cast<void*>(0x300000000), k, n, 304};
  const ScaleOutput wts = block_scale_output(reinterpret_cast<float*>(0x400000000), k, n);
  EXPECT_TRUE(detail::validate_fp8_transpose(w, ws, wt, wts));
  EXPECT_FALSE(detail::validate_fp8_transpose(Fp8Matrix{w.data, 0, k, k}, ws, Fp8Output{wt.data, k, 0, 304}, wts));
  auto rejected = [](const std::function<void()>& f, const std::string& needle) { expect_invalid(f, needle); };
  rejected([&] { detail::validate_fp8_transpose(w, ws, Fp8Output{wt.data, n, k, k}, wts); }, "transpose of w");
  rejected([&] { detail::validate_fp8_transpose(w, ws, Fp8Output{wt.data, k, n, 300}, wts); }, "wt.ld");
  rejected([&] { detail::validate_fp8_transpose(w, ws, wt, block_scale_output(wts.data, n, k)); }, "wt_scales is");
  rejected([&] { detail::validate_fp8_transpose(w, ws, Fp8Output{const_cast<void*>(w.data), k, n, 304}, wts); }, "wt overlaps w");
  // convert_scales: K-major per-token scales into the GEMM's M-major layout.
  const int64_t m = 129;
  const ScaleMatrix k_major{reinterpret_cast<const float*>(0x500000000), m, scale_blocks(k), scale_blocks(k), 1};
  const ScaleOutput m_major = per_token_scale_output(reinterpret_cast<float*>(0x600000000), m, k);
  EXPECT_TRUE(detail::validate_scale_copy(k_major, m_major));
  rejected([&] { detail::validate_scale_copy(k_major, per_token_scale_output(m_major.data, m + 1, k)); }, "shapes must match");
  rejected([&] { detail::validate_scale_copy(k_major, ScaleOutput{m_major.data, m, scale_blocks(k), 1, 4}); }, "written twice");
  rejected([&] {
    detail::validate_scale_copy(k_major, ScaleOutput{const_cast<float*>(k_major.data), m, scale_blocks(k), 1, 132});
  }, "overlaps");
}

TEST(Validation, WeightGradientArguments) {
  const int64_t m = 2112, n = 4096, k = 7168;
  const Fp8Matrix a{reinterpret_cast<void*>(0x100000000), m, k, k};
  const Fp8Matrix b{reinterpret_cast<void*>(0x200000000), n, k, k};
  const ScaleMatrix sa = per_token_scales(reinterpret_cast<const float*>(0x300000000), m, k);
  const ScaleMatrix sb = per_token_scales(reinterpret_cast<const float*>(0x400000000), n, k);
  const Fp32Matrix d{reinterpret_cast<float*>(0x500000000), m, n, n};
  const Fp32Matrix c{reinterpret_cast<float*>(0x600000000), m, n, n};
  EXPECT_TRUE(detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, d, nullptr));
  EXPECT_TRUE(detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, d, &d));  // accumulate in place
  EXPECT_TRUE(detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, d, &c));
  auto rejected = [](const std::function<void()>& f, const std::string& needle) {
    expect_invalid(f, needle, "gemm_fp8_nt_wgrad");
  };
  rejected([&] { detail::validate_gemm_fp8_nt_wgrad(a, sa, b, block_scales(sb.data, n, k), d, nullptr); }, "b_scales is");
  rejected([&] { detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, Fp32Matrix{d.data, m, n, n + 2}, nullptr); }, "d.ld");
  rejected([&] {
    detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, d, nullptr);
    const Fp32Matrix shifted{d.data + 4, m, n, n};
    detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, d, &shifted);
  }, "C overlaps D");
  const Fp32Matrix narrow{c.data, m, n - 4, n};
  rejected([&] { detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, d, &narrow); }, "C is");
  const Fp8Matrix b_odd{b.data, 4094, k, k};
  rejected([&] {
    detail::validate_gemm_fp8_nt_wgrad(a, sa, b_odd, per_token_scales(sb.data, 4094, k), Fp32Matrix{d.data, m, 4094, n},
                                       nullptr);
  }, "multiple of 4");
}

// The k-grouped weight gradient: D and C are [groups * M, N]; groups >= 1; group_k is a
// device pointer; the weight-gradient rules otherwise.
TEST(Validation, KGroupedArguments) {
  const int64_t m = 4096, n = 2048, k = 4 * 8192, groups = 4;
  const Fp8Matrix a{reinterpret_cast<void*>(0x100000000), m, k, k};
  const Fp8Matrix b{reinterpret_cast<void*>(0x200000000), n, k, k};
  const ScaleMatrix sa = per_token_scales(reinterpret_cast<const float*>(0x300000000), m, k);
  const ScaleMatrix sb = per_token_scales(reinterpret_cast<const float*>(0x400000000), n, k);
  const Fp32Matrix d{reinterpret_cast<float*>(0x500000000), groups * m, n, n};
  const Fp32Matrix c{reinterpret_cast<float*>(0x600000000), groups * m, n, n};
  const int32_t* gk = reinterpret_cast<const int32_t*>(0x700000000);
  EXPECT_TRUE(detail::validate_gemm_k_grouped(a, sa, b, sb, d, nullptr, gk, groups));
  EXPECT_TRUE(detail::validate_gemm_k_grouped(a, sa, b, sb, d, &d, gk, groups));
  EXPECT_TRUE(detail::validate_gemm_k_grouped(a, sa, b, sb, d, &c, gk, groups));
  EXPECT_FALSE(detail::validate_gemm_k_grouped(Fp8Matrix{a.data, 0, k, k}, per_token_scales(sa.data, 0, k), b, sb,
                                               Fp32Matrix{d.data, 0, n, n}, nullptr, gk, groups));  // M = 0: nothing
  auto rejected = [](const std::function<void()>& f, const std::string& needle) {
    expect_invalid(f, needle, "gemm_fp8_nt_wgrad_k_grouped");
  };
  rejected([&] { detail::validate_gemm_k_grouped(a, sa, b, sb, d, nullptr, gk, 0); }, "groups = 0");
  rejected([&] { detail::validate_gemm_k_grouped(a, sa, b, sb, d, nullptr, nullptr, groups); }, "group_k is null");
  rejected([&] { detail::validate_gemm_k_grouped(a, sa, b, sb, Fp32Matrix{d.data, m, n, n}, nullptr, gk, groups); },
           "groups * M");
  const Fp32Matrix c_small{c.data, m, n, n};
  rejected([&] { detail::validate_gemm_k_grouped(a, sa, b, sb, d, &c_small, gk, groups); }, "C is");
  rejected([&] { detail::validate_gemm_k_grouped(a, sa, b, block_scales(sb.data, n, k), d, nullptr, gk, groups); },
           "b_scales is");
  const int32_t* inside_d = reinterpret_cast<const int32_t*>(0x500000000 + 64);
  rejected([&] { detail::validate_gemm_k_grouped(a, sa, b, sb, d, nullptr, inside_d, groups); }, "group_k");
  // The public entry point checks the same before it needs a driver.
  rejected([&] { gemm_fp8_nt_wgrad_k_grouped(a, sa, b, sb, d, nullptr, gk, -1); }, "groups = -1");
}

// The grouped GEMMs check every host-visible rule in the public entry points, before they
// touch the driver: the same Error(InvalidArgument) with or without a GPU, nothing launched.
// (The fake addresses are never dereferenced; valid arguments on a machine without a driver:
// ApiWithoutGpu.GroupedGemmsValidateThenNeedADriver.)
namespace {

using fp8gemm::test::GroupedArgs;

void expect_grouped_rejected(const char* what, const std::function<void(GroupedArgs&)>& mutate, bool masked) {
  SCOPED_TRACE(what);
  GroupedArgs args;
  mutate(args);
  try {
    masked ? args.masked() : args.contiguous();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
  }
}

}  // namespace

TEST(Validation, GroupedContiguousArguments) {
  auto rejected = [](const char* what, const std::function<void(GroupedArgs&)>& mutate) {
    expect_grouped_rejected(what, mutate, false);
  };
  rejected("groups = 0", [](GroupedArgs& a) { a.groups = 0; });
  rejected("groups = -1", [](GroupedArgs& a) { a.groups = -1; });
  rejected("b.rows = (groups - 1) * N", [](GroupedArgs& a) {
    a.b.rows = (a.groups - 1) * a.n;
    a.sb.rows = (a.groups - 1) * scale_blocks(a.n);
  });
  rejected("b.rows = groups * N + 8", [](GroupedArgs& a) { a.b.rows = a.groups * a.n + 8; });
  rejected("groups does not match B", [](GroupedArgs& a) { a.groups = 2; });
  rejected("M % 128 != 0", [](GroupedArgs& a) { a.set_m(a.m - 64); });
  rejected("M = 129", [](GroupedArgs& a) { a.set_m(129); });
  rejected("null group_of_row", [](GroupedArgs& a) { a.index = nullptr; });
  // ceil(G * N / 128) scale rows instead of G * ceil(N / 128) (N = 264 is not a multiple of 128).
  rejected("b_scales not stacked per expert", [](GroupedArgs& a) { a.sb.rows = scale_blocks(a.groups * a.n); });
  rejected("d.cols != N", [](GroupedArgs& a) { a.d.cols = a.n + 8; a.d.ld = a.n + 8; });
  rejected("K % 16 != 0", [](GroupedArgs& a) { a.a.cols = a.b.cols = 520; a.sa.cols = a.sb.cols = 5; });
  rejected("null a.data", [](GroupedArgs& a) { a.a.data = nullptr; });
  rejected("D overlaps A", [](GroupedArgs& a) { a.d.data = const_cast<void*>(a.a.data); });
}

TEST(Validation, GroupedMaskedArguments) {
  auto rejected = [](const char* what, const std::function<void(GroupedArgs&)>& mutate) {
    expect_grouped_rejected(what, mutate, true);
  };
  rejected("groups = 0", [](GroupedArgs& a) { a.groups = 0; });
  rejected("groups = -2", [](GroupedArgs& a) { a.groups = -2; });
  rejected("a.rows % groups != 0", [](GroupedArgs& a) { a.set_m(a.m - 3); });
  rejected("b.rows != groups * N", [](GroupedArgs& a) { a.b.rows = (a.groups + 1) * a.n; });
  rejected("expected_m = 0", [](GroupedArgs& a) { a.expected_m = 0; });
  rejected("expected_m < 0", [](GroupedArgs& a) { a.expected_m = -1; });
  rejected("expected_m > max_m", [](GroupedArgs& a) { a.expected_m = a.m / a.groups + 1; });
  rejected("null masked_m", [](GroupedArgs& a) { a.index = nullptr; });
  rejected("d.rows != a.rows", [](GroupedArgs& a) { a.d.rows = a.m - a.groups * 8; });
  rejected("b_scales not stacked per expert", [](GroupedArgs& a) { a.sb.rows = scale_blocks(a.groups * a.n); });
  rejected("N % 8 != 0", [](GroupedArgs& a) {
    a.n = 260;
    a.b.rows = a.groups * 260;
    a.d.cols = 260;
  });
}

// The grouped forms' b_scales layout rule holds over all experts' stacked scales, not only
// expert 0's: a row stride that makes experts share scales, points backwards or interleaves
// them is rejected by name; both valid layouts of the stacked matrix pass.
TEST(Validation, GroupedScaleStridesCoverEveryExpert) {
  for (const bool masked : {false, true}) {
    SCOPED_TRACE(masked ? "masked" : "contiguous");
    const GroupedArgs g;
    const int64_t rows = g.sb.rows, cols = g.sb.cols;  // 4 x 3 block rows, 5 K blocks
    auto check = [&](const ScaleMatrix& sb) {
      return detail::validate_gemm_grouped(masked, g.a, g.sa, g.b, sb, g.d, g.index, g.groups, g.expected_m);
    };
    EXPECT_TRUE(check(ScaleMatrix{g.sb.data, rows, cols, cols, 1}));  // row-major
    EXPECT_TRUE(check(ScaleMatrix{g.sb.data, rows, cols, 1, rows}));  // column-major over all experts
    for (const auto& [row_stride, col_stride] : {std::pair<int64_t, int64_t>{-cols, 1}, {0, 1}, {-1, 1}, {1, 1},
                                                 {1, scale_blocks(g.n)}, {-1000000, 1}})
      expect_invalid([&] { check(ScaleMatrix{g.sb.data, rows, cols, row_stride, col_stride}); },
                     "over the 4 experts' stacked [12, 5] scales",
                     masked ? "gemm_fp8_nt_grouped_masked" : "gemm_fp8_nt_grouped_contiguous");
  }
}

// Sizes are bounded before the rules multiply them by the group count: a huge N or M is
// named as too large, not wrapped into a product that happens to match.
TEST(Validation, HugeSizesAreBoundedBeforeGroupProducts) {
  GroupedArgs g;
  g.d.cols = int64_t(1) << 62;
  g.b.rows = 0;
  expect_invalid([&] { g.contiguous(); }, "must be at most", "gemm_fp8_nt_grouped_contiguous");
  const int64_t m = int64_t(1) << 40, groups = int64_t(1) << 24, n = 256, k = 256;
  const Fp8Matrix a{reinterpret_cast<void*>(0x100000000), m, k, k};
  const Fp8Matrix b{reinterpret_cast<void*>(0x200000000), n, k, k};
  const ScaleMatrix sa = per_token_scales(reinterpret_cast<const float*>(0x300000000), m, k);
  const ScaleMatrix sb = per_token_scales(reinterpret_cast<const float*>(0x400000000), n, k);
  const Fp32Matrix d{reinterpret_cast<float*>(0x500000000), 0, n, n};  // groups * m wraps to 0 in 64 bits
  const int32_t* gk = reinterpret_cast<const int32_t*>(0x700000000);
  expect_invalid([&] { detail::validate_gemm_k_grouped(a, sa, b, sb, d, nullptr, gk, groups); },
                 "M, N and K must be at most", "gemm_fp8_nt_wgrad_k_grouped");
}

// Sizes and strides each within the limits can still multiply past 2^64 bytes: the extent
// of an operand is computed in 128 bits, and one that ends past the 64-bit address space is
// refused (64-bit arithmetic wrapped: such operands passed the overlap checks, or failed them
// falsely).
TEST(Validation, OperandsPastTheAddressSpaceAreRefused) {
  const int64_t big = kMaxDimension;
  const auto fake = [](uintptr_t i) { return reinterpret_cast<void*>((i + 1) << 44); };
  const char* past = "ends past the end of the 64-bit address space";
  {  // 2^21 experts of 4096 rows, rows 2^31 - 1024 bytes apart: B spans 2^64 bytes
    const int64_t g = int64_t(1) << 21, m = 128, n = 4096, k = 128;
    const Fp8Matrix a{fake(0), m, k, k}, b{fake(2), g * n, k, big};
    const ScaleMatrix sa = per_token_scales(static_cast<const float*>(fake(1)), m, k);
    ScaleMatrix sb = block_scales(static_cast<const float*>(fake(3)), n, k);
    sb.rows *= g;
    const Bf16Matrix d{fake(4), m, n, n};
    test::expect_invalid([&] { detail::validate_gemm_grouped(false, a, sa, b, sb, d, static_cast<const int32_t*>(fake(6)), g, 0); },
                         past, "gemm_fp8_nt_grouped_contiguous: B ([8589934592, 128], leading dimension");
  }
  {  // a weight gradient's D of 2^31 - 1024 rows, 2^31 - 1024 elements apart
    const Fp8Matrix a{fake(0), big, 16, 16}, b{fake(2), 4, 16, 16};
    const ScaleMatrix sa = per_token_scales(static_cast<const float*>(fake(1)), big, 16);
    const ScaleMatrix sb = per_token_scales(static_cast<const float*>(fake(3)), 4, 16);
    const Fp32Matrix d{static_cast<float*>(fake(4)), big, 4, big};
    test::expect_invalid([&] { detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, d, nullptr); }, past,
                         "gemm_fp8_nt_wgrad: D (");
  }
  {  // a k-grouped call's group_k of 8 entries 16 bytes before the end of the address space
    const int64_t m = 128, n = 256, groups = 8, k = groups * 128;
    const Fp8Matrix a{fake(0), m, k, k}, b{fake(2), n, k, k};
    const ScaleMatrix sa = per_token_scales(static_cast<const float*>(fake(1)), m, k);
    const ScaleMatrix sb = per_token_scales(static_cast<const float*>(fake(3)), n, k);
    const Fp32Matrix d{static_cast<float*>(fake(4)), groups * m, n, n};
    const auto* group_k = reinterpret_cast<const int32_t*>(~uintptr_t(15));
    test::expect_invalid([&] { detail::validate_gemm_k_grouped(a, sa, b, sb, d, nullptr, group_k, groups); }, past,
                         "gemm_fp8_nt_wgrad_k_grouped: group_k (8 int32 entries)");
  }
  {  // scales [2^31 - 1024, 1] with rows 2^31 - 1024 apart: not a false "out overlaps in"
    const ScaleMatrix in{static_cast<const float*>(fake(1)), big, 1, big, 1};
    const ScaleOutput out{static_cast<float*>(fake(3)), big, 1, 1, 1};
    test::expect_invalid([&] { detail::validate_scale_copy(in, out); }, past, "convert_scales: in (");
  }
}

// scale_blocks is defined for every int64 (quantizers size their scales with it before the
// sizes are validated): (k + 127) / 128 overflowed past INT64_MAX - 127.
static_assert(scale_blocks(INT64_MAX) == int64_t(1) << 56 && scale_blocks(INT64_MAX - 127) == (int64_t(1) << 56) - 1);
static_assert(scale_blocks(0) == 0 && scale_blocks(1) == 1 && scale_blocks(128) == 1 && scale_blocks(129) == 2 &&
              scale_blocks(-1) == 0);

TEST(Validation, QuantizersTakeAnyInt64Size) {
  const auto fake = [](uintptr_t i) { return reinterpret_cast<void*>((i + 1) << 44); };
  const Bf16Input x{fake(0), 128, INT64_MAX, 128};
  const ScaleOutput s{static_cast<float*>(fake(3)), 1, 1, 1, 1};
  test::expect_invalid([&] { quantize_per_token(x, Fp8Output{fake(2), 128, INT64_MAX, 128}, s); }, "at most");
  test::expect_invalid([&] { quantize_transposed_per_token(x, Fp8Output{fake(2), INT64_MAX, 128, 128}, s); },
                       "at most");
  test::expect_invalid([&] { quantize_per_block(x, Fp8Output{fake(2), 128, INT64_MAX, 128}, s); }, "at most");
}

// Every operation states a missing or misaligned pointer the same way: the operation, the
// pointer's name, and what it must be.
TEST(Validation, OnePointerRuleForEveryOperation) {
  const auto fake = [](uintptr_t i) { return reinterpret_cast<float*>(i << 24); };
  const ScaleMatrix in{fake(1), 4, 4, 1, 4};
  const ScaleOutput null_out{nullptr, 4, 4, 1, 4};
  const ScaleOutput odd_out{reinterpret_cast<float*>(reinterpret_cast<uintptr_t>(fake(2)) + 2), 4, 4, 1, 4};
  test::expect_invalid([&] { detail::validate_scale_copy(in, null_out); },
                       "convert_scales: out.data is null; pass a device pointer");
  test::expect_invalid([&] { detail::validate_scale_copy(in, odd_out); },
                       "is not 4-byte aligned; the kernels need aligned base addresses", "convert_scales: out.data = 0x");
}
