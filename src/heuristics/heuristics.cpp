#include "heuristics/heuristics.hpp"

#include <algorithm>
#include <cmath>

#include "families/family.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {
namespace {

// H200 figures per SM and cycle at the ~1.6 GHz the card holds under FP8 load. The
// per-K-block and per-tile overheads are fitted to measurements of the kernel itself
// (docs/PERFORMANCE.md, optimization log); the tuner measures instead of predicting.
constexpr double kClockGHz = 1.6;
constexpr double kMacsPerCycle = 4096;       // FP8 tensor core, dense
constexpr double kFeedBytesPerCycle = 96;    // what one SM's TMA loads can take in
constexpr double kL2BytesPerCycle = 7000;    // what L2 delivers to all SMs together
constexpr double kHbmBytesPerSecond = 4.3e12;
constexpr double kLaunchCycles = 3000;       // launch, pipeline fill, last tile's drain
// Per K block: the tensor cores wait while a math warpgroup promotes and reissues. With
// two wgmma buffers per warpgroup less of that shows. A single math warpgroup (64-row
// tiles, decode) is latency-bound: ~200 cycles plus ~1 per column (fitted to the decode
// sweep in tests/data; 150-225 rank the same).
constexpr double kKBlockGapOneBuffer = 270, kKBlockGapTwoBuffers = 200;
// The k-grouped kernel's one-buffer tiles (wider than 128 columns) lose no more per K block
// than its two-buffer ones: 128x192 tiles ran the six DeepSeek-V3 k-grouped sets 0-3 % faster
// than 128x128, none slower (H200, isolated calls, seven rounds, docs/PERFORMANCE.md log 82);
// this kernel waits on its operands (log 68-73), and 192 columns read 17 % fewer of them per
// FLOP. The dense weight gradient keeps 270: with 200 its planner took 128x192 tiles for
// 2112x4096x7168 and 24576x4096x1536, measured 3.5 % and 2-4 % slower than its 192x128 ones.
// The k-grouped kernel's 192x128 tiles (three math warpgroups, one buffer each) cost per FLOP
// what its 128x192 ones do, so the padded rows or columns decide between them: 192x128
// against 128x192 in one process, three rounds each on an H200 and an H100
// (docs/PERFORMANCE.md, log 85 and 90): on
// N = 2048 (no padded columns, 1.8 % padded rows at M = 7168, against 3.1 % padded columns)
// +1.3 to +7.3 %, on N = 7168 (3.1 % padded rows at M = 4096, against 1.8 % padded columns)
// -0.5 to -1.4 % (16 groups: +1.7 / +0.1 %).
constexpr double kKBlockGapOneBufferKGrouped = 200;
// The dense weight gradient's one-buffer tiles of two math warpgroups whose K loop runs whole
// rounds of the stage ring unrolled, scales read while the wgmma runs (gemm_1d1d.cuh
// kRoundsUnrolled: 144-155 columns, 4 stages or more): fitted to 7168x4096x16384, where
// 128x152 s4 tiles (12 waves on 126 SMs) ran 0.7 % and 1.4 % faster than 128x128 s4 two-buffer
// tiles (14 waves) in two runs of one process each (H100, docs/PERFORMANCE.md log 106; H200
// log 107: +1 to +3 %), and 2112x4096x7168, where 128x144 s4 ran even with 192x128 s3
// (+0.3 % H100, +0.5 % H200; log 107). The model counts whole waves; 200-215 reproduce both.
// Measured with it on eight weight gradients (H100, log 109): as predicted (+0.6 to +6 %, one
// even) where the tiles pad up to 1.8 % of N, but 4.2 % slower on 7168x2048x8192, where 14
// tiles of 152 columns pad 3.9 % of N = 2048 and the model predicted 2.1 % faster: so only tiles
// that pad at most kUnrolledRingMaxPadding of N take it.
constexpr double kKBlockGapUnrolledRing = 210;
constexpr double kUnrolledRingMaxPadding = 0.03;
// The forward GEMM's 128-row tiles with two buffers: the exposed promotion grows with the
// columns past 64 (fitted to 128x128 tiles, ~800 cycles per K block at 1.6 GHz against 512 of
// tensor work: 4097x7168x16384 in 14 waves, 4096x7168 at M = 512 in one; 128x64 tiles at M =
// 256-512 as before; docs/PERFORMANCE.md, log 52 and 54).
constexpr double kKBlockGapTwoWarpgroupsPerColumn = 1.0;
// Three math warpgroups (192-row tiles, one buffer each): per row as fast as two with two
// buffers, not faster (weight gradient, 7168x4096x16384: 192x128 tiles 1173 us in 10 waves,
// 128x128 1134 us in 14; docs/PERFORMANCE.md, weight-gradient log entry 14).
constexpr double kKBlockGapThreeWarpgroups = 250;
// The forward GEMM's three math warpgroups hide most of the promotion behind the other two
// warpgroups' wgmma (ncu, 4224x7168x16384: a 192x128 tile's K block ~828 cycles for 768 of
// tensor work, a 256x128 tile's ~1135 for 1024). Fitted to isolated calls (docs/PERFORMANCE.md,
// log 52 and 54): against 256x128 tiles at K = 16384 the measured times per wave give ~240,
// against 128x192 tiles on 2112x7168 ~295 (192x128 2 % behind there).
constexpr double kKBlockGapThreeWarpgroupsForward = 265;
constexpr double kKBlockGapOddColumns = 30;  // see odd_columns in predict
constexpr double kKBlockOneWarpgroup = 200, kKBlockOneWarpgroupPerColumn = 1.0;
// Per tile: pipeline turn-around and the epilogue. Direct stores from the math threads
// are slow (measured ~4400 cycles for a 128x112 tile) and cost by the rows that exist (a
// decode tile stores one row), plus a fixed latency; TMA stores mostly overlap.
constexpr double kTileCyclesTmaStore = 1300, kTileCyclesDirectPer128x128 = 4500;
constexpr double kTileCyclesDirectFixed = 150;
// A forward tile of 256 rows ends later: each math warpgroup converts and stores two 64-row
// waves of accumulators where 128- and 192-row tiles store one, and the tensor cores wait for
// it. Fitted first to short K loops (H100, isolated calls, 21 problems of M = 2048-8192 and K =
// 512-2048 in ten explicit configs, two rounds; docs/PERFORMANCE.md log 132): 256x128 tiles
// ran 2-9 % behind 192x128 or 128x192 ones at K <= 1024 (32768x512 at M = 4096: 135 against
// 126-129 us); at 1000 cycles the picks' regret there went 1.032x -> 1.014x. Raised to 1500 for
// mid K at large M (log 133): the 14 picks of the 567-problem grid that it moves (M = 512-16384,
// K = 1536-4096; to 128x192, 192x128 or 128x160) ran 1.015x faster in geometric mean over
// three alternated rounds (8192x14336x4096 1.025x, 5000x7168x2048 1.037x; 24576x1536 even),
// the mid-K sweep's regret 1.046x -> 1.037x, the short-K one's 1.014x -> 1.016x. On the
// recorded long-K sweeps it changes nothing (a tile's end against 50-130 K blocks). The one
// slab buffer of long K loops (tma_store = 2) is priced by its slab waits instead: charged this
// too, 6000x7168x16384 and 5000x5120x13824 left their 256x128 A-pair tiles for ones measured 2 %
// and 7-15 % slower.
constexpr double kTileCyclesTwoWavesPerWarpgroup = 1500;
constexpr double kSlabWaitCycles = 500;  // one slab buffer: each slab waits for the last
constexpr double kSplitExchangeCycles = 3000;  // split-K: partial sums through DSMEM, measured
constexpr int kMaxStages = 8;
constexpr double kWgradKBlockFactor = 1.25;  // estimate, not yet fitted

// (176 columns, whose tiles may touch three blocks of B's scales, is legal for explicit
// configs but not ranked: 2112x7168 at M = 4096 in 384 such tiles (2.91 waves) measured
// 105.5 / 105.7 us against 104.0 / 101.2 for 352 tiles of 192 (2.67 waves): under the
// power cap the SMs of a partial last wave are not lost, the busy ones run faster.)
const int kBlockNs[] = {16, 32, 48, 64, 80, 96, 112, 128, 144, 152, 160, 192};

// Tiles of block_m x block_n over an M x N output (one group).
int64_t tile_count(int64_t m, int64_t n, int block_m, int block_n) {
  return (m + block_m - 1) / block_m * ((n + block_n - 1) / block_n);
}

// 256-row tiles (two 64-row waves per math warpgroup) whose K loop is long enough that a
// tile's end costs little against its K blocks. There the planner also ranks the fourth stage
// that one slab buffer frees (tma_store = 2), and prefers A multicast among equal predictions:
// under the power cap the pair's third fewer L2 bytes let the clock rise at the same cycles
// (ncu, 4096x7168x16384: 1.49 against 1.46 GHz, 1.062 M against 1.057 M cycles). Measured at
// M = 4096 (docs/PERFORMANCE.md log entries 45, 47, 138): K = 16384 (128 K blocks) 2.2-2.7 %
// faster with both (H200); K = 8192 (64) 1.6-2.3 % faster, dense (H100); K = 7168 (56) even
// (both cards); K <= 2048 1-8 % slower (the slab buffer's waits and the pair's lockstep weigh
// more per K block). Dense problems of 56 K blocks or more take it too from 12 waves of tiles:
// 32768x4096, 32768x6144, 16384x4096 and 8192x7168 at K = 7168 2.2-4.0 % faster (H100, log
// entry 140), while 4096x4096x7168 (3.9 waves) stays even. The grouped forms keep the rule
// from 96 K blocks (log entry 115: the masked sets lost 1.6 % with it from 56).
bool long_k_loop(int block_m, int64_t k, int m_grouping, int64_t tiles, int num_sms) {
  const int64_t k_blocks = (k + 127) / 128;
  if (block_m != 256) return false;
  if (m_grouping != 0) return k_blocks >= 96;
  return k_blocks >= 64 || (k_blocks >= 56 && tiles >= 12 * static_cast<int64_t>(num_sms));
}

// Dense forward GEMMs in 192-row tiles narrower than 128 columns, on K loops as long, in more
// than one wave of tiles: A multicast first too. Measured (H100, isolated calls, explicit
// configs in one process, docs/PERFORMANCE.md log 131) at M = 1100-3000 on 3584x18944,
// 7168x16384, 4096x14336 and 5120x13824: 192x112 tiles 1-23 % faster with A pairs, 192x96
// ones 0-12 %, 192x128 ones -1.3 to +1.6 % (left unicast); at M = 384 and 768, in 1.15 waves
// or less, pairs lost up to 4.5 %.
bool a_pairs_on_long_k_loop(int block_m, int block_n, int64_t k, int64_t tiles, int num_sms) {
  return block_m == 192 && block_n < 128 && (k + 127) / 128 >= 96 && tiles > num_sms;
}

// Contiguous 128-row tiles with at least 32 K blocks, in at least 16 waves of tiles: CTA
// pairs over two M blocks share B where both lie in one expert. Measured (H100,
// docs/PERFORMANCE.md log 117) on the contiguous sets (42-62 waves of 128x192 s4 tiles),
// isolated calls: K = 7168 +1.8-3 %, K = 4096 -2 to +2 %, K <= 3072 -3 to +2 %; under
// sustained load (power cap) K >= 4096 +1-6 %, K = 2048 -0.7 %. On a short problem the pair
// lost (dense 4096x2112x7168, 2.7 waves of the same tile: -3.5 %, log 116).
bool contiguous_b_pairs(int m_grouping, int block_m, int64_t k, int64_t tiles, int num_sms) {
  return m_grouping == 1 && block_m == 128 && (k + 127) / 128 >= 32 && tiles >= 16 * static_cast<int64_t>(num_sms);
}

// L2 bytes one CTA reads per K block: a multicast operand is read once per pair.
double l2_bytes_per_k_block(const KernelConfig& c, int64_t m) {
  const double rows_a = static_cast<double>(std::min<int64_t>(c.block_m, m));
  return (rows_a / (c.multicast == 1 ? 2 : 1) + c.block_n / (c.multicast == 2 ? 2.0 : 1.0)) * 128.0;
}

}  // namespace

