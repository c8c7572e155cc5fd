#pragma once

// The producer warpgroup's work besides the TMA loads of the stage ring (which the kernels
// issue in their own producer loops): the forward kernel's per-tile copy of B's scales.

#include "fp8gemm/ptx.cuh"

namespace fp8gemm_dev {

// The forward kernel's B scales of one tile, copied by one warp from global memory into a
// shared buffer: kKBlocks values from each of kScaleRows rows (the 128-column scale blocks the
// tile touches; row_k + kb * stride_k is K block kb's), stored row after row. The math
// warpgroups start a tile only once all its scales are here, so the loads go out in
// batches (up to 4 K blocks per lane in flight: the producer has few registers) rather than
// one K block per round trip to memory.
template <int kKBlocks, int kScaleRows>
__device__ __forceinline__ void copy_tile_b_scales(u32 dst, const float* row0, const float* row1, const float* row2,
                                                   long long stride_k, int lane) {
  constexpr int kPerLane = (kKBlocks + 31) / 32;
  constexpr int kBatch = kPerLane < 4 ? kPerLane : 4;
#pragma unroll 1
  for (int j0 = 0; j0 < kPerLane; j0 += kBatch) {
    float s0[kBatch], s1[kBatch], s2[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int kb = lane + 32 * (j0 + j);
      if (kb < kKBlocks) {
        s0[j] = ldg_f32(row0 + kb * stride_k);
        s1[j] = ldg_f32(row1 + kb * stride_k);
        if constexpr (kScaleRows == 3) s2[j] = ldg_f32(row2 + kb * stride_k);
      }
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int kb = lane + 32 * (j0 + j);
      if (kb < kKBlocks) {
        st_shared_f32(dst + kb * 4, s0[j]);
        st_shared_f32(dst + (kKBlocks + kb) * 4, s1[j]);
        if constexpr (kScaleRows == 3) st_shared_f32(dst + (2 * kKBlocks + kb) * 4, s2[j]);
      }
    }
  }
}

}  // namespace fp8gemm_dev
