#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "driver/tma.hpp"
#include "driver/tma_cache.hpp"

using namespace fp8gemm::detail;

namespace {

// A map's element type, sizes (innermost first), row stride, box and swizzle.
struct MapShape {
  CUtensorMapDataType dtype;
  uint64_t dims[2];
  uint64_t row_stride_bytes;
  uint32_t box[2];
  CUtensorMapSwizzle swizzle;
};

void expect_map(const Tma2d& t, const MapShape& want) {
  EXPECT_EQ(t.dtype, want.dtype);
  EXPECT_EQ(t.dims[0], want.dims[0]);
  EXPECT_EQ(t.dims[1], want.dims[1]);
  EXPECT_EQ(t.row_stride_bytes, want.row_stride_bytes);
  EXPECT_EQ(t.box[0], want.box[0]);
  EXPECT_EQ(t.box[1], want.box[1]);
  EXPECT_EQ(t.swizzle, want.swizzle);
}

}  // namespace

// K innermost: columns past K read as zeros, never the padding; one 128-deep K block = one
// 128-byte swizzle row.
TEST(Tma, Fp8OperandBoxesAndSwizzle) {
  expect_map(tma_fp8_operand(reinterpret_cast<void*>(0x1000), 129, 7184, 7232, 128),
             {CU_TENSOR_MAP_DATA_TYPE_UINT8, {7184, 129}, 7232, {128, 128}, CU_TENSOR_MAP_SWIZZLE_128B});
}

// M innermost: rows past M arrive as zeros, never the padding.
TEST(Tma, PerTokenScales) {
  expect_map(tma_per_token_scales(reinterpret_cast<const float*>(0x1000), 129, 57, 132, 64),
             {CU_TENSOR_MAP_DATA_TYPE_FLOAT32, {129, 57}, 132 * 4, {64, 1}, CU_TENSOR_MAP_SWIZZLE_NONE});
  // One K block: the stride is unused but must still be a valid multiple of 16 bytes.
  const Tma2d one = tma_per_token_scales(reinterpret_cast<const float*>(0x1000), 7, 1, 0, 64);
  EXPECT_EQ(one.row_stride_bytes % 16, 0u);
  EXPECT_GE(one.row_stride_bytes, 7u * 4);
}

// The output maps: bf16 D in 64x64 slabs with the 128-byte swizzle of the TMA-store epilogue;
// fp32 D (and C) in 16x64 boxes with the 64-byte swizzle, k-grouped with one matrix per group.
TEST(Tma, OutputMaps) {
  const Tma2d bf16 = tma_bf16_output(reinterpret_cast<void*>(0x2000), 300, 264, 272);
  expect_map(bf16, {CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, {264, 300}, 272 * 2, {64, 64}, CU_TENSOR_MAP_SWIZZLE_128B});
  EXPECT_EQ(bf16.base, reinterpret_cast<void*>(0x2000));
  EXPECT_EQ(bf16.depth, 0u);
  const Tma2d fp32 = tma_fp32_output(reinterpret_cast<void*>(0x3000), 300, 260, 264);
  expect_map(fp32, {CU_TENSOR_MAP_DATA_TYPE_FLOAT32, {260, 300}, 264 * 4, {16, 64}, CU_TENSOR_MAP_SWIZZLE_64B});
  EXPECT_EQ(fp32.depth, 0u);
  const Tma2d grouped = tma_fp32_output_grouped(reinterpret_cast<void*>(0x3000), 5, 300, 260, 264);
  expect_map(grouped, {CU_TENSOR_MAP_DATA_TYPE_FLOAT32, {260, 300}, 264 * 4, {16, 64}, CU_TENSOR_MAP_SWIZZLE_64B});
  EXPECT_EQ(grouped.depth, 5u);
  EXPECT_EQ(grouped.depth_stride_bytes, 300u * 264 * 4);
}

// The per-thread tensor-map cache: a repeated request is served without encoding; any
// change of address, size, stride, box, type or swizzle encodes again; a failed encode
// caches nothing.
TEST(TmaCache, HitsOnlyOnIdenticalRequests) {
  TmaCache cache;
  int encodes = 0;
  auto encode = [&](const Tma2d& t) {
    ++encodes;
    CUtensorMap m{};
    std::memcpy(&m, &t.dims[0], sizeof(t.dims[0]));  // something request-specific
    return m;
  };
  const Tma2d a = tma_fp8_operand(reinterpret_cast<void*>(0x10000), 4096, 7168, 7168, 128);
  const CUtensorMap first = cache.get(a, encode);
  const CUtensorMap& again = cache.get(a, encode);
  EXPECT_EQ(encodes, 1);
  EXPECT_EQ(std::memcmp(&first, &again, sizeof(CUtensorMap)), 0);
  std::vector<Tma2d> variants(7, a);
  variants[0].base = reinterpret_cast<void*>(0x20000);
  variants[1].dims[0] = 7184;
  variants[2].dims[1] = 4097;
  variants[3].row_stride_bytes = 7184;
  variants[4].box[1] = 64;
  variants[5].swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  variants[6].dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  for (const Tma2d& v : variants) {
    EXPECT_FALSE(TmaCache::same(v, a));
    const int before = encodes;
    cache.get(v, encode);
    EXPECT_EQ(encodes, before + 1);
  }
  EXPECT_EQ(cache.misses(), 8u);
  EXPECT_EQ(cache.hits(), 1u);
  // A failure leaves nothing behind: the next request encodes (and fails) again.
  Tma2d bad = a;
  bad.base = reinterpret_cast<void*>(0x30000);
  int failures = 0;
  auto failing = [&](const Tma2d&) -> CUtensorMap {
    ++failures;
    throw std::runtime_error("encode failed");
  };
  EXPECT_THROW(cache.get(bad, failing), std::runtime_error);
  EXPECT_THROW(cache.get(bad, failing), std::runtime_error);
  EXPECT_EQ(failures, 2);
}
