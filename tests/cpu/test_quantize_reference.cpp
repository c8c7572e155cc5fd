// The reference quantizers that device quantization kernels are compared with bit for
// bit: the fast e4m3 rounding agrees with the exhaustive one, scales follow the rule,
// and the three layouts (per-token, per-block, transposed per-token) are the GEMM's.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "common/quantize_host.hpp"

using namespace fp8gemm::host;

namespace {

Bf16Host random_bf16(int64_t rows, int64_t cols, uint64_t seed, float magnitude) {
  Bf16Host x;
  x.rows = rows;
  x.cols = cols;
  x.ld = cols + 8;
  x.data.assign(size_t(rows * x.ld), float_to_bf16(0.0f));
  SplitMix64 rng(seed);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      x.data[size_t(r * x.ld + c)] = float_to_bf16(float((rng.uniform() * 2 - 1) * magnitude));
  return x;
}

}  // namespace

TEST(QuantizeReference, FastRoundingMatchesExhaustiveSearch) {
  // Every bf16 value, and every bf16 value scaled into the e4m3 range.
  for (uint32_t v = 0; v < 65536; ++v) {
    const float f = bf16_to_float(static_cast<uint16_t>(v));
    for (float s : {1.0f, 0x1.0p-20f, 0x1.0p+20f}) {
      const float x = f * s;
      ASSERT_EQ(float_to_e4m3_rn(x), float_to_e4m3(x)) << "x = " << x;
    }
  }
  // Midpoints between consecutive e4m3 magnitudes round to the even code.
  for (uint8_t c = 0; c < 0x7e; ++c) {
    const float lo = e4m3_to_float(c), hi = e4m3_to_float(c + 1);
    const float mid = (lo + hi) / 2;
    const uint8_t expected = (c & 1) == 0 ? c : uint8_t(c + 1);
    EXPECT_EQ(float_to_e4m3_rn(mid), expected) << lo << " .. " << hi;
    EXPECT_EQ(float_to_e4m3_rn(-mid), uint8_t(expected | 0x80));
  }
  EXPECT_EQ(float_to_e4m3_rn(1e30f), 0x7e);  // saturates
  EXPECT_EQ(float_to_e4m3_rn(-INFINITY), 0xfe);
  EXPECT_EQ(float_to_e4m3_rn(NAN), 0x7f);
  EXPECT_EQ(float_to_e4m3_rn(0x1.0p-10f), 0x00);  // half the smallest subnormal: ties to zero
}

TEST(QuantizeReference, GroupScaleRule) {
  GroupScale g = group_scale(448.0f, false);
  EXPECT_EQ(g.scale, 1.0f);
  EXPECT_EQ(g.inv, 1.0f);
  g = group_scale(0.0f, false);  // an all-zero group
  EXPECT_EQ(g.scale, kMinAmax / 448.0f);
  g = group_scale(300.0f, true);  // 300 / 448 = 0.67 -> 1
  EXPECT_EQ(g.scale, 1.0f);
  EXPECT_EQ(g.inv, 1.0f);
  g = group_scale(448.0f * 4, true);  // exactly a power of two stays
  EXPECT_EQ(g.scale, 4.0f);
  g = group_scale(448.0f * 4.5f, true);
  EXPECT_EQ(g.scale, 8.0f);
  EXPECT_EQ(g.inv, 0.125f);
}

TEST(QuantizeReference, PerTokenLayoutAndError) {
  const Bf16Host x = random_bf16(5, 300, 1, 10.0f);  // a partial last group of 44 columns
  for (bool pow2 : {false, true}) {
    const Fp8Operand q = quantize_per_token_ref(x, pow2);
    EXPECT_EQ(q.ld, 304);
    EXPECT_EQ(q.scale_stride, 8);
    ASSERT_EQ(q.scales.size(), size_t(3 * 8));
    for (int64_t r = 0; r < x.rows; ++r)
      for (int64_t c = 0; c < x.cols; ++c) {
        const double ref = x.at(r, c);
        EXPECT_NEAR(q.value(r, c), ref, std::fabs(ref) / 16 + q.scale(r, c) * 0x1.0p-9) << r << "," << c;
      }
    // The largest value of each group maps to (about) 448.
    if (!pow2) {
      float amax = 0;
      for (int64_t c = 256; c < 300; ++c) amax = std::max(amax, std::fabs(x.at(2, c)));
      EXPECT_EQ(q.scale(2, 299), amax / 448.0f);
    }
  }
}

TEST(QuantizeReference, ZeroRowsAndHugeValues) {
  Bf16Host x = random_bf16(3, 128, 2, 1.0f);
  for (int64_t c = 0; c < 128; ++c) x.data[size_t(1 * x.ld + c)] = float_to_bf16(0.0f);
  x.data[size_t(2 * x.ld + 7)] = float_to_bf16(3.0e38f);
  const Fp8Operand q = quantize_per_token_ref(x, false);
  for (int64_t c = 0; c < 128; ++c) EXPECT_EQ(q.data[size_t(1 * q.ld + c)], 0);
  EXPECT_EQ(q.scale(1, 0), kMinAmax / 448.0f);
  EXPECT_EQ(q.data[size_t(2 * q.ld + 7)], 0x7e);  // the group's maximum: 448
  EXPECT_TRUE(std::isfinite(q.scale(2, 0)));
}

TEST(QuantizeReference, PerBlockAndTransposedLayouts) {
  const Bf16Host x = random_bf16(200, 260, 3, 5.0f);
  const Fp8Operand b = quantize_per_block_ref(x, false);
  EXPECT_FALSE(b.per_token);
  ASSERT_EQ(b.scales.size(), size_t(2 * 3));
  float amax = 0;
  for (int64_t r = 128; r < 200; ++r)
    for (int64_t c = 256; c < 260; ++c) amax = std::max(amax, std::fabs(x.at(r, c)));
  EXPECT_EQ(b.scale(150, 258), amax / 448.0f);
  const Fp8Operand t = quantize_transposed_per_token_ref(x, true);
  EXPECT_EQ(t.rows, 260);
  EXPECT_EQ(t.cols, 200);
  for (int64_t h = 0; h < 260; h += 37)
    for (int64_t tok = 0; tok < 200; tok += 13) {
      const double ref = x.at(tok, h);
      EXPECT_NEAR(t.value(h, tok), ref, std::fabs(ref) / 16 + t.scale(h, tok) * 0x1.0p-9);
    }
}
