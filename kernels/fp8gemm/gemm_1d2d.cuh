#pragma once

// D [M,N] bf16 = A [M,K] x B [N,K]^T with A scaled per token (1x128) and B per
// 128x128 block ("1D2D").
//
// Persistent and warp-specialized: one CTA per SM walks a static tile schedule. The
// last warpgroup is the producer: one thread issues every TMA load into a ring of
// kStages shared-memory stages, and one warp copies each tile's B scales into shared
// memory. The first kBlockM/64 warpgroups are math warpgroups, each owning 64 rows of
// the tile. Per 128-deep K block a math warpgroup runs 4 wgmma k32 steps into a
// temporary accumulator, then adds it into fp32 registers multiplied by the block's
// scales (promotion). Two temporaries alternate so that the tensor cores already run
// the next K block while the current one is promoted.

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

// acc += part x scale, per 8-column chunk of the wgmma fragment: chunks below kFirst
// take the first B scale block's products (s_first0 for row r, s_first1 for row r + 8),
// the rest the second's. kFirst is a compile-time constant, so no per-chunk selects.
template <int kFirst, int kChunks>
__device__ __forceinline__ void promote(float (&acc)[kChunks * 4], const float (&part)[kChunks * 4], float s_first0,
                                        float s_first1, float s_second0, float s_second1) {
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    const float t0 = i < kFirst ? s_first0 : s_second0;
    const float t1 = i < kFirst ? s_first1 : s_second1;
    acc[4 * i + 0] += t0 * part[4 * i + 0];
    acc[4 * i + 1] += t0 * part[4 * i + 1];
    acc[4 * i + 2] += t1 * part[4 * i + 2];
    acc[4 * i + 3] += t1 * part[4 * i + 3];
  }
}

// Picks the promote<> instance for a run-time `first` (uniform across the CTA): the
// candidates are the multiples of kStep, the chunk granularity at which a tile can
// cross a 128-column scale boundary.
template <int kChunks, int kStep, int kFirst = kStep>
__device__ __forceinline__ void promote_dispatch(int first, float (&acc)[kChunks * 4], const float (&part)[kChunks * 4],
                                                 float s_first0, float s_first1, float s_second0, float s_second1) {
  if constexpr (kFirst >= kChunks) {
    promote<kChunks, kChunks>(acc, part, s_first0, s_first1, s_second0, s_second1);
  } else {
    if (first == kFirst)
      promote<kFirst, kChunks>(acc, part, s_first0, s_first1, s_second0, s_second1);
    else
      promote_dispatch<kChunks, kStep, kFirst + kStep>(first, acc, part, s_first0, s_first1, s_second0, s_second1);
  }
}

// The position in the ring of pipeline stages; the phase flips at every wrap.
template <int kStages>
struct StageCursor {
  int stage = 0;
  u32 phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

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
  constexpr u32 kSfbBytes = 2 * kKBlocks * 4;  // one tile's B scales: two rows of ceil(K/128)
  constexpr int kAccum = kBlockN / 2;
  constexpr int kChunks = kBlockN / 8;
  static_assert(kBlockM == 64 || kBlockM == 128, "one or two math warpgroups");
  static_assert(kBlockN % 16 == 0 && kBlockN <= 128, "wgmma N; two accumulator buffers must fit");

  // Shared memory: [A stages][B stages][A-scale stages][2 tile B-scale buffers]
  // [full][empty][B-scale full][B-scale empty], based at a 1024-byte boundary as the
  // 128-byte swizzle requires.
  extern __shared__ unsigned char smem_raw[];
  const u32 smem_a = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const u32 smem_b = smem_a + kStages * kABytes;
  const u32 smem_sfa = smem_b + kStages * kBBytes;
  const u32 smem_sfb = smem_sfa + kStages * kSfaBytes;
  const u32 full_bars = (smem_sfb + 2 * kSfbBytes + 7u) & ~7u;
  const u32 empty_bars = full_bars + kStages * 8;
  const u32 sfb_full_bars = empty_bars + kStages * 8;
  const u32 sfb_empty_bars = sfb_full_bars + 2 * 8;

