#pragma once

// D [M,N] bf16 = A [M,K] x B [N,K]^T with A scaled per token (1x128) and B per
// 128x128 block ("1D2D").
//
// Persistent and warp-specialized: one CTA per SM walks a static tile schedule. The
// last warpgroup is the producer (one thread issues every TMA load into a ring of
// kStages shared-memory stages); the first kBlockM/64 warpgroups are math
// warpgroups, each owning 64 rows of the tile. Per 128-deep K block a math warpgroup
// runs 4 wgmma k32 steps into a temporary accumulator, frees the stage, then adds
// the temporary into fp32 registers multiplied by the block's scales (promotion).

#include "fp8gemm/ptx.cuh"

namespace fp8gemm_dev {

// Tile order: stripes of kGroupN N-blocks, M-blocks walked inside a stripe, so that
// the CTAs running at the same time share B tiles (and A tiles) in L2.
template <int kNBlocks, int kGroupN>
__device__ __forceinline__ void tile_coords(int tile, int m_blocks, int& m_block, int& n_block) {
  const int per_stripe = m_blocks * kGroupN;
  const int stripe = tile / per_stripe;
  const int first = stripe * kGroupN;
  const int width = imin(kGroupN, kNBlocks - first);
  const int within = tile - stripe * per_stripe;
  m_block = within / width;
  n_block = first + within - m_block * width;
}

template <int kN, int kK, int kBlockM, int kBlockN, int kStages, int kGroupN, int kProducerRegs,
          int kMathRegs>
__global__ void __launch_bounds__((kBlockM / 64 + 1) * 128, 1)
    gemm_1d2d_kernel(const __grid_constant__ TensorMap tmap_a, const __grid_constant__ TensorMap tmap_b,
                     const __grid_constant__ TensorMap tmap_sfa, const float* __restrict__ sfb,
                     long long sfb_stride_n, long long sfb_stride_k, u16* __restrict__ d,
                     long long ldd, int m) {
  constexpr int kMathWarpgroups = kBlockM / 64;
  constexpr int kMathThreads = kMathWarpgroups * 128;
  constexpr int kKBlocks = (kK + 127) / 128;
  constexpr int kNBlocks = (kN + kBlockN - 1) / kBlockN;
  constexpr int kScaleNBlocks = (kN + 127) / 128;
  constexpr u32 kABytes = kBlockM * 128;
  constexpr u32 kBBytes = kBlockN * 128;
  constexpr u32 kSfaBytes = kBlockM * 4;
  constexpr int kAccum = kBlockN / 2;
  static_assert(kBlockM == 64 || kBlockM == 128, "one or two math warpgroups");
  static_assert(kBlockN % 16 == 0 && kBlockN <= 192, "wgmma N");

  // Shared memory: [A stages][B stages][A-scale stages][full barriers][empty barriers],
  // based at a 1024-byte boundary as the 128-byte swizzle requires.
  extern __shared__ unsigned char smem_raw[];
  const u32 smem_a = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const u32 smem_b = smem_a + kStages * kABytes;
  const u32 smem_sfa = smem_b + kStages * kBBytes;
  const u32 full_bars = smem_sfa + kStages * kSfaBytes;
  const u32 empty_bars = full_bars + kStages * 8;

  if (threadIdx.x == kMathThreads) {
    prefetch_tensor_map(&tmap_a);
    prefetch_tensor_map(&tmap_b);
    prefetch_tensor_map(&tmap_sfa);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bars + 8 * s, 1);
      mbar_init(empty_bars + 8 * s, kMathWarpgroups * 4);  // one arrival per math warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int m_blocks = (m + kBlockM - 1) / kBlockM;
  const int num_tiles = m_blocks * kNBlocks;

  if (threadIdx.x >= kMathThreads) {
    // Producer warpgroup: one thread streams A, B and A's scales for every tile.
    release_registers<kProducerRegs>();
    if (threadIdx.x == kMathThreads) {
      int stage = 0;
      u32 phase = 0;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int m_block, n_block;
        tile_coords<kNBlocks, kGroupN>(tile, m_blocks, m_block, n_block);
        for (int kb = 0; kb < kKBlocks; ++kb) {
          mbar_wait(empty_bars + 8 * stage, phase ^ 1);
          const u32 full = full_bars + 8 * stage;
          mbar_arrive_expect_tx(full, kABytes + kBBytes + kSfaBytes);
          tma_load_2d(smem_a + stage * kABytes, &tmap_a, full, kb * 128, m_block * kBlockM);
          tma_load_2d(smem_b + stage * kBBytes, &tmap_b, full, kb * 128, n_block * kBlockN);
          tma_load_2d(smem_sfa + stage * kSfaBytes, &tmap_sfa, full, m_block * kBlockM, kb);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    claim_registers<kMathRegs>();
    const int warpgroup = threadIdx.x / 128;
    const int lane = threadIdx.x % 32;
    // This thread's accumulator rows inside the tile (and row + 8), per the wgmma
    // m64 fragment layout: warp w of the warpgroup holds rows 16w .. 16w + 15.
    const int tile_row = warpgroup * 64 + (threadIdx.x / 32 % 4) * 16 + lane / 4;
    const int col_in_chunk = 2 * (lane % 4);

    float acc[kAccum];
    float part[kAccum];
#pragma unroll
    for (int i = 0; i < kAccum; ++i) part[i] = 0.0f;

    int stage = 0;
    u32 phase = 0;
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      int m_block, n_block;
      tile_coords<kNBlocks, kGroupN>(tile, m_blocks, m_block, n_block);
#pragma unroll
      for (int i = 0; i < kAccum; ++i) acc[i] = 0.0f;

      // B's scales: the tile's columns [n0, n0 + kBlockN) lie in at most two 128-column
      // scale blocks; columns from `split` on use the second.
      const int n0 = n_block * kBlockN;
      const int split = 128 - n0 % 128;
      const bool two_blocks = split < kBlockN && n0 / 128 + 1 < kScaleNBlocks;
      const float* sfb_first = sfb + static_cast<long long>(n0 / 128) * sfb_stride_n;
      const float* sfb_second = two_blocks ? sfb_first + sfb_stride_n : sfb_first;

      for (int kb = 0; kb < kKBlocks; ++kb) {
        const float sb0 = ldg_f32(sfb_first + kb * sfb_stride_k);
        const float sb1 = ldg_f32(sfb_second + kb * sfb_stride_k);
        mbar_wait(full_bars + 8 * stage, phase);

        const u32 sfa = smem_sfa + stage * kSfaBytes + tile_row * 4;
        const float sa0 = ld_shared_f32(sfa);
        const float sa1 = ld_shared_f32(sfa + 8 * 4);
        const u32 a_tile = smem_a + stage * kABytes + warpgroup * 64 * 128;
        const u32 b_tile = smem_b + stage * kBBytes;

#pragma unroll
        for (int i = 0; i < kAccum; ++i) fence_operand(part[i]);
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < 4; ++k)
          WgmmaE4M3<kBlockN>::mma(part, smem_desc_sw128(a_tile + k * 32),
                                  smem_desc_sw128(b_tile + k * 32), k);
        wgmma_commit();
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < kAccum; ++i) fence_operand(part[i]);

        // The stage is consumed: let the producer refill it while we promote.
        __syncwarp();
        if (lane == 0) mbar_arrive(empty_bars + 8 * stage);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }

        const float s00 = sa0 * sb0, s10 = sa1 * sb0, s01 = sa0 * sb1, s11 = sa1 * sb1;
#pragma unroll
        for (int i = 0; i < kBlockN / 8; ++i) {
          const bool second = 8 * i >= split;
          const float t0 = second ? s01 : s00;
          const float t1 = second ? s11 : s10;
          acc[4 * i + 0] += t0 * part[4 * i + 0];
          acc[4 * i + 1] += t0 * part[4 * i + 1];
          acc[4 * i + 2] += t1 * part[4 * i + 2];
          acc[4 * i + 3] += t1 * part[4 * i + 3];
        }
      }

      // Epilogue: bf16 pairs straight to global memory, clipped at M and N.
      const int row0 = m_block * kBlockM + tile_row;
      const int row1 = row0 + 8;
      u16* d_row0 = d + static_cast<long long>(row0) * ldd;
      u16* d_row1 = d + static_cast<long long>(row1) * ldd;
#pragma unroll
      for (int i = 0; i < kBlockN / 8; ++i) {
        const int col = n0 + 8 * i + col_in_chunk;
        if (col < kN) {
          if (row0 < m) st_global_u32(d_row0 + col, pack_bf16x2(acc[4 * i + 0], acc[4 * i + 1]));
          if (row1 < m) st_global_u32(d_row1 + col, pack_bf16x2(acc[4 * i + 2], acc[4 * i + 3]));
        }
      }
    }
  }
}

}  // namespace fp8gemm_dev
