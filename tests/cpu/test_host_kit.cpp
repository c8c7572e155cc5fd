#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include "common/fp8_host.hpp"
#include "common/reference.hpp"
#include "common/shape_file.hpp"
#include "support/temp_dir.hpp"

using namespace fp8gemm::host;

TEST(HostKit, E4m3Decode) {
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0xb8), -1.0f);
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_to_float(0x00), 0.0f);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xff)));
}

TEST(HostKit, E4m3EncodeRoundTripsEveryFiniteCode) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;
    const float v = e4m3_to_float(uint8_t(c));
    if (v == 0.0f) continue;
    EXPECT_EQ(float_to_e4m3(v), c) << c;
  }
  EXPECT_EQ(float_to_e4m3(1000.0f), 0x7e);  // saturates
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);  // tie -> even mantissa (1.0)
}

TEST(HostKit, Bf16Rounding) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_float(kBf16Poison)));
}

TEST(HostKit, RandomOperandsAreValidAndPadded) {
  const Fp8Operand a = random_operand(5, 200, 224, true, 7);
  EXPECT_EQ(a.scale_stride, 8);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 224; ++c) {
      const bool nan = std::isnan(e4m3_to_float(a.data[r * 224 + c]));
      EXPECT_EQ(nan, c >= 200) << r << "," << c;  // padding is NaN, data never
    }
  EXPECT_TRUE(std::isnan(a.scales[5]));  // scale padding rows
  EXPECT_FALSE(std::isnan(a.scales[4]));
  const Fp8Operand again = random_operand(5, 200, 224, true, 7);
  EXPECT_EQ(a.data, again.data);
}

TEST(HostKit, ReferenceMatchesNaiveSum) {
  const Fp8Operand a = random_operand(3, 272, 272, true, 1);
  const Fp8Operand b = random_operand(136, 272, 288, false, 2);
  const std::vector<int64_t> rows = {0, 2};
  const std::vector<double> ref = reference_rows(a, b, rows, 2);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t j = 0; j < 136; ++j) {
      double s = 0;
      for (int64_t c = 0; c < 272; ++c)
        s += double(e4m3_to_float(a.data[rows[i] * 272 + c])) * a.scales[(c / 128) * 4 + rows[i]] *
             double(e4m3_to_float(b.data[j * 288 + c])) * b.scales[(j / 128) * 3 + c / 128];
      EXPECT_NEAR(ref[i * 136 + j], s, 1e-9 * (1 + std::fabs(s)));
    }
}

TEST(HostKit, ShapeFileFormats) {
  const ShapeFile f = read_shape_file(std::string(FP8GEMM_SHAPES_DIR) + "/deepseek-v3.json");
  EXPECT_EQ(f.dense.size(), 28u);  // 4 M values x 7 (N, K)
  EXPECT_EQ(f.dense.front().n, 2112);
  EXPECT_FALSE(f.skipped.empty());
  ASSERT_EQ(f.wgrad.size(), 5u);  // the weight-gradient shapes
  EXPECT_EQ(f.wgrad.front().kind, fp8gemm::GemmKind::WeightGradient);
  EXPECT_EQ(f.dense.front().kind, fp8gemm::GemmKind::Forward);
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/s.json";
  std::ofstream(path) << R"({"dense": {"mnk": [[1, 8, 16], [3, 16, 32]]}})";
  EXPECT_EQ(read_shape_file(path).dense.size(), 2u);
  std::ofstream(path) << "{ nope";
  EXPECT_THROW(read_shape_file(path), std::runtime_error);
  std::ofstream(path) << R"({"wgrad": {}})";
  EXPECT_THROW(read_shape_file(path), std::runtime_error);
  EXPECT_THROW(read_shape_file(dir.path() + "/missing.json"), std::runtime_error);
}
