#pragma once

// D [M,N] bf16 = A [M,K] x B [N,K]^T with A scaled per token (1x128) and B per
// 128x128 block ("1D2D").
//
// Persistent and warp-specialized: one CTA per SM walks a static tile schedule. The
// last warpgroup is the producer: one thread issues every TMA load into a ring of
// kStages shared-memory stages, and one warp copies each tile's B scales into shared
// memory. One (64-row tiles) or two math warpgroups each own half of the tile's rows,
// walked in waves of 64 rows. Per 128-deep K block and wave a math warpgroup runs 4
// wgmma k32 steps into a temporary accumulator, waits, frees the stage after the last
// wave, and adds the temporary into fp32 registers multiplied by the block's scales
// (promotion); meanwhile the other math warpgroup's wgmma keeps the tensor cores busy.
// Optionally two CTAs form a cluster and load a shared operand once for both (TMA
// multicast), halving that operand's L2 traffic.

#include "fp8gemm/ptx.cuh"
#include "fp8gemm/epilogue.cuh"
#include "fp8gemm/pipeline.cuh"
#include "fp8gemm/producer.cuh"
#include "fp8gemm/promotion.cuh"
#include "fp8gemm/schedule.cuh"

namespace fp8gemm_dev {

// kMulticast: 0 = every CTA loads its own tiles; 1 = clusters of two CTAs on
// neighbouring N blocks, each loading half of the shared A tile into both; 2 = two
// CTAs on neighbouring M blocks sharing B the same way.
// kSplitK = 2: the two CTAs of a cluster compute the same tile over the two halves of
// K, then each sends the partial sums of the other's half of the columns through
// distributed shared memory, adds what it received, and stores its half (for small-M
// problems whose tiles are too few to fill the GPU). The sum of two partials does not
// depend on their order: results are deterministic.
// kGrouping: see TileRows (0 dense, 1 m-grouped contiguous, 2 m-grouped masked); B is then
// the experts' matrices stacked [groups * kN, kK] and sfb their block scales stacked by rows.
// kEarlyB (dense only): stages of B loaded before the dependency wait (see below); 0 none.
// Config: the kernel's configuration, a struct the code generator writes for each kernel
// (named after it) with these constants: kN, kK, kBlockM, kBlockN, kStages, kGroupN,
// kMulticast, kSplitK, kTmaStore, kGrouping, kProducerRegs, kMathRegs, kEarlyB, and the
// dynamic shared memory the host launches it with, kSmemBytes (checked below).
template <class Config>
__global__ void __launch_bounds__(((Config::kBlockM == 64 ? 1 : Config::kBlockM == 192 ? 3 : 2) + 1) * 128, 1)
    gemm_1d2d_kernel(const __grid_constant__ TensorMap tmap_a, const __grid_constant__ TensorMap tmap_b,
                     const __grid_constant__ TensorMap tmap_sfa, const __grid_constant__ TensorMap tmap_d,
                     const float* __restrict__ sfb,
                     long long sfb_stride_n, long long sfb_stride_k, u16* __restrict__ d,
                     long long ldd, int m, u32 stage_tx_bytes, const int* __restrict__ group_info, int groups,
                     int group_rows) {
  constexpr int kN = Config::kN, kK = Config::kK, kBlockM = Config::kBlockM, kBlockN = Config::kBlockN;
  constexpr int kStages = Config::kStages, kGroupN = Config::kGroupN, kMulticast = Config::kMulticast;
  constexpr int kSplitK = Config::kSplitK, kTmaStore = Config::kTmaStore, kGrouping = Config::kGrouping;
  constexpr int kProducerRegs = Config::kProducerRegs, kMathRegs = Config::kMathRegs, kEarlyB = Config::kEarlyB;
  // Math warpgroups: one for 64-row tiles, three of 64 rows each for 192-row tiles (two
  // others' wgmma cover each one's promotion), else two; each owns kBlockM /
  // kMathWarpgroups rows of the tile and walks them in waves of 64 rows (the wgmma M).
  constexpr int kMathWarpgroups = kBlockM == 64 ? 1 : kBlockM == 192 ? 3 : 2;
  constexpr int kMathThreads = kMathWarpgroups * 128;
  constexpr int kWaves = kBlockM / 64 / kMathWarpgroups;
  constexpr int kCluster = kMulticast == 0 && kSplitK == 1 ? 1 : 2;
  constexpr int kStageSharers = kMulticast == 0 ? 1 : 2;  // CTAs that release each stage
  constexpr int kPairN = kMulticast == 1 ? 2 : 1;
  constexpr int kPairM = kMulticast == 2 ? 2 : 1;
  // With one 64-row wave per warpgroup and registers to spare, two wgmma buffers
  // alternate: K block kb + 1 runs on the tensor cores while kb is promoted. Otherwise
  // one buffer, and the other math warpgroup's wgmma fills the promotion time.
  constexpr int kBuffers =
      kWaves == 1 && kMathWarpgroups < 3 && kBlockN <= (kMathWarpgroups == 1 ? 144 : 128) ? 2 : 1;
  constexpr int kKBlocks = (kK + 127) / 128;
  constexpr int kNBlocks = (kN + kBlockN - 1) / kBlockN;
  constexpr int kSuperN = (kNBlocks + kPairN - 1) / kPairN;
  constexpr int kScaleNBlocks = (kN + 127) / 128;
  constexpr u32 kABytes = kBlockM * 128;
  constexpr u32 kBBytes = kBlockN * 128;
  constexpr u32 kSfaBytes = kBlockM * 4;
  // A tile crosses a 128-column scale boundary only at multiples of gcd(kBlockN, 128)
  // (in 8-column chunks); it touches at most two scale blocks when kBlockN - gcd <= 128,
  // else three (176 columns).
  constexpr int kSplitStep = (kBlockN % 128 == 0 ? 128 : kBlockN % 64 == 0 ? 64 : kBlockN % 32 == 0 ? 32 : 16) / 8;
  constexpr int kScaleRows = kBlockN - 8 * kSplitStep > 128 ? 3 : 2;
  constexpr u32 kSfbBytes = kScaleRows * kKBlocks * 4;  // one tile's B scales: a row of ceil(K/128) per block
  // kTmaStore: 0 = the math threads store to global memory directly; otherwise the
  // tile goes out through shared memory and TMA stores of 64x64 slabs (128-byte
  // swizzle): 1 = a buffer for every slab of the tile, 2 = one buffer per warpgroup.
  // When kBlockN is not a multiple of 64 the last slab holds the tile's last 64 columns
  // and overlaps the one before it: those columns are stored twice with the same values.
  static_assert(kTmaStore == 0 || kBlockN >= 64, "TMA stores go in 64-column slabs");
  constexpr int kSlabsN = (kBlockN + 63) / 64;
  constexpr u32 kSlabBytes = 64 * 128;
  constexpr int kDBuffers = kTmaStore == 1 ? kWaves * kSlabsN / (kSplitK == 2 ? 2 : 1) : 1;
  constexpr u32 kDBytes = kTmaStore != 0 ? kMathWarpgroups * kDBuffers * kSlabBytes : 0;
  constexpr int kAccum = kBlockN / 2;
  constexpr int kChunks = kBlockN / 8;
  static_assert(kBlockM == 64 || kBlockM == 128 || kBlockM == 192 || kBlockM == 256, "64, 128, 192 or 256 rows");
  static_assert(kBlockN % 16 == 0 && kBlockN <= 256, "wgmma N");
  static_assert(kMulticast >= 0 && kMulticast <= 2, "multicast mode");
  static_assert(kGrouping == 0 || ((kMulticast == 0 || (kMulticast == 2 && kBlockM <= 128)) && kSplitK == 1 &&
                                    (kBlockM <= 128 || (kGrouping == 2 && kBlockM == 256))),
                "grouped: 64/128-row tiles (masked: also 256, unpaired), no split-K; B pairs of up to 128 rows");
  static_assert(kSplitK == 1 || (kSplitK == 2 && kMulticast == 0 && kKBlocks >= 2), "split-K over a pair");
  static_assert(kEarlyB == 0 || (kGrouping == 0 && kEarlyB <= kStages), "early B: dense, at most kStages");
  static_assert(kSplitK == 1 || kTmaStore == 0 || kBlockN % 128 == 0, "each CTA stores whole 64-column slabs");
  // K blocks of this CTA: all, or one half with split-K.
  constexpr int kKPerSplit = (kKBlocks + kSplitK - 1) / kSplitK;
  // One-buffer kernels of two or three math warpgroups run whole rounds of the stage ring
  // unrolled (compile-time stage offsets and barrier addresses). 64-row tiles (one math
  // warpgroup: small M, bound by memory) and masked 256-row tiles (three K-loop
  // instances) keep a run-time stage: unrolled, they compiled up to twice as long and
  // measured no faster.
  constexpr bool kRoundsUnrolled = kBuffers == 1 && kMathWarpgroups >= 2 && !(kGrouping == 2 && kWaves == 2);
  // Where a tile's K blocks leave few stages of its last round unused, the ring restarts
  // at stage 0 with every tile: those stages are passed over (the producer completes them
  // without loading, the math warps release them), and the K loop is whole rounds and a
  // tail, no head. Each passed-over stage is a load the next tile does not have in flight
  // when it starts: with at most one per 24 K blocks (K = 1536, 7168, 16384 on 3 stages)
  // it measured 0.2-2.4 % faster than a ring that runs on across tiles; with 2 per 16 or 2
  // per 4 blocks (K = 2048, 512) 0.7 % and 4 % slower. There the ring runs on and one loop
  // takes whole rounds where they start at stage 0 and single blocks elsewhere.
  constexpr int kPassedOver = (kStages - kKPerSplit % kStages) % kStages;
  constexpr bool kRingRestarts = kRoundsUnrolled && kPassedOver * 24 <= kKPerSplit;
  // Split-K exchange buffer: per wave, the half of the accumulator the partner owns,
  // [element][thread] so that consecutive threads hit consecutive banks.
  constexpr int kHalfAccum = kAccum / 2;
  constexpr u32 kRedBytes = kSplitK == 2 ? kWaves * kHalfAccum * kMathThreads * 4 : 0;

  // The bytes this layout takes after the base's 1024-byte alignment (the barriers end at
  // red_free_bar + 8 with split-K, sfb_empty_bars + 16 without): what the host sizes the
  // launch's dynamic shared memory with (kernel_layout), 1024 bytes of alignment slack more.
  constexpr u32 kLayoutBytes =
      (kStages * (kABytes + kBBytes + kSfaBytes) + kDBytes + 2 * kSfbBytes + kRedBytes + 7u) / 8u * 8u +
      kStages * 16 + 32 + (kSplitK == 2 ? 16 : 0);
  static_assert(kLayoutBytes + 1024 == Config::kSmemBytes,
                "the host's shared-memory layout (kernel_layout in src/problem) is not the kernel's");

  // Shared memory: [A stages][B stages][D slabs][A-scale stages][2 tile B-scale buffers]
  // [split-K exchange][full][empty][B-scale full][B-scale empty][exchange full, free],
  // based at a 1024-byte boundary as the 128-byte swizzle requires (the same offsets in
  // both CTAs of a cluster).
  extern __shared__ unsigned char smem_raw[];
  const u32 smem_a = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const u32 smem_b = smem_a + kStages * kABytes;
  const u32 smem_d = smem_b + kStages * kBBytes;
  const u32 smem_sfa = smem_d + kDBytes;
  const u32 smem_sfb = smem_sfa + kStages * kSfaBytes;
  const u32 smem_red = smem_sfb + 2 * kSfbBytes;
  const u32 full_bars = (smem_red + kRedBytes + 7u) & ~7u;
  const u32 empty_bars = full_bars + kStages * 8;
  const u32 sfb_full_bars = empty_bars + kStages * 8;
  const u32 sfb_empty_bars = sfb_full_bars + 2 * 8;
  const u32 red_full_bar = sfb_empty_bars + 2 * 8;  // the partner's partials have arrived
  const u32 red_free_bar = red_full_bar + 8;        // the partner's buffer may be written

  const int lane = threadIdx.x % 32;
  const u32 rank = kCluster > 1 ? cluster_cta_rank() : 0;
  // Loads K block kb of B's rows from b_row0 into a stage (with B multicast, this CTA's
  // half into both CTAs of the pair; a contiguous pair whose M blocks lie in two experts,
  // `shared` false, loads both halves of its own B instead).
  auto load_b_stage = [&](u32 full, u32 b_dst, int kb, int b_row0, bool shared) {
    if constexpr (kMulticast == 2) {
      if (shared) {
        tma_load_2d_multicast(b_dst + rank * (kBBytes / 2), &tmap_b, full, kb * 128,
                              b_row0 + static_cast<int>(rank) * (kBlockN / 2), 0x3);
      } else {
        tma_load_2d(b_dst, &tmap_b, full, kb * 128, b_row0);
        tma_load_2d(b_dst + kBBytes / 2, &tmap_b, full, kb * 128, b_row0 + kBlockN / 2);
      }
    } else {
      tma_load_2d(b_dst, &tmap_b, full, kb * 128, b_row0);
    }
  };
  if (threadIdx.x == kMathThreads) {
    prefetch_tensor_map(&tmap_a);
    prefetch_tensor_map(&tmap_b);
    prefetch_tensor_map(&tmap_sfa);
    if constexpr (kTmaStore != 0) prefetch_tensor_map(&tmap_d);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_bars + 8 * s, 1);
      // One arrival per math warp of every CTA that reads the stage (both CTAs of a
      // multicast pair): it is refilled only when all of them are done with it.
      mbar_init(empty_bars + 8 * s, kMathWarpgroups * 4 * kStageSharers);
    }
    for (int b = 0; b < 2; ++b) {
      mbar_init(sfb_full_bars + 8 * b, 32);  // every lane of the scale-loading warp
      mbar_init(sfb_empty_bars + 8 * b, kMathThreads);
    }
    if constexpr (kSplitK == 2) {
      // This CTA's own arrival (with the bytes to expect); the partner's stores count the bytes.
      mbar_init(red_full_bar, 1);
      mbar_init(red_free_bar, kMathWarpgroups * 4);
    }
    fence_barrier_init();
  }
  // The partner CTA multicasts into this one's shared memory and arrives on its
  // barriers: they must be initialized cluster-wide first.
  if constexpr (kCluster > 1)
    cluster_sync();
  else
    __syncthreads();
  // The tile schedule (kernel arguments only: no global memory read).
  const int m_blocks = grouped_m_blocks<kGrouping, kBlockM>(m, groups, group_rows);
  const int super_m = (m_blocks + kPairM - 1) / kPairM;
  const int num_super = super_m * kSuperN;
  const int first_super = kCluster > 1 ? static_cast<int>(cluster_id()) : static_cast<int>(blockIdx.x);
  const int super_step = kCluster > 1 ? static_cast<int>(cluster_count()) : static_cast<int>(gridDim.x);
  const int kb_begin = kSplitK == 2 ? static_cast<int>(rank) * kKPerSplit : 0;
  const int kb_end = kSplitK == 2 ? imin(kKBlocks, kb_begin + kKPerSplit) : kKBlocks;
  // This CTA's tile inside a super tile: stripes along M (schedule.cuh) for the contiguous
  // problems the host chose it for (kernel_layout), the others stripes along N.
  constexpr bool kStripesAlongM = Config::kStripesAlongM != 0;
  static_assert(!kStripesAlongM || (kGrouping == 1 && kPairN == 1), "stripes along M: contiguous, no A pairs");
  using Tiles = ForwardTiles<kGrouping, kBlockM, kSuperN, kGroupN, kPairM, kPairN, kStripesAlongM>;
  // Each role walks its own copy of the schedule (schedule.cuh), the same global values
  // deciding for all; masked, it reads masked_m, so only after the dependency wait.
  auto tiles_start = [&]() { return Tiles(m, super_m, num_super, group_info, groups, group_rows, rank); };

  // Early B (kEarlyB > 0, chosen only when the caller promised that nothing still running
  // writes B or its scales): the producer loads B of its first tile's first kEarlyB stages
  // before waiting for the previous kernel, so that they stream in during its tail. A, the
  // scales and D are touched only after the wait.
  int early_stages = 0;
  if constexpr (kEarlyB > 0) {
    if (first_super < num_super) {
      early_stages = imin(kEarlyB, kb_end - kb_begin);
      if (threadIdx.x == kMathThreads) {
        int m_block, n_block;
        pair_tile_coords<kSuperN, kGroupN, kPairM, kPairN, kStripesAlongM>(first_super, super_m, rank, m_block,
                                                                            n_block);
        for (int s = 0; s < early_stages; ++s) {
          // The stage's whole byte count: A and its scales follow after the wait.
          const u32 full = full_bars + 8 * s;
          mbar_arrive_expect_tx(full, stage_tx_bytes);
          load_b_stage(full, smem_b + s * kBBytes, kb_begin + s, n_block * kBlockN, true);
        }
      }
    }
  }
  // First global access (operands, scales, group data, D) below this line (B excepted
  // with kEarlyB).
  grid_dependency_wait();

  if (threadIdx.x >= kMathThreads) {
    release_registers<kProducerRegs>();
    const int producer_warp = (threadIdx.x - kMathThreads) / 32;
    if (producer_warp == 0 && lane == 0) {
      // Streams A, B and A's scales for every K block of every tile. With multicast,
      // this CTA loads its half of the shared operand into both CTAs.
      StageCursor<kStages> cursor;
      Tiles tiles = tiles_start();
      int early_left = early_stages;  // stages of the first tile whose B is already loading
      for (int st = first_super;; st += super_step) {
        int m_block, n_block;
        TileRows tr;
        if (!tiles.next(st, m_block, n_block, tr)) break;
        const int b_row0 = tr.group * kN + n_block * kBlockN;
        for (int kb = kb_begin; kb < kb_end; ++kb) {
          mbar_wait(empty_bars + 8 * cursor.stage, cursor.phase ^ 1);
          const u32 full = full_bars + 8 * cursor.stage;
          const bool b_loading = kEarlyB > 0 && early_left > 0;
          if constexpr (kEarlyB > 0) early_left -= b_loading ? 1 : 0;
          // What the stage's loads deliver: less than a full A tile when M is smaller
          // than the tile (only the rows that exist are loaded; the rest of the stage
          // holds stale data, which only reaches accumulator rows that are never stored).
          if (!b_loading) mbar_arrive_expect_tx(full, stage_tx_bytes);
          const u32 a_dst = smem_a + cursor.stage * kABytes;
          if constexpr (kMulticast == 1)
            tma_load_2d_multicast(a_dst + rank * (kABytes / 2), &tmap_a, full, kb * 128,
                                  m_block * kBlockM + static_cast<int>(rank) * (kBlockM / 2), 0x3);
          else
            tma_load_2d(a_dst, &tmap_a, full, kb * 128, tr.row0);
          if (!b_loading) load_b_stage(full, smem_b + cursor.stage * kBBytes, kb, b_row0, tiles.share_b);
          tma_load_2d(smem_sfa + cursor.stage * kSfaBytes, &tmap_sfa, full, tr.row0, kb);
          cursor.advance();
        }
        if constexpr (kRingRestarts) {
          // The rest of the round is passed over: each stage is completed without data once
          // it is free (the math warps wait for it and release it).
          while (cursor.stage != 0) {
            mbar_wait(empty_bars + 8 * cursor.stage, cursor.phase ^ 1);
            mbar_arrive(full_bars + 8 * cursor.stage);
            cursor.advance();
          }
        }
      }
      allow_dependent_launch();  // every operand load of this CTA is issued
    } else if (producer_warp == 1) {
      // Copies each tile's B scales (all K blocks, every 128-column block the tile may
      // touch) into one of two shared buffers, a tile ahead of the math warpgroups.
      int local = 0;  // active tiles so far
      Tiles tiles = tiles_start();
      for (int st = first_super;; st += super_step) {
        int m_block, n_block;
        TileRows tr;
        if (!tiles.next(st, m_block, n_block, tr)) break;
        const int buffer = local & 1;
        mbar_wait(sfb_empty_bars + 8 * buffer, ((local >> 1) & 1) ^ 1);
        // A partner tile past N reads the last scale block (its result is not stored).
        const int first = imin(n_block * kBlockN / 128, kScaleNBlocks - 1);
        const int second = imin(first + 1, kScaleNBlocks - 1);
        const long long group_first = static_cast<long long>(tr.group) * kScaleNBlocks;
        const float* row0 = sfb + (group_first + first) * sfb_stride_n;
        const float* row1 = sfb + (group_first + second) * sfb_stride_n;
        const float* row2 = sfb + (group_first + imin(second + 1, kScaleNBlocks - 1)) * sfb_stride_n;
        const u32 dst = smem_sfb + buffer * kSfbBytes;
        copy_tile_b_scales<kKBlocks, kScaleRows>(dst, row0, row1, row2, sfb_stride_k, lane);
        mbar_arrive(sfb_full_bars + 8 * buffer);
        ++local;
      }
    }
  } else {
    claim_registers<kMathRegs>();
    // The warpgroup index broadcast from lane 0: ptxas then knows it is warp-uniform, and
    // everything computed from it (descriptors, shared addresses) stays in uniform registers.
    const int warpgroup = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 128), 0);
    // This thread's accumulator rows inside its wave (and row + 8), per the wgmma m64
    // fragment layout: warp w of the warpgroup holds rows 16w .. 16w + 15.
    const int wave_row = (threadIdx.x / 32 % 4) * 16 + lane / 4;
    const int wg_row0 = warpgroup * (kBlockM / kMathWarpgroups);
    const int col_in_chunk = 2 * (lane % 4);

    // Descriptors of stage 0 (k = 0) for this warpgroup's first wave; waves, stages
    // and k steps only add to the start address (a k32 step is 32 bytes: +2).
    const u64 desc_a0 = smem_desc_sw128(smem_a + wg_row0 * 128);
    const u64 desc_b0 = smem_desc_sw128(smem_b);
    // In a pair, lane c of each warp releases stages on CTA c (both arrivals in one instruction).
    const u32 empty_bars_lane = kStageSharers == 1 ? empty_bars : map_shared_to_cta(empty_bars, lane % kStageSharers);

    float acc[kWaves][kAccum];
    float part[kBuffers][kAccum];
