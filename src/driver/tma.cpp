#include "driver/tma.hpp"

#include "driver/tma_cache.hpp"

#include "driver/driver_api.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {

namespace {

// A row-major map: `inner` elements per row (dims[0]), `outer` rows `stride_bytes` apart,
// boxes of box_inner x box_outer.
Tma2d row_major(CUtensorMapDataType dtype, const void* data, int64_t inner, int64_t outer, int64_t stride_bytes,
                int box_inner, int box_outer, CUtensorMapSwizzle swizzle) {
  Tma2d t;
  t.dtype = dtype;
  t.base = data;
  t.dims[0] = static_cast<uint64_t>(inner);
  t.dims[1] = static_cast<uint64_t>(outer);
  t.row_stride_bytes = static_cast<uint64_t>(stride_bytes);
  t.box[0] = static_cast<uint32_t>(box_inner);
  t.box[1] = static_cast<uint32_t>(box_outer);
  t.swizzle = swizzle;
  return t;
}

}  // namespace

Tma2d tma_fp8_operand(const void* data, int64_t rows, int64_t cols, int64_t ld, int box_rows) {
  return row_major(CU_TENSOR_MAP_DATA_TYPE_UINT8, data, cols, rows, ld, 128, box_rows, CU_TENSOR_MAP_SWIZZLE_128B);
}

Tma2d tma_per_token_scales(const float* data, int64_t m, int64_t k_blocks, int64_t col_stride, int box_m) {
  // With a single K block the stride is never used, but it must still be valid.
  const int64_t stride = k_blocks > 1 ? col_stride : (m + 3) / 4 * 4;
  return row_major(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, data, m, k_blocks, stride * 4, box_m, 1,
                   CU_TENSOR_MAP_SWIZZLE_NONE);
}

Tma2d tma_bf16_output(const void* data, int64_t rows, int64_t cols, int64_t ld) {
  return row_major(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, data, cols, rows, ld * 2, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
}

Tma2d tma_fp32_output(const void* data, int64_t rows, int64_t cols, int64_t ld) {
  return row_major(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, data, cols, rows, ld * 4, 16, 64, CU_TENSOR_MAP_SWIZZLE_64B);
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
