#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "driver/tma.hpp"
#include "driver/tma_cache.hpp"

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