Prediction predict(const KernelSpec& spec, int64_t m, const DeviceTraits& device, int64_t groups, bool k_grouped) {
  const KernelConfig& c = spec.config;
  const KernelLayout l = kernel_layout(spec);
  const int64_t group_m = (m + groups - 1) / std::max<int64_t>(groups, 1);
  const int64_t m_blocks_per_group = (group_m + c.block_m - 1) / c.block_m;
  const int64_t m_blocks = std::max<int64_t>(groups, 1) * m_blocks_per_group;
  const int64_t super_tiles = super_tile_count(c, m_blocks, l.n_blocks);
  const int64_t slots = device.num_sms / l.cluster_size;
  const int64_t active = std::min<int64_t>(super_tiles, slots) * l.cluster_size;
  const int64_t waves = (super_tiles + slots - 1) / slots;

  // One 128-deep K block of one tile: tensor-core time plus the promotion gap, against
  // the time to bring its operands in (the SM's own intake, its share of L2).
  const int waves_per_warpgroup = c.block_m / 64 / l.math_warpgroups;
  const int buffers =
      l.math_warpgroups <= 2 && waves_per_warpgroup == 1 && c.block_n <= (l.math_warpgroups == 1 ? 144 : 128) ? 2 : 1;
  const bool wgrad = family(spec.kind).fp32_output;
  // The share of the tiles' columns that lies past N.
  const double padded_columns =
      spec.n > 0 ? static_cast<double>(l.n_blocks) * c.block_n / static_cast<double>(spec.n) - 1.0 : 0.0;
  // (The kernel's kRoundsUnrolled: one buffer, its scales in registers beside the
  // accumulators, 2 x block_n / 2 + block_n / 4 + 30 <= the math registers, from 144 columns.)
  const bool unrolled_ring = wgrad && !k_grouped && buffers == 1 && l.math_warpgroups == 2 && c.block_n >= 144 &&
                             c.block_n + c.block_n / 4 + 30 <= l.math_registers && c.stages >= 4 &&
                             padded_columns <= kUnrolledRingMaxPadding;
  auto k_block_gap = [&]() {
    if (buffers == 1 && k_grouped) return kKBlockGapOneBufferKGrouped;  // any number of math warpgroups
    if (unrolled_ring) return kKBlockGapUnrolledRing;
    if (l.math_warpgroups == 3) return wgrad ? kKBlockGapThreeWarpgroups : kKBlockGapThreeWarpgroupsForward;
    if (buffers == 1) return kKBlockGapOneBuffer;
    if (l.math_warpgroups == 2 && !wgrad)
      return kKBlockGapTwoBuffers + kKBlockGapTwoWarpgroupsPerColumn * std::max(0, c.block_n - 64);
    return kKBlockGapTwoBuffers;
  };
  // Forward one-buffer tiles (128-row tiles wider than 128 columns, every 192- and 256-row
  // tile) whose columns are not a multiple of 64 cost more per K block than their tensor work
  // says: a 128x144 tile ran a median 0.934 (0.87-1.01, 10th-90th percentile) of a 128x192
  // tile's time per wave on 84 problems of the recorded H100 sweeps, against 0.815 in the
  // model; 256x112 tiles a median 1.04 (0.99-1.14) of 256x128 ones on the 16 problems where
  // both ran in one wave (M = 320-4096), where the model prices them the same. 30 cycles
  // fits the picks best (60: more regret, 100: more still; docs/PERFORMANCE.md, log 146-148),
  // though the residuals per tile would even out at 30-120 (log 147 (d)). Measured in
  // alternated processes on the nine problems it moved: 0.989-1.216x (1.082x in geometric
  // mean with an unmoved control).
  const bool odd_columns = !wgrad && !k_grouped && l.math_warpgroups >= 2 && buffers == 1 && c.block_n % 64 != 0;
  const double gap = k_block_gap() + (odd_columns ? kKBlockGapOddColumns : 0.0);
  // Two 64-row waves per warpgroup whose columns are not a multiple of 64 cost per tile what
  // the next multiple of 64 costs: 256x112 against 256x128 tiles measured 1.01-1.03x per tile
  // and wave (M = 4097 / 4352; 2112x7168, 24576x1536, 7168x2048; docs/PERFORMANCE.md, log 52).
  const int costed_n = waves_per_warpgroup == 2 ? (c.block_n + 63) / 64 * 64 : c.block_n;
  double k_block = c.block_m * static_cast<double>(costed_n) * 128.0 / kMacsPerCycle + gap;
  if (l.math_warpgroups == 1)
    k_block = std::max(k_block, kKBlockOneWarpgroup + kKBlockOneWarpgroupPerColumn * c.block_n);
  const double rows_a = static_cast<double>(std::min<int64_t>(c.block_m, group_m));
  const double intake = (rows_a + c.block_n) * 128.0 / kFeedBytesPerCycle;
  const double l2 = l2_bytes_per_k_block(c, group_m) / (kL2BytesPerCycle / static_cast<double>(active));
  // Stages hide load latency; too few expose it.
  // Two stages cannot hide it at all: 256x128 tiles, split-K over two stages each, measured
  // 1.34x the time of 128x128 tiles with five (4096x7168 at M = 512; docs/PERFORMANCE.md, log 54).
  const double latency_penalty = c.stages < 3 ? 0.35 : c.stages < 4 ? (4 - c.stages) * 0.04 : 0.0;
  const double slabs_per_warpgroup = c.block_m / 64.0 / l.math_warpgroups * ((c.block_n + 63) / 64);
  // 1D1D: fp32 slabs through TMA (twice the bytes of bf16); its promotion scales every
  // column separately (a multiply more per element).
  if (wgrad) k_block = kWgradKBlockFactor * k_block;
  const double epilogue = wgrad                ? 2 * kTileCyclesTmaStore
                          : c.tma_store == 1   ? kTileCyclesTmaStore +
                                                   (waves_per_warpgroup == 2 ? kTileCyclesTwoWavesPerWarpgroup : 0.0)
                          : c.tma_store == 2 ? kTileCyclesTmaStore + kSlabWaitCycles * slabs_per_warpgroup
                                             : kTileCyclesDirectFixed +
                                                   kTileCyclesDirectPer128x128 * rows_a * c.block_n / (128.0 * 128.0);
  const double k_blocks = c.split_k == 2 ? (l.k_blocks + 1) / 2 : l.k_blocks;
  const double k_block_cycles = std::max({k_block, intake, l2}) * (1.0 + latency_penalty);
  const double tile_end = epilogue + (c.split_k == 2 ? kSplitExchangeCycles : 0.0);
  const double tile = k_blocks * k_block_cycles + tile_end;
  const double compute_us = (static_cast<double>(waves) * tile + kLaunchCycles) / (kClockGHz * 1e3);

  // Every input is read from HBM at least once and D written once (masked: every expert's B).
  // (1D1D: fp32 D, read and written when accumulating.) Dense: B counts twice when the rows
  // span two or more M blocks that do not share it by multicast. Measured at M = 128 (H200):
  // 4096x7168 with 64-row tiles (two M blocks) 14.7 us against 12.6 with one 128-row block
  // (the same bytes per CTA); 7168x2048 with 64x128 tiles 7.5 us unshared, 7.2 shared. Not
  // for grouped problems: masked 32 x 192 rows measured 9 % slower with it.
  // (k-grouped: the bytes of the dense weight gradient of all groups' rows, as fitted; only
  // its tiles are counted per group, since no tile spans two groups' D.)
  const int64_t bytes_groups = k_grouped ? 1 : groups;
  const int64_t rows_blocks = k_grouped ? (m + c.block_m - 1) / c.block_m : m_blocks_per_group;
  const double b_reads =
      bytes_groups > 1 ? 1.0
                       : std::max(1.0, static_cast<double>(std::min<int64_t>(rows_blocks, 2)) /
                                           static_cast<double>(c.multicast == 2 ? 2 : 1));
  const double bytes = static_cast<double>(m) * spec.k +
                       static_cast<double>(spec.n) * spec.k * bytes_groups * b_reads +
                       static_cast<double>(m) * spec.n * (wgrad ? 8 : 2);
  // HBM bandwidth is only reached with every SM streaming: one SM takes in about 1/132 of
  // it, so tiles that leave SMs idle (in the only or the last wave) stream more slowly.
  // Measured: masked 6 x 20 rows, N = 6144: 384 tiles 67 us, 192 tiles 75 us; decode
  // 7168x16384 at M = 1: 112 CTAs (64-column tiles) 33.3 us, 100 (144-column, split-K) 37.7 us.
  // Bandwidth-bound, the stream is bracketed by what does not overlap it: the first K block
  // arriving at this SM's share of HBM bandwidth (wide tiles wait longer for it), and the
  // last K block's math and the tile's end. Measured at M = 1, 24576x1536: 192-column tiles
  // (one wave) 12.5 us, 64-column ones (three waves) 11.5, at the same bytes.
  const double fill_cycles = l2_bytes_per_k_block(c, group_m) /
                             (kHbmBytesPerSecond / (kClockGHz * 1e9) / static_cast<double>(active));
  const double memory_us = bytes / kHbmBytesPerSecond * 1e6 * static_cast<double>(waves * slots) /
                               static_cast<double>(super_tiles) +
                           (fill_cycles + k_block_cycles + tile_end) / (kClockGHz * 1e3);
  return Prediction{compute_us, memory_us};
}

