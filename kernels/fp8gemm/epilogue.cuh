#pragma once

// Pieces of the GEMM kernels' epilogues: what happens to a math thread's fp32 results of a
// tile once its K loop is done. The forward kernel's (gemm_1d2d.cuh): split-K exchange,
// bf16 slabs for TMA stores; the weight gradient's (gemm_1d1d.cuh): its fp32 slabs' layout
// and the writes that add C to them. Accumulator fragments follow the wgmma m64 layout:
// element 4 i + {0, 1} is row r, columns 8 i + 2 (lane % 4) + {0, 1}, and element 4 i + {2, 3}
// row r + 8 of the same columns.

#include "fp8gemm/ptx.cuh"

namespace fp8gemm_dev {

// Split-K over a CTA pair: this CTA sends its partial sums of the partner's half of the
// columns (chunks from peer * kHalfAccum / 4 on) to the partner's exchange buffer and adds the
// partner's of its own half. Thread t exchanges with thread t (same fragment positions), the
// buffer laid out [element][thread] so that consecutive threads hit consecutive banks.
// `local` counts this CTA's tiles (the exchange barriers' phase).
template <int kWaves, int kHalfAccum, int kMathThreads>
__device__ __forceinline__ void split_k_exchange(float (&acc)[kWaves][2 * kHalfAccum], u32 rank, int local,
                                                 u32 smem_red, u32 red_full_bar, u32 red_free_bar,
                                                 u32 red_bytes) {
  const u32 peer = rank ^ 1u;
  const int own_lo = static_cast<int>(rank) * (kHalfAccum / 4);
  const int peer_lo = static_cast<int>(peer) * (kHalfAccum / 4);
  // This CTA's barrier expects the partner's partials of this tile (its previous phase
  // completed before this thread read the last tile's; bytes that land before this
  // arrival are counted all the same).
  if (threadIdx.x == 0) mbar_arrive_expect_tx(red_full_bar, red_bytes);
  // The partner has read the last tile's partials out of its buffer (its release at
  // cluster scope, acquired here at cluster scope, orders those reads before these
  // writes).
  mbar_wait_cluster_acquire(red_free_bar, (local & 1) ^ 1);
  // Asynchronous remote stores, each counted on the partner's barrier: no fence.
  const u32 remote = map_shared_to_cta(smem_red, peer) + threadIdx.x * 4;
  const u32 remote_full = map_shared_to_cta(red_full_bar, peer);
#pragma unroll
  for (int w = 0; w < kWaves; ++w)
#pragma unroll
    for (int e = 0; e < kHalfAccum; ++e)
      st_async_f32(remote + (w * kHalfAccum + e) * kMathThreads * 4,
                   peer_lo == 0 ? acc[w][e] : acc[w][kHalfAccum + e], remote_full);
  mbar_wait_cluster_acquire(red_full_bar, local & 1);
  const u32 mine = smem_red + threadIdx.x * 4;
#pragma unroll
  for (int w = 0; w < kWaves; ++w)
#pragma unroll
    for (int e = 0; e < kHalfAccum; ++e) {
      const float v = ld_shared_f32(mine + (w * kHalfAccum + e) * kMathThreads * 4);
      if (own_lo == 0)
        acc[w][e] += v;
      else
        acc[w][kHalfAccum + e] += v;
    }
}

// Contiguous grouping: the rows of a padding segment (group index outside [0, groups))
// are stored as zeros. row_group[w] holds the group of this thread's two rows of wave w.
// Only a warp with a padding row in the wave selects (most tiles have none): the selects
// sit on the epilogue's critical path, where the tensor cores idle (4 x 8192 rows,
// 4096x2048: 4.4 % of the cycles when every warp ran them; docs/PERFORMANCE.md, log 64).
template <int kWaves, int kChunks>
__device__ __forceinline__ void zero_padding_rows(float (&acc)[kWaves][4 * kChunks], const int (&row_group)[kWaves][2],
                                                  int groups) {
#pragma unroll
  for (int w = 0; w < kWaves; ++w) {
    const int g0 = row_group[w][0], g1 = row_group[w][1];
    const bool keep0 = g0 >= 0 && g0 < groups, keep1 = g1 >= 0 && g1 < groups;
    if (!__any_sync(0xffffffffu, !(keep0 && keep1))) continue;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      acc[w][4 * i + 0] = keep0 ? acc[w][4 * i + 0] : 0.0f;
      acc[w][4 * i + 1] = keep0 ? acc[w][4 * i + 1] : 0.0f;
      acc[w][4 * i + 2] = keep1 ? acc[w][4 * i + 2] : 0.0f;
      acc[w][4 * i + 3] = keep1 ? acc[w][4 * i + 3] : 0.0f;
    }
  }
}

