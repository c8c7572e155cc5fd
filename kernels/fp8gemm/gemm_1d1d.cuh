#pragma once

// Weight gradient: D [M,N] fp32 = C + A [M,K] x B [N,K]^T with 1x128 scales on both A and
// B ("1D1D"). The structure of gemm_1d2d_kernel (persistent CTAs, one TMA producer
// thread, one to three 64-row math warpgroups, promotion every 128 K), with B's scales
// loaded per stage like A's (one per output column and K block).
//
// Main loop: K blocks in pairs with two wgmma buffers, the first promoted while the
// tensor cores still run the second (the other math warpgroup's wgmma fills the rest), and
// the second block's scales read then too (docs/PERFORMANCE.md log 87: +2.6 %).
// Tiles wider than 128 columns, and 192-row tiles (three math warpgroups, 152 registers
// each), have registers for one buffer: one K block at a time, the other warpgroups'
// wgmma filling the tensor cores while one promotes; where the registers also hold the K
// block's scales, they are read while its wgmma runs rather than after it (192x96: 1.6 %,
// docs/PERFORMANCE.md log 81).
// (Making the two warpgroups take turns on the tensor cores, each issuing only after
// the other issued, measured 15-20 % slower: docs/PERFORMANCE.md.)
//
// Epilogue: each math warpgroup writes its 64 x block_n fp32 result into swizzled
// 64-row x 16-column slabs in shared memory. A storer thread per math warpgroup (in the
// producer's warpgroup) hands them to TMA stores and, once those have read the slabs,
// refills them with the next tile's C by TMA load, which arrives during that tile's K
// loop; the epilogue adds the result to it in place. The math threads never wait for
// the stores: they only wait for the slabs to be ready (holding C, or free without C).
// C is loaded in quarters paced by the producer (three "pace" barriers): a quarter of each
// warpgroup's slabs when the slabs are free, the others once the producer has reached a
// quarter, half and three quarters of the tile's K blocks. Loaded at once, every CTA asked
// HBM for its 64 KB of C at the start of each tile, and the first stages' operands came
// late (docs/PERFORMANCE.md, log entries 73 and 75). Only tiles of 4 x kStages K blocks or
// more are paced: the producer then reaches each point only after the math warpgroups
// consumed a K block of that tile, so after every storer waited for the same point of the
// tile before (one phase apart, as a parity wait needs).
//
// k-grouped (kKGrouped): D [groups, M, N] with D[g] = C[g] + A_g x B_g^T, where A_g and
// B_g are the columns of group g in A [M, K] and B [N, K]. Group g's columns start at
// the 128-column block after the previous group's (each group padded to whole blocks,
// the padding zero in memory) and span group_k[g] columns (on the device); its scales
// are the same blocks of the scale tensors. Tiles run group after group; each role walks
// the groups in the same order (WgradTiles, schedule.cuh), so all agree on every tile's K
// range.

#include "fp8gemm/gemm_1d2d.cuh"

