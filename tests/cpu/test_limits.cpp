// The size limits of README "Limits": every shape inside them plans a kernel, every shape
// outside them gets InvalidArgument naming the limit, on the call path and wherever a shape
// is planned without a call (prewarm, tune, kernel_name). No input reaches Internal.

#include <gtest/gtest.h>

#include <functional>

#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/fp8gemm.hpp"
#include "heuristics/heuristics.hpp"
#include "problem/problem.hpp"
#include "problem/validate.hpp"
#include "support/expect_invalid.hpp"

using namespace fp8gemm;

namespace {

using fp8gemm::test::expect_invalid;

// Fake, aligned, far-apart device addresses (validation never dereferences).
void* at(int i) { return reinterpret_cast<void*>(uintptr_t(i) << 44); }

bool dense(int64_t m, int64_t n, int64_t k, int64_t lda = 0) {
  const Fp8Matrix a{at(1), m, k, lda ? lda : k}, b{at(2), n, k, k};
  const Bf16Matrix d{at(3), m, n, n};
  return detail::validate_gemm_fp8_nt(a, per_token_scales(static_cast<const float*>(at(4)), m, k), b,
                                      block_scales(static_cast<const float*>(at(5)), n, k), d);
}

}  // namespace

// Inside the limits the heuristic always finds a legal config, for every kind, at the
// extremes of K and N (so its "no legal config" check is unreachable from valid input).
TEST(Limits, EveryShapeInsideTheLimitsHasAConfig) {
  using detail::KernelKind;
  const int64_t n_max = kMaxDimension / 8 * 8;
  for (KernelKind kind : {KernelKind::Gemm1D2D, KernelKind::GroupedContiguous, KernelKind::GroupedMasked,
                          KernelKind::Gemm1D1D, KernelKind::KGrouped}) {
    const bool wgrad = kind == KernelKind::Gemm1D1D || kind == KernelKind::KGrouped;
    const int64_t k_max = wgrad ? kMaxDimension / 16 * 16 : kMaxK1D2D;
    for (int64_t m : {int64_t(1), int64_t(129), int64_t(4096), int64_t(1) << 24})
      for (int64_t n : {int64_t(8), int64_t(4096), n_max})
        for (int64_t k : {int64_t(16), int64_t(7168), k_max})
          for (int64_t groups : {int64_t(1), int64_t(2), int64_t(32)}) {
            if (groups > 1 && kind != KernelKind::GroupedMasked) continue;
            SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << " m " << m << " n " << n << " k "
                                            << k << " groups " << groups);
            const int64_t rows = kind == KernelKind::GroupedMasked ? m * groups : m;
            EXPECT_NO_THROW(EXPECT_FALSE(detail::rank_configs({kind, rows, n, k, groups}, detail::DeviceTraits{}).empty()));
          }
  }
}

TEST(Limits, CallsOutsideTheLimitsAreInvalidArguments) {
  EXPECT_TRUE(dense(4096, 7168, kMaxK1D2D));
  expect_invalid([] { dense(4096, 7168, 1682960); }, "1048576");  // once an Internal "no legal config"
  expect_invalid([] { dense(4096, 2147483640, 4096); }, "at most");
  expect_invalid([] { dense(4096, 7168, 4096, kMaxDimension + 16 * 64); }, "a.ld");
  // More output tiles than 32-bit tile indices hold.
  expect_invalid([] { dense(kMaxDimension, kMaxDimension / 8 * 8, 4096); }, "output tiles");
  // Masked: every expert starts a new row of tiles.
  const int64_t groups = 1 << 20, max_m = 64, n = 65536, k = 128;
  const Fp8Matrix a{at(1), groups * max_m, k, k}, b{at(2), groups * n, k, k};
  const Bf16Matrix d{at(3), groups * max_m, n, n};
  const ScaleMatrix sa = per_token_scales(static_cast<const float*>(at(4)), groups * max_m, k);
  const ScaleMatrix sb{static_cast<const float*>(at(5)), groups * (n / 128), 1, 1, 1};
  expect_invalid([&] { detail::validate_gemm_grouped(true, a, sa, b, sb, d, static_cast<const int32_t*>(at(6)), groups, 1); },
                 "output tiles");
  // Weight gradient: leading dimensions and scale strides.
  const Fp8Matrix wa{at(1), 4096, 4096, 4096}, wb{at(2), 4096, 4096, 4096};
  const Fp32Matrix wd{static_cast<float*>(at(3)), 4096, 4096, kMaxDimension + 1020};
  expect_invalid([&] {
    detail::validate_gemm_fp8_nt_wgrad(wa, per_token_scales(static_cast<const float*>(at(4)), 4096, 4096), wb,
                                       per_token_scales(static_cast<const float*>(at(5)), 4096, 4096), wd, nullptr);
  }, "d.ld");
}