// Balanced grids: the same waves on fewer SMs draw less power and run at a higher clock.
// Measured (H200, isolated calls, three rounds, docs/PERFORMANCE.md log 55): M = 4096 2112x7168
// -2 %, 7168x16384 -1.6 %, 4096x7168 -0.8 %; weight gradient 7168x4096x16384 -4 %. Where HBM
// weighs more, every SM's share of its bandwidth counts more: 32768x512 at M = 4096 (model:
// HBM 0.56 of compute) +1.9 % on 128 of 132 SMs, weight gradient 24576x4096x1536 (0.56) +1 %.
int64_t persistent_clusters(const KernelSpec& spec, int64_t m, int64_t max_clusters, const DeviceTraits& device) {
  if (family(spec.kind).rows_on_device) return max_clusters;
  const KernelConfig& c = spec.config;
  const int64_t super_tiles = super_tile_count(c, (m + c.block_m - 1) / c.block_m, kernel_layout(spec).n_blocks);
  const Prediction p = predict(spec, m, device);
  if (p.memory_us < 0.5 * p.compute_us) return balanced_clusters(super_tiles, max_clusters);
  return std::min(super_tiles, max_clusters);
}

double predict_us(const KernelSpec& spec, int64_t m, const DeviceTraits& device, int64_t groups) {
  return predict(spec, m, device, groups).us();
}