// One wave's results as bf16 pairs straight to global memory: this thread's rows `row` and
// row + 8 of D, columns n0 + col_in_chunk (2 (lane % 4)) in steps of 8. Rows at or past
// `limit`, columns at or past kN and chunks outside [own_lo, own_hi) are not stored; a
// `full_tile` (wholly inside D, every chunk its own) skips those checks.
template <int kN, int kChunks>
__device__ __forceinline__ void store_wave_direct(const float (&acc)[4 * kChunks], u16* d, long long ldd, int row,
                                                  int limit, int n0, int col_in_chunk, bool full_tile, int own_lo,
                                                  int own_hi) {
  u16* d_row0 = d + static_cast<long long>(row) * ldd + n0 + col_in_chunk;
  u16* d_row1 = d_row0 + 8 * ldd;
  if (full_tile) {
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      st_global_u32(d_row0 + 8 * i, pack_bf16x2(acc[4 * i + 0], acc[4 * i + 1]));
      st_global_u32(d_row1 + 8 * i, pack_bf16x2(acc[4 * i + 2], acc[4 * i + 3]));
    }
  } else {
    const bool row0_ok = row < limit, row1_ok = row + 8 < limit;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      const bool col_ok = n0 + 8 * i + col_in_chunk < kN && i >= own_lo && i < own_hi;
      if (col_ok && row0_ok) st_global_u32(d_row0 + 8 * i, pack_bf16x2(acc[4 * i + 0], acc[4 * i + 1]));
      if (col_ok && row1_ok) st_global_u32(d_row1 + 8 * i, pack_bf16x2(acc[4 * i + 2], acc[4 * i + 3]));
    }
  }
}

// One 64x64 slab of a wave as bf16 into a shared buffer laid out for a TMA store with the
// 128-byte swizzle: the slab's 8 chunks of 8 columns from `slab_chunk0`, the warp's 16 rows
// from `warp_row0`. Two 16-byte chunks (16 columns) of the warp's 16 rows per stmatrix:
// matrices (rows 0-7, chunk c), (rows 8-15, c), (rows 0-7, c + 1), (rows 8-15, c + 1); lane l
// addresses row l % 8 of matrix l / 8, chunk k of row r sitting at k ^ (r % 8) (the 8 rows of
// a store land in 8 different 16-byte chunks: no bank conflicts).
template <int kChunks>
__device__ __forceinline__ void write_slab_bf16(const float (&acc)[4 * kChunks], u32 buf, int slab_chunk0, int lane,
                                                int warp_row0) {
#pragma unroll
  for (int c = 0; c < 8; c += 2) {
    const int i = slab_chunk0 + c;
    const u32 row = static_cast<u32>(warp_row0 + (lane / 8 % 2) * 8 + lane % 8);
    const u32 chunk = static_cast<u32>(c + lane / 16) ^ static_cast<u32>(lane % 8);
    stmatrix_x4(buf + row * 128 + (chunk << 4), pack_bf16x2(acc[4 * i + 0], acc[4 * i + 1]),
                pack_bf16x2(acc[4 * i + 2], acc[4 * i + 3]), pack_bf16x2(acc[4 * i + 4], acc[4 * i + 5]),
                pack_bf16x2(acc[4 * i + 6], acc[4 * i + 7]));
  }
}

__device__ __forceinline__ void ld_shared_v2_f32(u32 addr, float& x, float& y) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x), "=f"(y) : "r"(addr) : "memory");
}

__device__ __forceinline__ void st_shared_v2_f32(u32 addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

// The weight-gradient kernel's (gemm_1d1d.cuh) fp32 result leaves through slabs of 64 rows
// x 16 columns (64-byte rows; 4 KiB keeps every slab 1024-byte aligned), ceil(block_n / 16)
// per math warpgroup. A tile 8 columns past a multiple of 16 ends in a slab that starts 16
// columns before the tile's end and overlaps the one before it by a chunk: both hold that
// chunk's result (and C), and both stores write the same values there.
constexpr u32 wgrad_slab_bytes() { return 64 * 16 * 4; }
constexpr int wgrad_slabs(int block_n) { return (block_n + 15) / 16; }
// Slab j's first column in the tile.
__device__ __forceinline__ constexpr int wgrad_slab_column(int block_n, int j) {
  return block_n % 16 == 0 || j < wgrad_slabs(block_n) - 1 ? 16 * j : block_n - 16;
}
// The byte offset in a slab row of the 8 bytes that lane `lane` writes in the row's
// 8-column chunk q (0 or 1), with the 64-byte swizzle `swizzle` of its row: 16-byte chunk c
// of row r sits at chunk c ^ ((r / 2) % 4).
__device__ __forceinline__ u32 wgrad_slab_chunk(u32 q, int lane, u32 swizzle) {
  return ((2 * q + static_cast<u32>(lane % 4) / 2) ^ swizzle) << 4 | 8u * (lane % 2);
}

// Rows r and r + 8 of a weight-gradient slab (`at`, `at8`: their 8 bytes), 2 fp32 each: v,
// added to what the slab holds there (C) when `with_c`.
__device__ __forceinline__ void write_wgrad_chunk(float (&v)[4], u32 at, u32 at8, int with_c) {
  if (with_c) {
    float c0, c1, c2, c3;
    ld_shared_v2_f32(at, c0, c1);
    ld_shared_v2_f32(at8, c2, c3);
    v[0] += c0;
    v[1] += c1;
    v[2] += c2;
    v[3] += c3;
  }
  st_shared_v2_f32(at, v[0], v[1]);
  st_shared_v2_f32(at8, v[2], v[3]);
}

}  // namespace fp8gemm_dev