TEST(Limits, ShapesOutsideTheLimitsAreInvalidArgumentsEverywhere) {
  const std::vector<std::pair<GemmShape, std::string>> bad = {
      {GemmShape{4096, 7168, 1682960}, "1048576"},
      {GemmShape{4096, 2147483640, 4096}, "at most"},
      {GemmShape{4096, 7168, 1682960, GemmKind::GroupedContiguous, 4}, "1048576"},
      {GemmShape{kMaxDimension, kMaxDimension / 8 * 8, 4096}, "output tiles"},
      {GemmShape{int64_t(1) << 40, 4096, 4096, GemmKind::WeightGradient}, "at most"},
      {GemmShape{4096, 4096, 4096, GemmKind::GroupedMasked, int64_t(1) << 40}, "groups"},
  };
  for (const auto& [shape, needle] : bad) {
    SCOPED_TRACE(testing::Message() << shape.m << " x " << shape.n << " x " << shape.k);
    expect_invalid([&] { prewarm({shape}); }, needle);
    expect_invalid([&] { tune({shape}); }, needle);
    expect_invalid([&] { kernel_name(shape); }, needle);
  }
  // The K limit of the 128x128-scaled kernels does not apply to weight gradients.
  EXPECT_NO_THROW(detail::rank_configs({detail::KernelKind::Gemm1D1D, 4096, 4096, 1682960}, detail::DeviceTraits{}));
}

// The layout helpers of the public headers (C++, C and the device header) are defined for
// every int64 a caller may pass, so that a huge size reaches validation as an
// InvalidArgument rather than as overflowed arithmetic in the caller's own code. (A
// static_assert is evaluated without overflow or it does not compile.)
TEST(Limits, LayoutHelpersDoNotOverflow) {
  constexpr int64_t kMax = INT64_MAX, kMin = INT64_MIN;
  static_assert(scale_blocks(kMax) == kMax / 128 + 1 && scale_blocks(kMin) == kMin / 128 + 1);
  static_assert(per_token_scale_stride(kMax) == kMax && per_token_scale_stride(kMax - 3) == kMax - 3);
  static_assert(per_token_scale_stride(kMax - 4) == kMax - 3 && per_token_scale_stride(kMin) == kMin + 4);
  static_assert(k_grouped_columns(kMax) == kMax && k_grouped_columns(kMax - 127) == kMax - 127);
  static_assert(k_grouped_columns(kMax - 128) == kMax - 127 && k_grouped_columns(kMin) == 0);
  static_assert(per_token_scales(nullptr, kMax, kMax).col_stride == kMax);
  static_assert(per_token_scale_output(nullptr, kMax, kMax).cols == kMax / 128 + 1);
  for (int64_t v : {int64_t(0), int64_t(1), int64_t(5), int64_t(129), kMaxDimension, kMax - 200, kMax - 3, kMax,
                    int64_t(-1), int64_t(-129), kMin}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(fp8gemm_scale_blocks(v), scale_blocks(v));
    EXPECT_EQ(fp8gemm_per_token_scale_stride(v), per_token_scale_stride(v));
    EXPECT_EQ(fp8gemm_k_grouped_columns(v), k_grouped_columns(v));
  }
  // A caller's huge size then gets the limit's message.
  expect_invalid([] { dense(kMax, 4096, 4096); }, "at most");
  expect_invalid([] { dense(4096, 4096, kMax - 15); }, "at most");
}
