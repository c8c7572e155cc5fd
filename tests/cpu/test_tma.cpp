#include <gtest/gtest.h>

#include "driver/tma.hpp"

using namespace fp8gemm::detail;

TEST(Tma, Fp8OperandBoxesAndSwizzle) {
  const Tma2d t = tma_fp8_operand(reinterpret_cast<void*>(0x1000), 129, 7184, 7232, 128);
  EXPECT_EQ(t.dtype, CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(t.dims[0], 7184u);  // K innermost: columns past K read as zeros, never the padding
  EXPECT_EQ(t.dims[1], 129u);
  EXPECT_EQ(t.row_stride_bytes, 7232u);
  EXPECT_EQ(t.box[0], 128u);  // one 128-deep K block = one 128-byte swizzle row
  EXPECT_EQ(t.box[1], 128u);
  EXPECT_EQ(t.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);
}

TEST(Tma, PerTokenScales) {
  const Tma2d t = tma_per_token_scales(reinterpret_cast<const float*>(0x1000), 129, 57, 132, 64);
  EXPECT_EQ(t.dtype, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  EXPECT_EQ(t.dims[0], 129u);  // rows past M arrive as zeros, never the padding
  EXPECT_EQ(t.dims[1], 57u);
  EXPECT_EQ(t.row_stride_bytes, 132u * 4);
  EXPECT_EQ(t.box[0], 64u);
  EXPECT_EQ(t.box[1], 1u);
  EXPECT_EQ(t.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  // One K block: the stride is unused but must still be a valid multiple of 16 bytes.
  const Tma2d one = tma_per_token_scales(reinterpret_cast<const float*>(0x1000), 7, 1, 0, 64);
  EXPECT_EQ(one.row_stride_bytes % 16, 0u);
  EXPECT_GE(one.row_stride_bytes, 7u * 4);
}
