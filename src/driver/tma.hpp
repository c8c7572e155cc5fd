#pragma once

#include <cuda.h>

#include <cstdint>

namespace fp8gemm::detail {

// A 2D tensor-map request in plain numbers (testable without a GPU); encode_tma()
// turns it into the driver's CUtensorMap.
struct Tma2d {
  CUtensorMapDataType dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  const void* base = nullptr;
  uint64_t dims[2] = {0, 0};      // innermost first
  uint64_t row_stride_bytes = 0;  // between consecutive indices of dims[1]
  uint32_t box[2] = {0, 0};
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  // A third, outermost dimension of `depth` matrices (boxes one deep), 0 for none.
  uint64_t depth = 0;
  uint64_t depth_stride_bytes = 0;
};

// A K-major e4m3 operand [rows, cols] with leading dimension `ld`, loaded in boxes of
// 128 (K) x box_rows with the 128-byte swizzle the wgmma descriptors expect.
Tma2d tma_fp8_operand(const void* data, int64_t rows, int64_t cols, int64_t ld, int box_rows);

// Per-token scales [m, k_blocks], M-major with column stride `col_stride` floats, loaded
// one K block at a time in boxes of box_m rows.
Tma2d tma_per_token_scales(const float* data, int64_t m, int64_t k_blocks, int64_t col_stride, int box_m);

// The bf16 output D [rows, cols] with leading dimension `ld` (elements), stored in
// boxes of 64 columns x 64 rows from 128-byte-swizzled shared tiles.
Tma2d tma_bf16_output(const void* data, int64_t rows, int64_t cols, int64_t ld);

// The fp32 output D [rows, cols] of the weight gradient, stored (or reduce-added) in
// boxes of 16 columns x 64 rows from 64-byte-swizzled shared slabs.
Tma2d tma_fp32_output(const void* data, int64_t rows, int64_t cols, int64_t ld);

// The same for `groups` matrices of [rows, cols] stacked (matrix g starts at row g *
// rows): a 3D map, so that a box at one matrix's last rows is clipped there.
Tma2d tma_fp32_output_grouped(const void* data, int64_t groups, int64_t rows, int64_t cols, int64_t ld);

// Throws Error(CudaError) if the driver rejects the request.
CUtensorMap encode_tma(const Tma2d& t);

}  // namespace fp8gemm::detail
