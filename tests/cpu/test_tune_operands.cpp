// The operands the tuner times each kind on: valid calls of the kind's public entry point
// (checked by its own validation), the grouped layouts as documented, buffer sizes that
// cover what the views address. Host only: the buffers are fake device addresses.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "families/family.hpp"
#include "tuning/tune_operands.hpp"
#include "tuning/tuner.hpp"

using namespace fp8gemm;
using namespace fp8gemm::detail;

namespace {

// Distinct, 256-byte aligned, non-overlapping fake device addresses for one copy.
TuneBuffers fake_buffers(const TuneLayout& l) {
  uintptr_t next = uintptr_t(1) << 36;
  auto take = [&](size_t bytes) {
    const uintptr_t at = next;
    next += (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
    return reinterpret_cast<void*>(at);
  };
  TuneBuffers b;
  b.a = take(l.a_bytes);
  b.sfa = take(l.sfa_bytes);
  b.b = take(l.b_bytes);
  b.sfb = take(l.sfb_bytes);
  b.d = take(l.d_bytes);
  b.group_info = static_cast<const int32_t*>(take(l.group_info.size() * 4));
  return b;
}

// The bytes a scale view addresses (its last element included).
size_t scale_bytes(const ScaleMatrix& s) {
  return size_t((s.rows - 1) * s.row_stride + (s.cols - 1) * s.col_stride + 1) * 4;
}

// The layout of a problem, checked against the views the tuner launches and the entry
// point's validation.
TuneLayout checked_layout(const GemmProblem& p) {
  SCOPED_TRACE(describe(p));
  const TuneLayout l = tune_layout(p);
  const TuneArgs args = tune_args(p, l, fake_buffers(l));
  EXPECT_TRUE(validate_tune_args(p.kind, args));
  EXPECT_EQ(l.a_bytes, size_t(args.a.rows * args.a.ld));
  EXPECT_EQ(l.b_bytes, size_t(args.b.rows * args.b.ld));
  EXPECT_GE(l.sfa_bytes, scale_bytes(args.a_scales));
  EXPECT_GE(l.sfb_bytes, scale_bytes(args.b_scales));
  EXPECT_EQ(l.d_bytes, size_t(args.d_rows * args.n) * (family(p.kind).fp32_output ? 4 : 2));
  EXPECT_EQ(args.n, p.n);
  return l;
}

}  // namespace

TEST(TuneOperands, DenseKindsAreTheProblemItself) {
  for (KernelKind kind : {KernelKind::Gemm1D2D, KernelKind::Gemm1D1D}) {
    const TuneLayout l = checked_layout(GemmProblem{kind, 4096, 7168, 2048});
    EXPECT_EQ(l.a_rows, 4096);
    EXPECT_EQ(l.b_rows, 7168);
    EXPECT_EQ(l.cols, 2048);
    EXPECT_EQ(l.d_rows, 4096);
    EXPECT_TRUE(l.group_info.empty());
  }
  checked_layout(GemmProblem{KernelKind::Gemm1D2D, 1, 576, 7168});
  checked_layout(GemmProblem{KernelKind::Gemm1D1D, 2112, 4100, 7168});
}

// Contiguous: the rows split evenly over the experts, each segment padded to 128 rows with
// -1 rows; B holds every expert's weights.
TEST(TuneOperands, ContiguousRowsSplitOverTheExperts) {
  for (auto [m, groups] : {std::pair<int64_t, int64_t>{32768, 8}, {32768, 4}, {2048, 6}, {128, 8}, {4096, 1}}) {
    const GemmProblem p{KernelKind::GroupedContiguous, m, 4096, 7168, groups};
    const TuneLayout l = checked_layout(p);
    EXPECT_EQ(l.b_rows, groups * 4096);
    EXPECT_EQ(l.a_rows % kGroupedSegmentRows, 0);
    ASSERT_EQ(int64_t(l.group_info.size()), l.a_rows);
    EXPECT_EQ(std::count_if(l.group_info.begin(), l.group_info.end(), [](int32_t g) { return g >= 0; }), m);
    for (int64_t e = 0; e < groups; ++e) {
      const auto first = std::find(l.group_info.begin(), l.group_info.end(), int32_t(e));
      const int64_t rows = std::count(l.group_info.begin(), l.group_info.end(), int32_t(e));
      EXPECT_TRUE(rows == m / groups || rows == m / groups + 1) << "expert " << e << ": " << rows;
      if (rows > 0) EXPECT_EQ((first - l.group_info.begin()) % kGroupedSegmentRows, 0) << "expert " << e;
    }
  }
}

// Masked: every expert at expected_m = ceil(M / groups) rows of a max_m of whole segments.
TEST(TuneOperands, MaskedExpertsAtTheExpectedRows) {
  for (auto [m, groups] : {std::pair<int64_t, int64_t>{32 * 20, 32}, {6 * 1024, 6}, {32 * 192, 32}, {1000, 3}, {640, 1}}) {
    const GemmProblem p{KernelKind::GroupedMasked, m, 6144, 7168, groups};
    const TuneLayout l = checked_layout(p);
    EXPECT_EQ(l.expected_m, (m + groups - 1) / groups);
    EXPECT_EQ(l.a_rows % groups, 0);
    const int64_t max_m = l.a_rows / groups;
    EXPECT_EQ(max_m % kGroupedSegmentRows, 0);
    EXPECT_GE(max_m, l.expected_m);
    EXPECT_LT(max_m, l.expected_m + kGroupedSegmentRows);
    EXPECT_EQ(l.group_info, std::vector<int32_t>(size_t(groups), int32_t(l.expected_m)));
    EXPECT_EQ(l.b_rows, groups * 6144);
  }
}

// K-grouped: M / groups rows per group, every group over K columns (group_k = K), D fp32
// [groups x rows, N].
TEST(TuneOperands, KGroupedColumnsSideBySide) {
  for (auto [rows, groups, k] : {std::tuple<int64_t, int64_t, int64_t>{4096, 4, 8192}, {7168, 16, 2048}, {576, 3, 128}}) {
    const GemmProblem p{KernelKind::KGrouped, groups * rows, 2048, k, groups};
    const TuneLayout l = checked_layout(p);
    EXPECT_EQ(l.a_rows, rows);
    EXPECT_EQ(l.b_rows, 2048);
    EXPECT_EQ(l.cols, groups * k);
    EXPECT_EQ(l.d_rows, groups * rows);
    EXPECT_EQ(l.group_info, std::vector<int32_t>(size_t(groups), int32_t(k)));
  }
}

TEST(TuneOperands, DescribeAndUnknownKinds) {
  EXPECT_EQ(describe(GemmProblem{KernelKind::GroupedMasked, 640, 4096, 2048, 32}),
            "gemm1d2d_gm M=640 N=4096 K=2048 groups=32");
  EXPECT_EQ(describe(GemmProblem{KernelKind::Gemm1D2D, 128, 7168, 2048}), "gemm1d2d M=128 N=7168 K=2048");
  const GemmProblem p{KernelKind::Gemm1D2D, 128, 256, 512};
  const TuneLayout l = tune_layout(p);
  try {
    validate_tune_args(KernelKind::Quantize1x128, tune_args(p, l, fake_buffers(l)));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal) << e.what();
  }
}