namespace fp8gemm_dev {

// Config: the kernel's configuration, a struct the code generator writes for each kernel
// (named after it) with these constants: kN, kK, kBlockM, kBlockN, kStages, kGroupN,
// kKGrouped, kProducerRegs, kMathRegs, and the dynamic shared memory the host launches it
// with, kSmemBytes (checked below).
template <class Config>
__global__ void __launch_bounds__((Config::kBlockM / 64 + 1) * 128, 1)
    gemm_1d1d_kernel(const __grid_constant__ TensorMap tmap_a, const __grid_constant__ TensorMap tmap_b,
                     const __grid_constant__ TensorMap tmap_sfa, const __grid_constant__ TensorMap tmap_sfb,
                     const __grid_constant__ TensorMap tmap_d, const __grid_constant__ TensorMap tmap_c, int m,
                     u32 stage_tx_bytes, int with_c, const int* group_k, int groups, int total_k_blocks,
                     int skip_empty) {
  constexpr int kN = Config::kN, kK = Config::kK, kBlockM = Config::kBlockM, kBlockN = Config::kBlockN;
  constexpr int kStages = Config::kStages, kGroupN = Config::kGroupN, kKGrouped = Config::kKGrouped;
  constexpr int kProducerRegs = Config::kProducerRegs, kMathRegs = Config::kMathRegs;
  constexpr int kMathWarpgroups = kBlockM / 64;
  constexpr int kMathThreads = kMathWarpgroups * 128;
  constexpr int kKBlocks = (kK + 127) / 128;
  constexpr int kNBlocks = (kN + kBlockN - 1) / kBlockN;
  constexpr u32 kABytes = kBlockM * 128;
  constexpr u32 kBBytes = kBlockN * 128;
  constexpr u32 kSfaBytes = kBlockM * 4;
  // TMA writes shared memory at 128-byte aligned addresses: B's scale slots are
  // padded to 128 bytes (block_n = 16, 48, 80, 112 would leave odd stages misaligned).
  constexpr u32 kSfbBytes = (kBlockN * 4 + 127) / 128 * 128;
  constexpr int kAccum = kBlockN / 2;
  constexpr int kChunks = kBlockN / 8;
  // The D slabs of a math warpgroup (epilogue.cuh).
  constexpr int kSlabs = wgrad_slabs(kBlockN);
  constexpr u32 kSlabBytes = wgrad_slab_bytes();
  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 192, "one to three 64-row math warpgroups");
  static_assert(kBlockN % 8 == 0 && kBlockN >= 16 && kBlockN <= 192, "wgmma N, at least one slab");
  // Two wgmma buffers up to 128 columns with one or two math warpgroups; wider tiles and
  // three warpgroups have the registers for one only (the other math warpgroups' wgmma
  // then fills the tensor cores while this one promotes).
  constexpr int kBuffers = kBlockN <= 128 && kMathWarpgroups <= 2 ? 2 : 1;

  // The bytes this layout takes after the base's 1024-byte alignment: what the host sizes
  // the launch's dynamic shared memory with (kernel_layout), 1024 bytes of slack more.
  constexpr u32 kLayoutBytes = kMathWarpgroups * kSlabs * kSlabBytes +
                               (kStages * (kABytes + kBBytes + kSfaBytes + kSfbBytes) + 7u) / 8u * 8u +
                               kStages * 16 + kMathWarpgroups * 16 + 3 * 8;
  static_assert(kLayoutBytes + 1024 == Config::kSmemBytes,
                "the host's shared-memory layout (kernel_layout in src/problem) is not the kernel's");

  // Shared memory: [D slabs per warpgroup][A stages][B stages][A-scale stages]
  // [B-scale stages][full][empty][slabs ready, result written: per warpgroup][3 pace],
  // based at a 1024-byte boundary as the swizzles need.
  extern __shared__ unsigned char smem_raw[];
  const u32 smem_d = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const u32 smem_a = smem_d + kMathWarpgroups * kSlabs * kSlabBytes;
  const u32 smem_b = smem_a + kStages * kABytes;
  const u32 smem_sfa = smem_b + kStages * kBBytes;
  const u32 smem_sfb = smem_sfa + kStages * kSfaBytes;
  const u32 full_bars = (smem_sfb + kStages * kSfbBytes + 7u) & ~7u;
  const u32 empty_bars = full_bars + kStages * 8;
  const u32 slab_bars = empty_bars + kStages * 8;  // + 16 w: ready; + 16 w + 8: written
  const u32 pace_bars = slab_bars + kMathWarpgroups * 16;  // + 8 p: K block (p + 1) / 4 of the tile