#pragma unroll
    for (int b = 0; b < kBuffers; ++b)
#pragma unroll
      for (int i = 0; i < kAccum; ++i) part[b][i] = 0.0f;

    // Issues the K block in `stage` of wave w into `buf`.
    auto issue = [&](float(&buf)[kAccum], int stage, int w) {
      wgmma_k128<kBlockN>(buf, desc_a0 + ((stage * kABytes + w * 64 * 128) >> 4), desc_b0 + ((stage * kBBytes) >> 4));
    };
    // After the wgmma group of `buf` completed: optionally frees the stage (one arrival
    // per warp on every CTA of the cluster, after the scale loads are consumed), then
    // promotes into the wave's result.
    // (sb2: the third scale block's, used only when a tile can touch three.)
    auto retire = [&](float(&buf)[kAccum], int stage, int w, float sa0, float sa1, float sb0, float sb1, float sb2,
                      int first_chunks, bool release) {
#pragma unroll
      for (int i = 0; i < kAccum; ++i) fence_operand(buf[i]);
      const float s00 = sa0 * sb0, s10 = sa1 * sb0, s01 = sa0 * sb1, s11 = sa1 * sb1;
      const float s02 = kScaleRows == 3 ? sa0 * sb2 : s01, s12 = kScaleRows == 3 ? sa1 * sb2 : s11;
      if (release) {
        __syncwarp();
        if (lane < kStageSharers) {
          if constexpr (kStageSharers == 1) {
            mbar_arrive_after(empty_bars + 8 * stage, s00, s11);
          } else {
            mbar_arrive_mapped(empty_bars_lane + 8 * stage, s00, s11);
          }
        }
      }
      promote_dispatch<kN, kChunks, kSplitStep>(first_chunks, acc[w], buf, s00, s10, s01, s11, s02, s12);
    };
    auto load_sa = [&](int stage, int w, float& sa0, float& sa1) {
      const u32 sfa = smem_sfa + stage * kSfaBytes + (wg_row0 + w * 64 + wave_row) * 4;
      sa0 = ld_shared_f32(sfa);
      sa1 = ld_shared_f32(sfa + 8 * 4);
    };

    StageCursor<kStages> cursor;
    int local = 0;  // active tiles so far
    Tiles tiles = tiles_start();
    for (int st = first_super;; st += super_step) {
      int m_block, n_block;
      int tile_rows_left;  // rows of the tile below its store limit (masked: below masked_m)
      // Contiguous: the expert index of this thread's two rows per wave, loaded now and read
      // in the epilogue (which zeroes padding rows), so that its latency hides behind the K
      // loop instead of stalling both warpgroups at the end of every tile.
      int row_group[kGrouping == 1 ? kWaves : 1][2];
      {
        TileRows tr;
        if (!tiles.next(st, m_block, n_block, tr)) break;
        tile_rows_left = tr.limit - tr.row0;
        if constexpr (kGrouping == 1) {
#pragma unroll
          for (int w = 0; w < kWaves; ++w) {
            const int r = tr.row0 + wg_row0 + w * 64 + wave_row;
            // (A B pair's partner past M has no rows: nothing to read, nothing stored.)
            const bool rows_exist = kPairM == 1 || r < m;
            row_group[w][0] = rows_exist ? ldg_s32(group_info + r) : -1;
            row_group[w][1] = rows_exist ? ldg_s32(group_info + r + 8) : -1;
          }
        }
      }
#pragma unroll
      for (int w = 0; w < kWaves; ++w)
#pragma unroll
        for (int i = 0; i < kAccum; ++i) acc[w][i] = 0.0f;
      // Chunks from `first_chunks` on lie in the second 128-column block of B's scales.
      const int split = 128 - n_block * kBlockN % 128;
      const int first_chunks = split < kBlockN ? split / 8 : kChunks;
      const int buffer = local & 1;
      const u32 sfb_tile = smem_sfb + buffer * kSfbBytes;
      mbar_wait(sfb_full_bars + 8 * buffer, (local >> 1) & 1);
      auto load_sb = [&](int kb, float& sb0, float& sb1) {
        sb0 = ld_shared_f32(sfb_tile + kb * 4);
        sb1 = ld_shared_f32(sfb_tile + (kKBlocks + kb) * 4);
      };
      auto load_sb2 = [&](int kb) { return kScaleRows == 3 ? ld_shared_f32(sfb_tile + (2 * kKBlocks + kb) * 4) : 0.0f; };

      // Nothing is in flight across a loop's back edge: ptxas cannot follow a wgmma
      // group there and would serialize every wgmma (C7514).
      if constexpr (kBuffers == 2) {
        // K blocks in pairs: both issued back to back, the first promoted while the
        // tensor cores still run the second.
        int kb = kb_begin;
#pragma unroll 1
        for (; kb + 1 < kb_end; kb += 2) {
          float sa_a0, sa_a1, sa_b0, sa_b1, sb_a0, sb_a1, sb_b0, sb_b1;
          mbar_wait(full_bars + 8 * cursor.stage, cursor.phase);
          const int stage_a = cursor.stage;
          load_sa(stage_a, 0, sa_a0, sa_a1);
          issue(part[0], stage_a, 0);
          cursor.advance();
          mbar_wait(full_bars + 8 * cursor.stage, cursor.phase);
          const int stage_b = cursor.stage;
          load_sa(stage_b, 0, sa_b0, sa_b1);
          issue(part[kBuffers - 1], stage_b, 0);
          cursor.advance();
          load_sb(kb, sb_a0, sb_a1);
          load_sb(kb + 1, sb_b0, sb_b1);
          wgmma_wait<1>();
          retire(part[0], stage_a, 0, sa_a0, sa_a1, sb_a0, sb_a1, sb_a1, first_chunks, true);
          wgmma_wait<0>();
          retire(part[kBuffers - 1], stage_b, 0, sa_b0, sa_b1, sb_b0, sb_b1, sb_b1, first_chunks, true);
        }
        if (kb < kb_end) {
          float sa0, sa1, sb0, sb1;
          mbar_wait(full_bars + 8 * cursor.stage, cursor.phase);
          const int stage = cursor.stage;
          load_sa(stage, 0, sa0, sa1);
          issue(part[0], stage, 0);
          cursor.advance();
          load_sb(kb, sb0, sb1);
          wgmma_wait<0>();
          retire(part[0], stage, 0, sa0, sa1, sb0, sb1, sb1, first_chunks, true);
        }
      } else {
        // One K block per iteration; per wave: 4 wgmma k32 steps, wait, promote. The
        // stage is freed after the last wave's wgmma. Only the first kActive waves are
        // computed (the others' rows are never stored); with none the warps only wait for
        // each stage and free it.
        auto k_loop = [&](auto active) {
          constexpr int kActive = decltype(active)::value;
          // K block kb in `stage` (waiting for its phase `phase`).
          auto one = [&](int kb, int stage, u32 phase) {
            mbar_wait(full_bars + 8 * stage, phase);
            if constexpr (kActive == 0) {
              static_assert(kActive != 0 || kStageSharers == 1, "waves are skipped only in masked tiles: no multicast");
              __syncwarp();
              if (lane == 0) mbar_arrive(empty_bars + 8 * stage);
            } else {
              float sa[kActive][2], sb0, sb1;
#pragma unroll
              for (int w = 0; w < kActive; ++w) load_sa(stage, w, sa[w][0], sa[w][1]);
              load_sb(kb, sb0, sb1);
              const float sb2 = load_sb2(kb);
#pragma unroll
              for (int w = 0; w < kActive; ++w) {
                issue(part[0], stage, w);
                wgmma_wait<0>();
                retire(part[0], stage, w, sa[w][0], sa[w][1], sb0, sb1, sb2, first_chunks, w == kActive - 1);
              }
            }
          };
          // A stage passed over at the end of a tile (kRingRestarts): waited for, released.
          auto pass_over = [&](int stage, u32 phase) {
            mbar_wait(full_bars + 8 * stage, phase);
            __syncwarp();
            if (lane < kStageSharers) {
              if constexpr (kStageSharers == 1) {
                mbar_arrive(empty_bars + 8 * stage);
              } else {
                mbar_arrive_mapped(empty_bars_lane + 8 * stage, 0.0f, 0.0f);
              }
            }
          };
          int kb = kb_begin;
          if constexpr (kRingRestarts) {
            // The ring is at stage 0: whole rounds, the last blocks one at a time, then the
            // round's remaining stages passed over. (Separate loops: the rounds' loop has no
            // test of the ring's position.)
#pragma unroll 1
            for (; kb + kStages <= kb_end; kb += kStages) {
#pragma unroll
              for (int s = 0; s < kStages; ++s) one(kb + s, s, cursor.phase);
              cursor.phase ^= 1;
            }
#pragma unroll 1
            for (; kb < kb_end; ++kb) {
              one(kb, cursor.stage, cursor.phase);
              cursor.advance();
            }
#pragma unroll 1
            while (cursor.stage != 0) {
              pass_over(cursor.stage, cursor.phase);
              cursor.advance();
            }
          } else {
#pragma unroll 1
            while (kb < kb_end) {
              if (kRoundsUnrolled && cursor.stage == 0 && kb + kStages <= kb_end) {
#pragma unroll
                for (int s = 0; s < kStages; ++s) one(kb + s, s, cursor.phase);
                cursor.phase ^= 1;
                kb += kStages;
              } else {
                one(kb, cursor.stage, cursor.phase);
                cursor.advance();
                ++kb;
              }
            }
          }
        };
        if constexpr (kGrouping == 2 && kWaves == 2) {
          // Masked 256-row tiles: a warpgroup's 64-row waves wholly past masked_m are skipped.
          const int rows = tile_rows_left - wg_row0;
          if (rows > 64)
            k_loop(IntConstant<2>{});
          else if (rows > 0)
            k_loop(IntConstant<1>{});
          else
            k_loop(IntConstant<0>{});
        } else {
          k_loop(IntConstant<kWaves>{});
        }
      }
      // The temporaries are dead until the next tile's first wgmma overwrites them; saying
      // so keeps them out of the epilogue's register budget.
#pragma unroll
      for (int b = 0; b < kBuffers; ++b)
#pragma unroll
        for (int i = 0; i < kAccum; ++i) discard(part[b][i]);
      // This thread has read the tile's B scales: the buffer may be refilled.
      mbar_arrive(sfb_empty_bars + 8 * buffer);

      // Split-K: this CTA stores chunks [own_lo, own_lo + kChunks / 2) of the tile; it
      // sends its partial sums of the others to the partner and adds the partner's of
      // its own. Thread t exchanges with thread t (same fragment positions).
      const u32 peer = rank ^ 1u;
      const int own_lo = kSplitK == 2 ? static_cast<int>(rank) * (kChunks / 2) : 0;
      const int own_hi = kSplitK == 2 ? own_lo + kChunks / 2 : kChunks;
      if constexpr (kSplitK == 2)
        split_k_exchange<kWaves, kHalfAccum, kMathThreads>(acc, rank, local, smem_red, red_full_bar, red_free_bar,
                                                           kRedBytes);

      // Epilogue. The tile's coordinates are recomputed rather than kept alive across
      // the K loop. A partner tile past M or N stores nothing.
      TileRows tr;
      tiles.next(st, m_block, n_block, tr);
      const int n0 = n_block * kBlockN;
      // Padding rows (group index outside [0, groups)) are stored as zeros.
      if constexpr (kGrouping == 1) zero_padding_rows<kWaves, kChunks>(acc, row_group, groups);
      // bf16 pairs of wave w straight to global memory, clipped at the tile's row limit and N
      // (the checks are skipped for tiles that lie wholly inside D).
      const bool full_tile = tr.row0 + kBlockM <= tr.limit && n0 + kBlockN <= kN && kSplitK == 1;
      auto store_wave = [&](int w) {
        store_wave_direct<kN, kChunks>(acc[w], d, ldd, tr.row0 + wg_row0 + w * 64 + wave_row, tr.limit, n0,
                                       col_in_chunk, full_tile, own_lo, own_hi);
      };
      // Masked: a wave whose 64 rows reach past masked_m goes out directly (a 64-row TMA
      // box would write the rows past it, which must stay untouched).
      // Slab j covers columns [64 j, 64 j + 64) of the tile; the last one ends at kBlockN.
      auto slab_first_column = [](int j) { return j < kSlabsN - 1 ? 64 * j : kBlockN - 64; };
      auto wave_by_tma = [&](int w) { return kGrouping != 2 || tr.row0 + wg_row0 + w * 64 + 64 <= tr.limit; };
      if constexpr (kTmaStore != 0) {
        // Each warpgroup writes its rows as bf16 into swizzled 64x64 slab buffers
        // (write_slab_bf16) and one thread hands each to TMA. With a buffer per slab
        // (kTmaStore 1) the wait for the previous tile's stores comes only now, so they
        // overlapped this tile's K loop; with one buffer (kTmaStore 2, leaving shared
        // memory to the pipeline) each slab waits for the one before.
        if (m_block < m_blocks && n_block < kNBlocks) {
          const bool leader = threadIdx.x % 128 == 0;
          const int warp_row0 = threadIdx.x / 32 % 4 * 16;  // the warp's 16 rows of the wave
          const u32 wg_buffers = smem_d + static_cast<u32>(warpgroup) * (kDBuffers * kSlabBytes);
          int q = 0;  // slabs of this tile written so far by this warpgroup
#pragma unroll
          for (int w = 0; w < kWaves; ++w) {
            if (!wave_by_tma(w)) {
              store_wave(w);
              continue;
            }
#pragma unroll
            for (int j = 0; j < kSlabsN; ++j) {
              if (j * 8 < own_lo || j * 8 >= own_hi) continue;
              const int slab_chunk0 = slab_first_column(j) / 8;
              const u32 buf = wg_buffers + static_cast<u32>(q % kDBuffers) * kSlabBytes;
              if (kDBuffers == 1 || q == 0) {
                if (leader) bulk_wait_group_read0();
                named_barrier_sync(1 + warpgroup, 128);
              }
              write_slab_bf16<kChunks>(acc[w], buf, slab_chunk0, lane, warp_row0);
              ++q;
              if (kDBuffers == 1) {
                fence_proxy_async_shared();
                named_barrier_sync(1 + warpgroup, 128);
              }
              if (kDBuffers == 1 && leader) {
                tma_store_2d(&tmap_d, buf, n0 + slab_first_column(j), tr.row0 + wg_row0 + w * 64);
                bulk_commit_group();
              }
            }
          }
          // (q is the same in every thread of the warpgroup: the choices above are uniform.)
          if (kDBuffers > 1 && q > 0) {
            fence_proxy_async_shared();
            named_barrier_sync(1 + warpgroup, 128);
          }
          if (kDBuffers > 1 && q > 0 && leader) {
            int r = 0;
#pragma unroll
            for (int w = 0; w < kWaves; ++w)
#pragma unroll
              for (int j = 0; j < kSlabsN; ++j) {
                if (j * 8 < own_lo || j * 8 >= own_hi || !wave_by_tma(w)) continue;
                tma_store_2d(&tmap_d, wg_buffers + static_cast<u32>(r++) * kSlabBytes, n0 + slab_first_column(j),
                             tr.row0 + wg_row0 + w * 64);
              }
            bulk_commit_group();
          }
        }
      } else {
#pragma unroll
        for (int w = 0; w < kWaves; ++w) store_wave(w);
      }
      if constexpr (kSplitK == 2) {
        // This CTA's exchange buffer has been read: the partner may write the next tile's.
        __syncwarp();
        if (lane == 0) mbar_arrive_cluster_release(red_free_bar, peer);
      }
      ++local;
    }
    // The last tile's stores must be complete before the kernel ends.
    if constexpr (kTmaStore != 0) {
      if (threadIdx.x % 128 == 0) bulk_wait_group0();
    }
  }
  // The partner CTA may still arrive on this CTA's barriers: neither leaves before both
  // are done.
  if constexpr (kCluster > 1) cluster_sync();
}

}  // namespace fp8gemm_dev
