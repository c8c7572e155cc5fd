#pragma once

// Weight gradient: D [M,N] fp32 = C + A [M,K] x B [N,K]^T with 1x128 scales on both A and
// B ("1D1D"). The structure of gemm_1d2d_kernel (persistent CTAs, one TMA producer
// thread, one or two 64-row math warpgroups, promotion every 128 K), with B's scales
// loaded per stage like A's (one per output column and K block), and an fp32 epilogue
// that adds C (which may be D itself: accumulate in place; or absent).

#include "fp8gemm/gemm_1d2d.cuh"

namespace fp8gemm_dev {

template <int kN, int kK, int kBlockM, int kBlockN, int kStages, int kGroupN, int kProducerRegs, int kMathRegs>
__global__ void __launch_bounds__(((kBlockM == 64 ? 1 : 2) + 1) * 128, 1)
    gemm_1d1d_kernel(const __grid_constant__ TensorMap tmap_a, const __grid_constant__ TensorMap tmap_b,
                     const __grid_constant__ TensorMap tmap_sfa, const __grid_constant__ TensorMap tmap_sfb,
                     float* d, long long ldd, const float* c, long long ldc, int m,
                     u32 stage_tx_bytes) {
  constexpr int kMathWarpgroups = kBlockM == 64 ? 1 : 2;
  constexpr int kMathThreads = kMathWarpgroups * 128;
  constexpr int kKBlocks = (kK + 127) / 128;
  constexpr int kNBlocks = (kN + kBlockN - 1) / kBlockN;
  constexpr u32 kABytes = kBlockM * 128;
  constexpr u32 kBBytes = kBlockN * 128;
  constexpr u32 kSfaBytes = kBlockM * 4;
  constexpr u32 kSfbBytes = kBlockN * 4;
  constexpr int kAccum = kBlockN / 2;
  constexpr int kChunks = kBlockN / 8;
  static_assert(kBlockM == 64 || kBlockM == 128, "one or two 64-row math warpgroups");
  static_assert(kBlockN % 16 == 0 && kBlockN <= 128, "wgmma N");

  // Shared memory: [A stages][B stages][A-scale stages][B-scale stages][full][empty],
  // based at a 1024-byte boundary as the 128-byte swizzle requires.
  extern __shared__ unsigned char smem_raw[];
  const u32 smem_a = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const u32 smem_b = smem_a + kStages * kABytes;
  const u32 smem_sfa = smem_b + kStages * kBBytes;
  const u32 smem_sfb = smem_sfa + kStages * kSfaBytes;
  const u32 full_bars = (smem_sfb + kStages * kSfbBytes + 7u) & ~7u;
  const u32 empty_bars = full_bars + kStages * 8;

  const int lane = threadIdx.x % 32;
  if (threadIdx.x == kMathThreads) {
    prefetch_tensor_map(&tmap_a);
    prefetch_tensor_map(&tmap_b);
    prefetch_tensor_map(&tmap_sfa);
    prefetch_tensor_map(&tmap_sfb);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bars + 8 * s, 1);
      mbar_init(empty_bars + 8 * s, kMathWarpgroups * 4);  // one arrival per math warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int m_blocks = (m + kBlockM - 1) / kBlockM;
  const int num_tiles = m_blocks * kNBlocks;
  auto tile_coords = [&](int tile, int& m_block, int& n_block) {
    super_tile_coords<kNBlocks, kGroupN>(tile, m_blocks, m_block, n_block);
  };

  if (threadIdx.x >= kMathThreads) {
    release_registers<kProducerRegs>();
    if (threadIdx.x == kMathThreads) {
      StageCursor<kStages> cursor;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int m_block, n_block;
        tile_coords(tile, m_block, n_block);
        for (int kb = 0; kb < kKBlocks; ++kb) {
          mbar_wait(empty_bars + 8 * cursor.stage, cursor.phase ^ 1);
          const u32 full = full_bars + 8 * cursor.stage;
          mbar_arrive_expect_tx(full, stage_tx_bytes);
          tma_load_2d(smem_a + cursor.stage * kABytes, &tmap_a, full, kb * 128, m_block * kBlockM);
          tma_load_2d(smem_b + cursor.stage * kBBytes, &tmap_b, full, kb * 128, n_block * kBlockN);
          tma_load_2d(smem_sfa + cursor.stage * kSfaBytes, &tmap_sfa, full, m_block * kBlockM, kb);
          tma_load_2d(smem_sfb + cursor.stage * kSfbBytes, &tmap_sfb, full, n_block * kBlockN, kb);
          cursor.advance();
        }
      }
    }
  } else {
    claim_registers<kMathRegs>();
    const int warpgroup = threadIdx.x / 128;
    const int tile_row = warpgroup * 64 + (threadIdx.x / 32 % 4) * 16 + lane / 4;
    const int col_in_chunk = 2 * (lane % 4);
    const u64 desc_a0 = smem_desc_sw128(smem_a + warpgroup * 64 * 128);
    const u64 desc_b0 = smem_desc_sw128(smem_b);

    float acc[kAccum], part[kAccum];
#pragma unroll
    for (int i = 0; i < kAccum; ++i) part[i] = 0.0f;
    StageCursor<kStages> cursor;
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      int m_block, n_block;
      tile_coords(tile, m_block, n_block);
#pragma unroll
      for (int i = 0; i < kAccum; ++i) acc[i] = 0.0f;
#pragma unroll 1
      for (int kb = 0; kb < kKBlocks; ++kb) {
        mbar_wait(full_bars + 8 * cursor.stage, cursor.phase);
        const int stage = cursor.stage;
        const u32 sfa = smem_sfa + stage * kSfaBytes + tile_row * 4;
        const float sa0 = ld_shared_f32(sfa), sa1 = ld_shared_f32(sfa + 8 * 4);
        const u64 desc_a = desc_a0 + ((stage * kABytes) >> 4);
        const u64 desc_b = desc_b0 + ((stage * kBBytes) >> 4);
#pragma unroll
        for (int i = 0; i < kAccum; ++i) fence_operand(part[i]);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < 4; ++k) WgmmaE4M3<kBlockN>::mma(part, desc_a + k * 2, desc_b + k * 2, k);
        wgmma_commit();
#pragma unroll
        for (int i = 0; i < kAccum; ++i) fence_operand(part[i]);
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < kAccum; ++i) fence_operand(part[i]);
        // Promotion with a scale per row (A) and per column (B) of this K block.
        const u32 sfb = smem_sfb + stage * kSfbBytes + col_in_chunk * 4;
        float last0 = 0.0f, last1 = 0.0f;
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
          const float sb0 = ld_shared_f32(sfb + 8 * i * 4), sb1 = ld_shared_f32(sfb + (8 * i + 1) * 4);
          last0 = sa0 * sb0;
          last1 = sa1 * sb1;
          acc[4 * i + 0] += last0 * part[4 * i + 0];
          acc[4 * i + 1] += (sa0 * sb1) * part[4 * i + 1];
          acc[4 * i + 2] += (sa1 * sb0) * part[4 * i + 2];
          acc[4 * i + 3] += last1 * part[4 * i + 3];
        }
        // The stage's scales have all been used (the last products are inputs of the
        // arrival): free it.
        __syncwarp();
        if (lane == 0) mbar_arrive_after(empty_bars + 8 * stage, last0, last1);
        cursor.advance();
      }
#pragma unroll
      for (int i = 0; i < kAccum; ++i) discard(part[i]);

      // Epilogue: D = C + acc in fp32, pairs of columns per store, clipped at M and N.
      tile_coords(tile, m_block, n_block);
      const int n0 = n_block * kBlockN;
      const int row0 = m_block * kBlockM + tile_row;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = row0 + 8 * half;
        if (row >= m) continue;
        float* d_row = d + static_cast<long long>(row) * ldd + n0 + col_in_chunk;
        const float* c_row = c != nullptr ? c + static_cast<long long>(row) * ldc + n0 + col_in_chunk : nullptr;
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
          if (n0 + 8 * i + col_in_chunk >= kN) continue;
          float v0 = acc[4 * i + 2 * half], v1 = acc[4 * i + 2 * half + 1];
          if (c_row != nullptr) {
            v0 += c_row[8 * i];
            v1 += c_row[8 * i + 1];
          }
          d_row[8 * i] = v0;
          d_row[8 * i + 1] = v1;
        }
      }
    }
  }
}

}  // namespace fp8gemm_dev
