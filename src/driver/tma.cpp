#include "driver/tma.hpp"

#include "driver/tma_cache.hpp"

#include "driver/driver_api.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {

Tma2d tma_fp8_operand(const void* data, int64_t rows, int64_t cols, int64_t ld, int box_rows) {
  Tma2d t;
  t.dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  t.base = data;
  t.dims[0] = static_cast<uint64_t>(cols);
  t.dims[1] = static_cast<uint64_t>(rows);
  t.row_stride_bytes = static_cast<uint64_t>(ld);
  t.box[0] = 128;
  t.box[1] = static_cast<uint32_t>(box_rows);
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  return t;
}

Tma2d tma_per_token_scales(const float* data, int64_t m, int64_t k_blocks, int64_t col_stride, int box_m) {
  Tma2d t;
  t.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  t.base = data;
  t.dims[0] = static_cast<uint64_t>(m);
  t.dims[1] = static_cast<uint64_t>(k_blocks);
  // With a single K block the stride is never used, but it must still be valid.
  const int64_t stride = k_blocks > 1 ? col_stride : (m + 3) / 4 * 4;
  t.row_stride_bytes = static_cast<uint64_t>(stride) * 4;
  t.box[0] = static_cast<uint32_t>(box_m);
  t.box[1] = 1;
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  return t;
}

Tma2d tma_bf16_output(const void* data, int64_t rows, int64_t cols, int64_t ld) {
  Tma2d t;
  t.dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  t.base = data;
  t.dims[0] = static_cast<uint64_t>(cols);
  t.dims[1] = static_cast<uint64_t>(rows);
  t.row_stride_bytes = static_cast<uint64_t>(ld) * 2;
  t.box[0] = 64;
  t.box[1] = 64;
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  return t;
}

Tma2d tma_fp32_output(const void* data, int64_t rows, int64_t cols, int64_t ld) {
  Tma2d t;
  t.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  t.base = data;
  t.dims[0] = static_cast<uint64_t>(cols);
  t.dims[1] = static_cast<uint64_t>(rows);
  t.row_stride_bytes = static_cast<uint64_t>(ld) * 4;
  t.box[0] = 16;
  t.box[1] = 64;
  t.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
  return t;
}

Tma2d tma_fp32_output_grouped(const void* data, int64_t groups, int64_t rows, int64_t cols, int64_t ld) {
  Tma2d t = tma_fp32_output(data, rows, cols, ld);
  t.depth = static_cast<uint64_t>(groups);
  t.depth_stride_bytes = static_cast<uint64_t>(rows) * static_cast<uint64_t>(ld) * 4;
  return t;
}

CUtensorMap encode_tma(const Tma2d& t) {
  CUtensorMap map;
  const cuuint32_t rank = t.depth > 0 ? 3 : 2;
  const cuuint64_t dims[3] = {t.dims[0], t.dims[1], t.depth};
  const cuuint64_t strides[2] = {t.row_stride_bytes, t.depth_stride_bytes};
  const cuuint32_t box[3] = {t.box[0], t.box[1], 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r = driver().cuTensorMapEncodeTiled(
      &map, t.dtype, rank, const_cast<void*>(t.base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, t.swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    check_cu(r, fmt::format("cuTensorMapEncodeTiled(dims {}x{}, stride {} B, box {}x{})", t.dims[0],
                            t.dims[1], t.row_stride_bytes, t.box[0], t.box[1])
                    .c_str());
  return map;
}

const CUtensorMap& encode_tma_cached(const Tma2d& t) {
  thread_local TmaCache cache;
  return cache.get(t, [](const Tma2d& r) { return encode_tma(r); });
}

}  // namespace fp8gemm::detail