  const int lane = threadIdx.x % 32;
  if (threadIdx.x == kMathThreads) {
    prefetch_tensor_map(&tmap_a);
    prefetch_tensor_map(&tmap_b);
    prefetch_tensor_map(&tmap_sfa);
    prefetch_tensor_map(&tmap_sfb);
    prefetch_tensor_map(&tmap_d);
    if (with_c) prefetch_tensor_map(&tmap_c);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bars + 8 * s, 1);
      mbar_init(empty_bars + 8 * s, kMathWarpgroups * 4);  // one arrival per math warp
    }
    for (int w = 0; w < kMathWarpgroups; ++w) {
      mbar_init(slab_bars + 16 * w, 1);        // the storer (with C: plus the load's bytes)
      mbar_init(slab_bars + 16 * w + 8, 128);  // every thread of the math warpgroup
    }
    for (int p = 0; p < 3; ++p) mbar_init(pace_bars + 8 * p, 1);  // the producer
    fence_barrier_init();
  }
  __syncthreads();
  // First global access (operands, scales, group_k, C, D) below this line.
  grid_dependency_wait();

  // Dense: every tile takes all kKBlocks K blocks. k-grouped: the walk gives the group
  // and its K blocks; a tile of an empty group is skipped when D already holds C.
  WgradTiles<kNBlocks, kGroupN, kKBlocks, kKGrouped != 0> tiles((m + kBlockM - 1) / kBlockM, groups, group_k,
                                                                total_k_blocks);
  const int num_tiles = tiles.count;
  auto skip_now = [&]() { return kKGrouped && skip_empty && tiles.k_blocks() == 0; };
  // Whether the current tile's C loads are paced (see the top of this file).
  auto paced_now = [&]() { return with_c && tiles.k_blocks() >= 4 * kStages; };

  if (threadIdx.x >= kMathThreads) {
    release_registers<kProducerRegs>();
    if (threadIdx.x == kMathThreads) {
      StageCursor<kStages> cursor;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int m_block, n_block;
        tiles.at(tile, m_block, n_block);
        const int k_blocks = tiles.k_blocks(), k_first = tiles.k_first();
        // The next pace point: K block `point` (-1: none), on pace barrier `pace`.
        const int quarter = k_blocks / 4;
        int point = paced_now() ? quarter : -1;
        u32 pace = pace_bars;
        for (int i = 0; i < k_blocks; ++i) {
          const int kb = k_first + i;
          mbar_wait(empty_bars + 8 * cursor.stage, cursor.phase ^ 1);
          if (i == point) {  // K block i's stage is free: block i - kStages of this tile was consumed
            mbar_arrive(pace);
            pace += 8;
            point = pace < pace_bars + 3 * 8 ? point + quarter : -1;
          }
          const u32 full = full_bars + 8 * cursor.stage;
          mbar_arrive_expect_tx(full, stage_tx_bytes);
          tma_load_2d(smem_a + cursor.stage * kABytes, &tmap_a, full, kb * 128, m_block * kBlockM);
          tma_load_2d(smem_b + cursor.stage * kBBytes, &tmap_b, full, kb * 128, n_block * kBlockN);
          tma_load_2d(smem_sfa + cursor.stage * kSfaBytes, &tmap_sfa, full, m_block * kBlockM, kb);
          tma_load_2d(smem_sfb + cursor.stage * kSfbBytes, &tmap_sfb, full, n_block * kBlockN, kb);
          cursor.advance();
        }
      }
      allow_dependent_launch();  // every operand load of this CTA is issued
    } else if (const int w = static_cast<int>(threadIdx.x) / 32 - kMathThreads / 32 - 1;
               lane == 0 && w >= 0 && w < kMathWarpgroups) {
      // The storer of math warpgroup w: lane 0 of the (w + 1)-th warp after the producer's.
      const u32 slabs = smem_d + static_cast<u32>(w) * (kSlabs * kSlabBytes);
      const u32 ready = slab_bars + 16 * w, written = ready + 8;
      int local = 0;  // tiles stored (skipped ones not counted: the math threads skip the same)
      int paced = 0;  // paced tiles so far: the pace barriers' phase
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int m_block, n_block;
        tiles.at(tile, m_block, n_block);
        if (skip_now()) continue;
        const int group = tiles.group();
        const int n0 = n_block * kBlockN, row0 = m_block * kBlockM + w * 64;
        // Slabs inside D: those starting left of N, none if the rows start below M; an
        // overlapping last slab only when some of its columns are past the slab before it
        // and left of N. (Plain loops: this thread has the producer's small register budget.)
        const int inside = row0 < m ? imin(kSlabs, (kN - n0 + 15) / 16) : 0;
        bulk_wait_group_read0();  // the previous tile's stores have read the slabs
        if (with_c) {
          mbar_arrive_expect_tx(ready, static_cast<u32>(inside) * kSlabBytes);
          const bool pace = paced_now();
          int q = 0;  // the quarter of the slabs being loaded
#pragma unroll 1
          for (int j = 0; j < inside; ++j) {
            // Slab j is in quarter 4 j / inside; quarter q > 0 waits for pace barrier q - 1.
            if (pace && 4 * j >= (q + 1) * inside) {
              for (; 4 * j >= (q + 1) * inside; ++q) {}
              mbar_wait_sleeping(pace_bars + 8 * (q - 1), static_cast<u32>(paced) & 1u);
            }
            if (kKGrouped)
              tma_load_3d(slabs + static_cast<u32>(j) * kSlabBytes, &tmap_c, ready,
                          n0 + wgrad_slab_column(kBlockN, j), row0, group);
            else
              tma_load_2d(slabs + static_cast<u32>(j) * kSlabBytes, &tmap_c, ready,
                          n0 + wgrad_slab_column(kBlockN, j), row0);
          }
          paced += pace;
        } else {
          mbar_arrive(ready);
        }
        mbar_wait_sleeping(written, static_cast<u32>(local) & 1u);
#pragma unroll 1
        for (int j = 0; j < inside; ++j) {
          if (kKGrouped)
            tma_store_3d(&tmap_d, slabs + static_cast<u32>(j) * kSlabBytes, n0 + wgrad_slab_column(kBlockN, j), row0,
                         group);
          else
            tma_store_2d(&tmap_d, slabs + static_cast<u32>(j) * kSlabBytes, n0 + wgrad_slab_column(kBlockN, j), row0);
        }
        bulk_commit_group();
        ++local;
      }
      bulk_wait_group0();  // the last stores are complete before the kernel ends
    }
  } else {
    claim_registers<kMathRegs>();
    // Broadcast from lane 0, so that ptxas keeps what derives from it in uniform registers.
    const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
    const int tile_row = warpgroup * 64 + (threadIdx.x / 32 % 4) * 16 + lane / 4;
    const int col_in_chunk = 2 * (lane % 4);
    const u64 desc_a0 = smem_desc_sw128(smem_a + warpgroup * 64 * 128);
    const u64 desc_b0 = smem_desc_sw128(smem_b);

    // Two wgmma buffers: K blocks go in pairs, both issued back to back, the first
    // promoted while the tensor cores still run the second (as in gemm_1d2d_kernel).
    float acc[kAccum], part[kBuffers][kAccum];
#pragma unroll
    for (int j = 0; j < kBuffers; ++j)
#pragma unroll
      for (int i = 0; i < kAccum; ++i) part[j][i] = 0.0f;

    // Issues the K block in `stage` into `buf`.
    auto issue = [&](float(&buf)[kAccum], int stage) {
      wgmma_k128<kBlockN>(buf, desc_a0 + ((stage * kABytes) >> 4), desc_b0 + ((stage * kBBytes) >> 4));
    };
    // After `buf`'s wgmma group completed: promotion with a scale per row (A) and per
    // column (B) of the K block. The stage is freed after the promotion (the last products
    // are inputs of the arrival, so every scale load of the stage came before it), or,
    // where the scales were read into registers while the wgmma ran, before it: the
    // producer refills the stage a promotion earlier (docs/PERFORMANCE.md log 106).
    // A K block's scales as this thread uses them: its two rows' (A) and its columns' (B).
    struct Scales {
      float a0, a1, b[kChunks][2];
    };
    auto load_scales = [&](Scales& sc, int stage) {
      const u32 sfa = smem_sfa + stage * kSfaBytes + tile_row * 4;
      sc.a0 = ld_shared_f32(sfa);
      sc.a1 = ld_shared_f32(sfa + 8 * 4);
      const u32 sfb = smem_sfb + stage * kSfbBytes + col_in_chunk * 4;
#pragma unroll
      for (int i = 0; i < kChunks; ++i) {
        sc.b[i][0] = ld_shared_f32(sfb + 8 * i * 4);
        sc.b[i][1] = ld_shared_f32(sfb + 8 * i * 4 + 4);
      }
    };
    // `pre`: the scales read while the wgmma ran (load_scales), else null: read here, each
    // chunk's just before its products.
    auto retire = [&](float(&buf)[kAccum], int stage, const Scales* pre = nullptr) {
#pragma unroll
      for (int i = 0; i < kAccum; ++i) fence_operand(buf[i]);
      const u32 sfa = smem_sfa + stage * kSfaBytes + tile_row * 4;
      const float sa0 = pre ? pre->a0 : ld_shared_f32(sfa), sa1 = pre ? pre->a1 : ld_shared_f32(sfa + 8 * 4);
      const u32 sfb = smem_sfb + stage * kSfbBytes + col_in_chunk * 4;
      // With the scales in registers the stage holds nothing this thread still reads: it is
      // released before the promotion (every lane's scale loads are ordered before lane 0's
      // arrival by __syncwarp and the arrival's release semantics).
      if (pre) {
        __syncwarp();
        if (lane == 0) mbar_arrive_after(empty_bars + 8 * stage, pre->a0, pre->b[kChunks - 1][1]);
      }
      float last0 = 0.0f, last1 = 0.0f;
#pragma unroll
      for (int i = 0; i < kChunks; ++i) {
        const float sb0 = pre ? pre->b[i][0] : ld_shared_f32(sfb + 8 * i * 4);
        const float sb1 = pre ? pre->b[i][1] : ld_shared_f32(sfb + 8 * i * 4 + 4);
        last0 = sa0 * sb0;
        last1 = sa1 * sb1;
        acc[4 * i + 0] += last0 * buf[4 * i + 0];
        acc[4 * i + 1] += (sa0 * sb1) * buf[4 * i + 1];
        acc[4 * i + 2] += (sa1 * sb0) * buf[4 * i + 2];
        acc[4 * i + 3] += last1 * buf[4 * i + 3];
      }
      if (!pre) {
        __syncwarp();
        if (lane == 0) mbar_arrive_after(empty_bars + 8 * stage, last0, last1);
      }
    };
    // One-buffer tiles read the scales while the wgmma runs where the registers allow it
    // (the accumulators, the buffer and the scales, with ~28 to spare).
    constexpr bool kPreloadScales = kBuffers == 1 && 2 * kAccum + kBlockN / 4 + 2 + 28 <= kMathRegs;
    // Those of two math warpgroups from 144 columns (144, 152) run whole rounds of the stage
    // ring unrolled where the ring is at stage 0 (compile-time stage offsets and barrier
    // addresses, as gemm_1d2d_kernel's rounds), single K blocks elsewhere: 128x152 +3.4 to
    // 5 %, 128x144 +12 to 15 % (docs/PERFORMANCE.md log 100), rounds of four stages, the
    // most these widths fit. (136 columns spill 4 bytes unrolled, and so do 144 in rounds of
    // three stages since the stage is released before the promotion, log 106; the tiles that
    // do not preload spill or gain nothing, log 101; reading the A scales after the wait
    // instead costs 4.5-15.5 %, log 102.)
    constexpr bool kRoundsUnrolled = kPreloadScales && kMathWarpgroups == 2 && kBlockN >= 144 && kStages >= 4;

    const u32 slabs = smem_d + static_cast<u32>(warpgroup) * (kSlabs * kSlabBytes);
    const u32 ready = slab_bars + 16 * static_cast<u32>(warpgroup), written = ready + 8;

    StageCursor<kStages> cursor;
    int local = 0;  // tiles done by this CTA (the slab barriers' phase)
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      if (kKGrouped) {
        int m_block, n_block;
        tiles.at(tile, m_block, n_block);
        if (skip_now()) continue;
      }
      const int k_blocks = tiles.k_blocks();
#pragma unroll
      for (int i = 0; i < kAccum; ++i) acc[i] = 0.0f;
      // Nothing is in flight across a loop's back edge: ptxas cannot follow a wgmma
      // group there and would serialize every wgmma. Warpgroup 1 takes its first K block
      // alone and pairs from the second on, so that the two warpgroups' ends of pairs
      // (when a warpgroup has no wgmma in flight while it promotes) do not coincide.
      // One K block alone: issue, wait, promote.
      auto single = [&]() {
        mbar_wait(full_bars + 8 * cursor.stage, cursor.phase);
        const int stage = cursor.stage;
        issue(part[0], stage);
        cursor.advance();
        if constexpr (kPreloadScales) {
          Scales sc;
          load_scales(sc, stage);
          wgmma_wait<0>();
          retire(part[0], stage, &sc);
        } else {
          wgmma_wait<0>();
          retire(part[0], stage);
        }
      };
      if constexpr (kBuffers == 1) {
        // (The pair loop is not even compiled here: with one buffer it would issue into
        // the buffer in flight, and ptxas serializes every wgmma of a kernel that could.)
        if constexpr (kRoundsUnrolled) {
          // One K block in `stage` (known at compile time in a round), waited for in `phase`.
          auto block_at = [&](int stage, u32 phase) {
            mbar_wait(full_bars + 8 * stage, phase);
            issue(part[0], stage);
            Scales sc;
            load_scales(sc, stage);
            wgmma_wait<0>();
            retire(part[0], stage, &sc);
          };
          int kb = 0;
#pragma unroll 1
          while (kb < k_blocks) {
            if (cursor.stage == 0 && kb + kStages <= k_blocks) {
#pragma unroll
              for (int s = 0; s < kStages; ++s) block_at(s, cursor.phase);
              cursor.phase ^= 1;
              kb += kStages;
            } else {
              single();
              ++kb;
            }
          }
        } else {
#pragma unroll 1
          for (int kb = 0; kb < k_blocks; ++kb) single();
        }
      } else {
        int kb = 0;
        if (kMathWarpgroups == 2 && warpgroup == 1 && k_blocks > 0) {
          single();
          kb = 1;
        }
#pragma unroll 1
        for (; kb + 1 < k_blocks; kb += 2) {
          mbar_wait(full_bars + 8 * cursor.stage, cursor.phase);
          const int stage_a = cursor.stage;
          issue(part[0], stage_a);
          cursor.advance();
          mbar_wait(full_bars + 8 * cursor.stage, cursor.phase);
          const int stage_b = cursor.stage;
          issue(part[1], stage_b);
          cursor.advance();
          wgmma_wait<1>();
          retire(part[0], stage_a);
          // The first buffer's registers are free now: the second K block's scales are
          // read while its wgmma still runs, not after the wait.
          Scales sc;
          load_scales(sc, stage_b);
          wgmma_wait<0>();
          retire(part[1], stage_b, &sc);
        }
        if (kb < k_blocks) single();
      }
#pragma unroll
      for (int j = 0; j < kBuffers; ++j)
#pragma unroll
        for (int i = 0; i < kAccum; ++i) discard(part[j][i]);

      // Epilogue (see the top of the file). Thread (warp w, lane l) holds rows
      // 16 w + l / 4 and + 8 of its warpgroup's 64, columns 8 i + 2 (l % 4) + {0, 1}.
      // With the 64-byte swizzle the 16-byte chunk c of row r sits at chunk
      // c ^ ((r / 2) % 4). An 8-byte access is served per half warp (16 lanes, 4 rows, 128
      // bytes): rows r and r + 2 of a half warp lie in the same 16 banks, and with the
      // same 8 columns they would hit the same 8 of them (swizzles s and s ^ 1). So each
      // slab's two 8-column chunks go out in two accesses, and rows with (r / 2) odd
      // write the other chunk first: every half warp then covers all 32 banks once.
      const int row = tile_row - warpgroup * 64;  // within the warpgroup's 64 rows
      const u32 swizzle = static_cast<u32>(row / 2) % 4u;  // the same for row + 8
      const bool flip = (row / 2) % 2 != 0;
      mbar_wait(ready, static_cast<u32>(local) & 1u);  // C's tile is in the slabs, or they are free
#pragma unroll
      for (int j = 0; j < kSlabs; ++j) {
        const int i = wgrad_slab_column(kBlockN, j) / 8;  // the slab's chunks: i and i + 1
        const u32 slab = slabs + static_cast<u32>(j) * kSlabBytes;
#pragma unroll
        for (int p = 0; p < 2; ++p) {
          // This access writes chunk i + q of the slab's two (q = p, or 1 - p for a flipped row).
          const bool second = (p == 1) != flip;
          const u32 q = second ? 1u : 0u;
          const u32 chunk = wgrad_slab_chunk(q, lane, swizzle);
          float v[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) v[e] = second ? acc[4 * (i + 1) + e] : acc[4 * i + e];
          write_wgrad_chunk(v, slab + row * 64 + chunk, slab + (row + 8) * 64 + chunk, with_c);
        }
      }
      // This thread's slab writes become visible to the storer's TMA stores.
      fence_proxy_async_shared();
      mbar_arrive(written);
      ++local;
    }
  }
}

}  // namespace fp8gemm_dev