  const int lane = threadIdx.x % 32;
  if (threadIdx.x == kMathThreads) {
    prefetch_tensor_map(&tmap_a);
    prefetch_tensor_map(&tmap_b);
    prefetch_tensor_map(&tmap_sfa);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bars + 8 * s, 1);
      // Every math thread arrives: each one's release then orders its own reads of the
      // stage before the refill.
      mbar_init(empty_bars + 8 * s, kMathThreads);
    }
    for (int b = 0; b < 2; ++b) {
      mbar_init(sfb_full_bars + 8 * b, 32);  // every lane of the scale-loading warp
      mbar_init(sfb_empty_bars + 8 * b, kMathThreads);
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int m_blocks = (m + kBlockM - 1) / kBlockM;
  const int num_tiles = m_blocks * kNBlocks;

  if (threadIdx.x >= kMathThreads) {
    release_registers<kProducerRegs>();
    const int producer_warp = (threadIdx.x - kMathThreads) / 32;
    if (producer_warp == 0 && lane == 0) {
      // Streams A, B and A's scales for every K block of every tile.
      StageCursor<kStages> cursor;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int m_block, n_block;
        tile_coords<kNBlocks, kGroupN>(tile, m_blocks, m_block, n_block);
        for (int kb = 0; kb < kKBlocks; ++kb) {
          mbar_wait(empty_bars + 8 * cursor.stage, cursor.phase ^ 1);
          const u32 full = full_bars + 8 * cursor.stage;
          mbar_arrive_expect_tx(full, kABytes + kBBytes + kSfaBytes);
          tma_load_2d(smem_a + cursor.stage * kABytes, &tmap_a, full, kb * 128, m_block * kBlockM);
          tma_load_2d(smem_b + cursor.stage * kBBytes, &tmap_b, full, kb * 128, n_block * kBlockN);
          tma_load_2d(smem_sfa + cursor.stage * kSfaBytes, &tmap_sfa, full, m_block * kBlockM, kb);
          cursor.advance();
        }
      }
    } else if (producer_warp == 1) {
      // Copies each tile's B scales (all K blocks, both 128-column blocks the tile may
      // touch) into one of two shared buffers, a tile ahead of the math warpgroups.
      int local = 0;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, ++local) {
        int m_block, n_block;
        tile_coords<kNBlocks, kGroupN>(tile, m_blocks, m_block, n_block);
        const int buffer = local & 1;
        mbar_wait(sfb_empty_bars + 8 * buffer, ((local >> 1) & 1) ^ 1);
        const int first = n_block * kBlockN / 128;
        const int second = first + 1 < kScaleNBlocks ? first + 1 : first;
        const float* row0 = sfb + static_cast<long long>(first) * sfb_stride_n;
        const float* row1 = sfb + static_cast<long long>(second) * sfb_stride_n;
        const u32 dst = smem_sfb + buffer * kSfbBytes;
        // Not unrolled: the producer runs on 40 registers.
#pragma unroll 1
        for (int kb = lane; kb < kKBlocks; kb += 32) {
          st_shared_f32(dst + kb * 4, ldg_f32(row0 + kb * sfb_stride_k));
          st_shared_f32(dst + (kKBlocks + kb) * 4, ldg_f32(row1 + kb * sfb_stride_k));
        }
        mbar_arrive(sfb_full_bars + 8 * buffer);
      }
    }
  } else {
    claim_registers<kMathRegs>();
    const int warpgroup = threadIdx.x / 128;
    // This thread's accumulator rows inside the tile (and row + 8), per the wgmma
    // m64 fragment layout: warp w of the warpgroup holds rows 16w .. 16w + 15.
    const int tile_row = warpgroup * 64 + (threadIdx.x / 32 % 4) * 16 + lane / 4;
    const int col_in_chunk = 2 * (lane % 4);
    // A tile crosses a 128-column scale boundary only at multiples of gcd(kBlockN, 128).
    constexpr int kSplitStep = (kBlockN % 128 == 0 ? 128 : kBlockN % 64 == 0 ? 64 : kBlockN % 32 == 0 ? 32 : 16) / 8;

    // Descriptors of stage 0 (k = 0); stages and k steps only add to the start address
    // (a k32 step is 32 bytes: +2 in the descriptor).
    const u64 desc_a0 = smem_desc_sw128(smem_a + warpgroup * 64 * 128);
    const u64 desc_b0 = smem_desc_sw128(smem_b);

    // Two accumulator buffers: the tensor cores run K block kb + 1 into one while this
    // warpgroup promotes K block kb out of the other.
    float acc[kAccum], part_a[kAccum], part_b[kAccum];
#pragma unroll
    for (int i = 0; i < kAccum; ++i) part_a[i] = part_b[i] = 0.0f;

    StageCursor<kStages> cursor;
    // Waits for the next stage, reads its A scales (before the wgmma, long before the
    // stage is freed: no load may still be in flight when TMA refills its source) and
    // issues its 4 wgmma k32 steps; returns the stage.
    auto issue = [&](float(&part)[kAccum], float& sa0, float& sa1) {
      mbar_wait(full_bars + 8 * cursor.stage, cursor.phase);
      const u32 sfa = smem_sfa + cursor.stage * kSfaBytes + tile_row * 4;
      sa0 = ld_shared_f32(sfa);
      sa1 = ld_shared_f32(sfa + 8 * 4);
      const u64 desc_a = desc_a0 + ((cursor.stage * kABytes) >> 4);
      const u64 desc_b = desc_b0 + ((cursor.stage * kBBytes) >> 4);
#pragma unroll
      for (int i = 0; i < kAccum; ++i) fence_operand(part[i]);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < 4; ++k) WgmmaE4M3<kBlockN>::mma(part, desc_a + k * 2, desc_b + k * 2, k);  // +32 bytes
      wgmma_commit();
#pragma unroll
      for (int i = 0; i < kAccum; ++i) fence_operand(part[i]);
      const int stage_used = cursor.stage;
      cursor.advance();
      return stage_used;
    };
    // After its wgmma group completed: frees the stage, promotes into acc (the tile's B
    // scale buffer is not refilled before the tile ends).
    auto retire = [&](float(&part)[kAccum], int stage_used, int kb, float sa0, float sa1, u32 sfb_tile,
                      int first_chunks) {
#pragma unroll
      for (int i = 0; i < kAccum; ++i) fence_operand(part[i]);
      mbar_arrive(empty_bars + 8 * stage_used);
      const float sb0 = ld_shared_f32(sfb_tile + kb * 4);
      const float sb1 = ld_shared_f32(sfb_tile + (kKBlocks + kb) * 4);
      promote_dispatch<kChunks, kSplitStep>(first_chunks, acc, part, sa0 * sb0, sa1 * sb0, sa0 * sb1, sa1 * sb1);
    };

    int local = 0;
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x, ++local) {
      int m_block, n_block;
      tile_coords<kNBlocks, kGroupN>(tile, m_blocks, m_block, n_block);
#pragma unroll
      for (int i = 0; i < kAccum; ++i) acc[i] = 0.0f;
      // Chunks from `first_chunks` on lie in the second 128-column block of B's scales.
      const int split = 128 - n_block * kBlockN % 128;
      const int first_chunks = split < kBlockN ? split / 8 : kChunks;
      const int buffer = local & 1;
      const u32 sfb_tile = smem_sfb + buffer * kSfbBytes;
      mbar_wait(sfb_full_bars + 8 * buffer, (local >> 1) & 1);

      // K blocks go in pairs: both groups are issued back to back, then the first is
      // promoted while the tensor cores still run the second. No group is in flight
      // across the loop's back edge: ptxas cannot follow one there and would serialize
      // every wgmma (C7514).
      int kb = 0;
#pragma unroll 1
      for (; kb + 1 < kKBlocks; kb += 2) {
        float sa_a0, sa_a1, sa_b0, sa_b1;
        const int stage_a = issue(part_a, sa_a0, sa_a1);
        const int stage_b = issue(part_b, sa_b0, sa_b1);
        wgmma_wait<1>();
        retire(part_a, stage_a, kb, sa_a0, sa_a1, sfb_tile, first_chunks);
        wgmma_wait<0>();
        retire(part_b, stage_b, kb + 1, sa_b0, sa_b1, sfb_tile, first_chunks);
      }
      if constexpr (kKBlocks % 2 == 1) {
        float sa0, sa1;
        const int stage_a = issue(part_a, sa0, sa1);
        wgmma_wait<0>();
        retire(part_a, stage_a, kb, sa0, sa1, sfb_tile, first_chunks);
      }
      // The temporaries are dead until the next tile's first wgmma overwrites them;
      // saying so keeps them out of the epilogue's register budget.
#pragma unroll
      for (int i = 0; i < kAccum; ++i) {
        discard(part_a[i]);
        discard(part_b[i]);
      }
      // This thread has read the tile's B scales: the buffer may be refilled.
      mbar_arrive(sfb_empty_bars + 8 * buffer);

      // Epilogue: bf16 pairs straight to global memory, clipped at M and N (the checks
      // are skipped for tiles that lie wholly inside D). The tile's coordinates are
      // recomputed rather than kept alive across the K loop.
      tile_coords<kNBlocks, kGroupN>(tile, m_blocks, m_block, n_block);
      const int n0 = n_block * kBlockN;
      const int row0 = m_block * kBlockM + tile_row;
      u16* d_row0 = d + static_cast<long long>(row0) * ldd + n0 + col_in_chunk;
      u16* d_row1 = d_row0 + 8 * ldd;
      if ((m_block + 1) * kBlockM <= m && n0 + kBlockN <= kN) {
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
          st_global_u32(d_row0 + 8 * i, pack_bf16x2(acc[4 * i + 0], acc[4 * i + 1]));
          st_global_u32(d_row1 + 8 * i, pack_bf16x2(acc[4 * i + 2], acc[4 * i + 3]));
        }
      } else {
        const bool row0_ok = row0 < m, row1_ok = row0 + 8 < m;
#pragma unroll
        for (int i = 0; i < kChunks; ++i) {
          const bool col_ok = n0 + 8 * i + col_in_chunk < kN;
          if (col_ok && row0_ok) st_global_u32(d_row0 + 8 * i, pack_bf16x2(acc[4 * i + 0], acc[4 * i + 1]));
          if (col_ok && row1_ok) st_global_u32(d_row1 + 8 * i, pack_bf16x2(acc[4 * i + 2], acc[4 * i + 3]));
        }
      }
    }
  }
}

}  // namespace fp8gemm_dev