std::vector<RankedConfig> rank_configs(const GemmProblem& problem, const DeviceTraits& device) {
  const KernelKind kind = problem.kind;
  const int64_t m = problem.m, n = problem.n, k = problem.k, groups = problem.groups;
  std::vector<RankedConfig> out;
  Prediction best_prediction{1e30, 0.0};
  const Family& f = family(kind);
  const int64_t group_m = (m + groups - 1) / std::max<int64_t>(groups, 1);  // rows of one group (m if 1)
  for (int block_m : {64, 128, 192, 256}) {
    // The family's own choice of tile heights (e.g. no 192-row tiles for the grouped forward
    // GEMMs, masked 256-row tiles only for small experts: see its module).
    if (!f.ranks_block_m(block_m, group_m)) continue;
    if (block_m > 64 && group_m <= block_m / 2) continue;  // half of every tile would be padding
    // Masked experts of more than 64 rows: 64-row tiles (one math warpgroup) measured
    // slower than 128-row ones with their padding (32 x 192 rows: 289 vs 247 us).
    if (f.m_grouping != 0 && groups > 1 && block_m == 64 && group_m > 64) continue;
    for (int block_n : kBlockNs) {
      for (int multicast : {0, 1, 2}) {
        if (multicast > 0 && device.num_sms % 2 != 0) continue;
        // A single M block: A is small and a B pair would be half padding.
        if (multicast > 0 && m <= block_m) continue;
        // tma_store = 2 (one slab buffer, one more stage) measured no better than 1 on
        // the H200 within noise, except on 256-row tiles with a long K loop (see
        // long_k_loop below); elsewhere it stays available to explicit configs and the tuner.
        for (int tma_store : {1, 0, 2})
        for (int split_k : {1, 2}) {
          // Split-K only for problems whose tiles leave SMs idle.
          if (split_k == 2 && (multicast != 0 || tile_count(m, n, block_m, block_n) >= device.num_sms)) continue;
          // A family whose kernel takes K at run time (k-grouped) is ranked as the family
          // it names (the dense weight gradient of all groups' rows) at the expected K per group.
          const bool ranked_as_other = f.ranked_as != kind;
          if (tma_store == 2 &&
              !long_k_loop(block_m, k, f.m_grouping, tile_count(m, n, block_m, block_n), device.num_sms))
            continue;
          KernelSpec spec{f.ranked_as, n, k,
                          KernelConfig{block_m, block_n, 2, 8, multicast, tma_store, split_k}};
          // The deepest pipeline that fits (more stages never hurt a single CTA per SM).
          for (int stages = kMaxStages; stages >= 2; --stages) {
            spec.config.stages = stages;
            if (kernel_layout(spec).smem_bytes <= device.max_smem_bytes) break;
          }
          // A tile whose two stages exceed the device's shared memory cannot run there.
          if (kernel_layout(spec).smem_bytes > device.max_smem_bytes) continue;
          if (!spec_illegal_reason(spec).empty()) continue;
          const Prediction prediction = predict(spec, m, device, groups, f.k_at_run_time);
          // TMA stores with block_n % 64 != 0 (the last slab overlaps the one before, some
          // columns go out twice) only for tiles of two math warpgroups where the tensor
          // cores bound the time: measured 5 % faster than direct stores at M = 4096
          // (576x7168, 144 columns), but no faster where HBM bounds it, which the model
          // cannot resolve (24576x1536 at M = 64, 96 columns: 12.2 against 11.9 us for 64;
          // 7168x2048 at M = 128, 64x112 tiles: 7.3 against 7.2 us for 64x128; masked
          // 20-row experts at 112 columns: 71.3 against 69.7 us direct).
          if (tma_store != 0 && block_n % 64 != 0 &&
              (block_m < 128 || prediction.compute_us < 1.1 * prediction.memory_us))
            continue;
          const double predicted = prediction.us();
          // A dense weight gradient bound by HBM (its fp32 D read and written) rasterizes in
          // stripes as wide as N, so that each wave reads and writes whole rows of D:
          // 32768x4096x512 measured 315.2-315.8 us against 330.1-330.5 with stripes of 8
          // N blocks (three runs). (Compute-bound shapes: no gain measured; not for k-grouped.)
          if (f.wide_stripes_when_memory_bound && prediction.memory_us >= prediction.compute_us)
            spec.config.group_n = std::min<int>(64, static_cast<int>((n + block_n - 1) / block_n));
          // Contiguous stripes along M count super M blocks: a B pair's stripe of 4 spans the 8 M
          // blocks of an unpaired one (4 x 8192 rows, 4096x2048: DRAM reads 200 -> 144 MB).
          if (multicast == 2 && kernel_layout(spec).stripes_along_m) spec.config.group_n = 4;
          if (ranked_as_other) {
            spec.kind = kind;
            if (f.k_at_run_time) spec.k = 0;
            if (!spec_illegal_reason(spec).empty()) continue;
          }
          out.push_back({spec, predicted});
          if (predicted < best_prediction.us()) best_prediction = prediction;
        }
      }
    }
  }
  FP8GEMM_CHECK(!out.empty(), "no legal config for n={} k={}", n, k);
  // Predictions within ~1 % of each other fall in one bucket; inside a bucket prefer
  // no cluster (simpler scheduling), then less L2 traffic per FLOP, then the TMA-store
  // epilogue, then the deeper pipeline.
  double best = out.front().predicted_us;
  for (const RankedConfig& r : out) best = std::min(best, r.predicted_us);
  auto bucket = [best](const RankedConfig& r) {
    return static_cast<int64_t>(std::floor(std::log(r.predicted_us / best) / std::log(1.01)));
  };
  auto traffic = [m](const RankedConfig& r) {
    const KernelConfig& c = r.spec.config;
    return l2_bytes_per_k_block(c, m) / (static_cast<double>(c.block_m) * c.block_n);
  };
  // On long K loops of 256-row tiles, A multicast first: see long_k_loop.
  auto multicast_rank = [m, n, k, &f, &device](const RankedConfig& r) {
    const KernelConfig& c = r.spec.config;
    if (long_k_loop(c.block_m, k, f.m_grouping, tile_count(m, n, c.block_m, c.block_n), device.num_sms))
      return c.multicast == 1 ? 0 : c.multicast == 0 ? 1 : 2;
    if (contiguous_b_pairs(f.m_grouping, c.block_m, k, tile_count(m, n, c.block_m, c.block_n), device.num_sms))
      return c.multicast == 2 ? 0 : c.multicast == 0 ? 1 : 2;
    return c.multicast == 0 ? 0 : 1;
  };
  // Among equal predictions of a problem that the tensor cores bound, with rows for
  // several tiles of any height, the tiling that computes less padding (tiles x tile size):
  // the cost model counts whole waves and cannot tell those tilings apart, measured they
  // follow the padding (M = 4097 / 4224 / 4352 rows against 192x128 and 128x192 tiles;
  // 2112x7168 at M = 4096: 128x192 tiles, no padding, 2 % ahead of 192x128; docs/PERFORMANCE.md,
  // log 52 and 54).
  const bool padding_decides = group_m >= 256 && best_prediction.compute_us > best_prediction.memory_us;
  auto computed = [&](const RankedConfig& r) {
    if (!padding_decides) return 0.0;
    const KernelConfig& c = r.spec.config;
    const int64_t m_blocks = std::max<int64_t>(groups, 1) * ((group_m + c.block_m - 1) / c.block_m);
    return static_cast<double>(m_blocks * c.block_m) * static_cast<double>((n + c.block_n - 1) / c.block_n * c.block_n);
  };
  std::stable_sort(out.begin(), out.end(), [&](const RankedConfig& x, const RankedConfig& y) {
    if (bucket(x) != bucket(y)) return bucket(x) < bucket(y);
    if (computed(x) != computed(y)) return computed(x) < computed(y);
    if (multicast_rank(x) != multicast_rank(y)) return multicast_rank(x) < multicast_rank(y);
    if (traffic(x) != traffic(y)) return traffic(x) < traffic(y);
    if ((x.spec.config.tma_store != 0) != (y.spec.config.tma_store != 0)) return x.spec.config.tma_store != 0;
    return x.spec.config.stages > y.spec.config.stages;
  });
  // A first pick that a_pairs_on_long_k_loop names runs with A pairs: its twin moves to the
  // front (a rule on the pick, not on the ranking: on wider tiles of the same bucket the pair
  // is no gain, and 192x112 pairs stay behind 192x128 tiles where those lead).
  const KernelConfig& first = out.front().spec.config;
  if (f.m_grouping == 0 && !f.fp32_output && first.multicast == 0 && first.split_k == 1 &&
      a_pairs_on_long_k_loop(first.block_m, first.block_n, k, tile_count(m, n, first.block_m, first.block_n),
                             device.num_sms)) {
    auto twin = std::find_if(out.begin(), out.end(), [&first](const RankedConfig& r) {
      const KernelConfig& c = r.spec.config;
      return c.multicast == 1 && c.block_m == first.block_m && c.block_n == first.block_n &&
             c.tma_store == first.tma_store && c.split_k == 1;
    });
    if (twin != out.end()) std::rotate(out.begin(), twin, twin + 1);
  }
  return out;
}

}  // namespace fp8gemm::detail
