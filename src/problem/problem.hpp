#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>

namespace fp8gemm::detail {

// Which kernel family a problem needs.
enum class KernelKind {
  Gemm1D2D,         // D bf16 = A (1x128 scales) x B^T (128x128 scales)
  Gemm1D1D,         // D fp32 = C + A (1x128 scales) x B^T (1x128 scales): weight gradient
  Quantize1x128,    // bf16 -> e4m3 with a scale per 128 values of a row
  Quantize128x128,  // bf16 -> e4m3 with a scale per 128x128 block
  QuantizeTransposed1x128,  // bf16 [T, H] -> e4m3 [H, T] with a scale per 128 tokens
  TransposeFp8,             // e4m3 [R, C] -> [C, R], exact
  CopyScales,               // fp32 scales from one layout to another
  // Gemm1D2D over G experts in one launch (B stacked [G * N, K]):
  GroupedContiguous,  // rows of all experts stacked in A, a group index per row on the device
  GroupedMasked,      // A [G * max_m, K], expert g uses its first masked_m[g] rows (device)
  // Gemm1D1D over G groups in one launch: D [G, M, N], group g over its own columns of A
  // and B (their counts on the device). K is a run-time value: the spec's k is 0.
  KGrouped,
};

// What a kind of kernel means beyond these two (its capabilities, legality, source): its
// family, families/family.hpp.
bool is_gemm(KernelKind kind);
const char* kind_name(KernelKind kind);

// The tile configuration of one kernel: what a heuristic or tuner chooses.
struct KernelConfig {
  int block_m = 128;  // 64 (one math warpgroup), 128 or 256 (two), 192 (three)
  int block_n = 128;  // multiple of 16 (of 8 for the weight gradient), <= 192 (<= 128 with block_m 192 or 256)
  int stages = 4;     // TMA pipeline depth
  int group_n = 8;    // rasterization: tiles walk stripes of this many (super) N blocks (M blocks: KernelLayout::stripes_along_m)
  // 0: no cluster. 1: clusters of two CTAs on neighbouring N blocks share A (TMA
  // multicast). 2: two CTAs on neighbouring M blocks share B.
  int multicast = 0;
  // D leaves through 128-byte-swizzled 64x64 shared slabs and TMA stores (block_n % 64
  // == 0): 1 = a buffer per slab of the tile (BLOCK_M x BLOCK_N x 2 bytes; the stores
  // overlap the next tile), 2 = one 8 KB buffer per math warpgroup (slabs wait for each
  // other; leaves shared memory to the pipeline). 0: the math threads store directly.
  int tma_store = 0;
  // 2: the two CTAs of a cluster split K for the same tile and add their partial sums
  // through distributed shared memory (small M: more CTAs busy). Excludes multicast.
  int split_k = 1;

  bool operator==(const KernelConfig& o) const {
    return block_m == o.block_m && block_n == o.block_n && stages == o.stages &&
           group_n == o.group_n && multicast == o.multicast && tma_store == o.tma_store && split_k == o.split_k;
  }
};

// Identifies one compiled kernel: the kind, the dimensions baked in (N and K; M stays
// a run-time value) and the config.
struct KernelSpec {
  KernelKind kind = KernelKind::Gemm1D2D;
  int64_t n = 0;  // GEMMs: N and K baked in; quantization kernels: 0 (sizes at run time)
  int64_t k = 0;
  KernelConfig config;  // GEMMs only
  // Quantization: 1 = power-of-two scales. Dense 1D2D GEMM: 1 = "constant B" (B of the
  // first stages loaded before the dependency wait; see constant_b_spec).
  int option = 0;

  bool operator==(const KernelSpec& o) const {
    return std::tie(kind, n, k, option) == std::tie(o.kind, o.n, o.k, o.option) && config == o.config;
  }
  // Readable, file-name safe: e.g. "gemm1d2d_n7168_k2048_bm128_bn112_s5_g8" (plus
  // "_mcA"/"_mcB" with multicast, "_ts" with the TMA-store epilogue, "_sk2" split-K,
  // "_cb" constant B).
  std::string slug() const;
};

struct KernelSpecHash {
  size_t operator()(const KernelSpec& s) const;
};

// Everything derived from a spec, computed in one place for the code generator,
// the launcher and the legality checks.
struct KernelLayout {
  int math_warpgroups = 0;
  int threads = 0;             // math warpgroups + one TMA producer warpgroup
  int cluster_size = 1;        // CTAs per cluster (2 with multicast or split-K)
  int split_exchange_bytes = 0;  // split-K: the partner's partial sums of this CTA's half
  int a_box_rows = 0;          // rows of A (B) one CTA's TMA load brings: half the tile
  int b_box_rows = 0;          //   when that operand is multicast
  int producer_registers = 0;  // setmaxnreg targets
  int math_registers = 0;
  int a_stage_bytes = 0;       // BLOCK_M x 128 fp8
  int b_stage_bytes = 0;       // BLOCK_N x 128 fp8
  int sfa_stage_bytes = 0;     // BLOCK_M fp32
  bool tma_store = false;      // D leaves through shared slabs and TMA
  int d_tile_bytes = 0;        // those slab buffers
  int smem_bytes = 0;          // dynamic shared memory, alignment slack included
  int k_blocks = 0;            // ceil(K / 128)
  int n_blocks = 0;            // ceil(N / BLOCK_N)
  bool stripes_along_m = false;  // 1D2D tile order: stripes of M blocks, N inside (else of N blocks)
};

KernelLayout kernel_layout(const KernelSpec& spec);

// The units a persistent grid walks for `m_blocks` x `n_blocks` output tiles: with multicast a
// cluster takes a pair of tiles (two M blocks sharing B, or two N blocks sharing A; a partner
// past the end computes zeros), otherwise one CTA one tile. (Split-K runs one tile on both CTAs
// of its cluster: one unit.)
int64_t super_tile_count(const KernelConfig& c, int64_t m_blocks, int64_t n_blocks);
// The persistent grid (in clusters) for super_tiles on at most max_clusters: as many as
// the waves need and no more, so that every cluster walks the same number of super tiles
// (896 on 132: 128 clusters of 7 each, not 132 of 6 or 7; the SMs left idle draw no power).
int64_t balanced_clusters(int64_t super_tiles, int64_t max_clusters);

// Shared memory a block may use on sm_90 (227 KB), and the slack kept to align
// the dynamic shared memory base to 1024 bytes (128-byte swizzle atoms).
constexpr int kMaxSmemBytes = 232448;

// Largest M, N and K accepted: tile and row arithmetic in the kernels is 32-bit, and
// M + block size (and M + rasterization group) must still fit.
// Leading dimensions and scale strides are bounded the same way (elements). (The public
// fp8gemm::kMaxDimension, kMaxK1D2D and kMaxTiles are these; validate.cpp asserts it.)
constexpr int64_t kMaxDimension = (int64_t(1) << 31) - 1024;
constexpr int kSmemAlignSlack = 1024;

// Largest K of the kernels with 128x128 B scales (dense, m-grouped contiguous and masked):
// a tile's B scales for every K block sit in shared memory (two buffers of up to three
// rows), and beyond about 1.5 M no config fits beside the pipeline. The weight-gradient
// kernels load their scales per stage and take K up to kMaxDimension.
constexpr int64_t kMaxK1D2D = int64_t(1) << 20;

// Largest number of output tiles of one call, counted at the smallest tile (64 x 16) for
// every group: the persistent kernels' tile indices are 32-bit.
constexpr int64_t kMaxTiles = kMaxDimension;

// Whether (rows / 64 + groups) x (N / 16 + 1) tiles stay within kMaxTiles: the bound on the
// tiles of a call whose rows are split over `groups` problems (1 for a single one).
bool tile_count_fits(int64_t rows, int64_t n, int64_t groups);

// Stages of B a constant-B kernel (Gemm1D2D, option 1) loads before it waits for the
// previous kernel in the stream.
constexpr int kConstantBStages = 2;
// Contiguous grouped problems without A pairs walk their tiles in stripes of M blocks (N
// inside a stripe: A is read from HBM once, each expert's B must stay in L2 across its
// stripes) while one expert's B (N x K bytes) is at most this; past it, in stripes of N
// blocks as dense problems do (B read once, A once per stripe). Measured (H100, docs/
// PERFORMANCE.md log 139): 6144x7168 (44 MB) along N +1.2-2.4 %; along M it read 2.2-2.6 GB
// from DRAM, the dense walk of the same tile and size 1.4 GB (ncu); at 17-22 MB (4096x4096,
// 7168x3072) the two orders lay within the noise.
constexpr int64_t kAlongMMaxExpertBBytes = int64_t(24) << 20;

// The kernel gemm_fp8_nt runs for M rows with GemmOptions::b_constant instead of `spec`:
// the same config with option 1 where that was measured to pay (dense, M <= 128 in one M
// block, no multicast, kernels that hold an SM alone), else `spec` itself.
KernelSpec constant_b_spec(const KernelSpec& spec, int64_t m);

// The spec a slug names (KernelSpec::slug() read back), or nullopt when `slug` is not one
// that slug() writes.
std::optional<KernelSpec> spec_from_slug(const std::string& slug);

// Why a spec cannot be compiled/launched, or "" if it can.
std::string spec_illegal_reason(const KernelSpec& spec);

// JSON round trip (cache entry metadata, tuning database).
std::string spec_to_json(const KernelSpec& spec);
KernelSpec spec_from_json(const std::string& json);  // throws Error(InvalidArgument)

}  // namespace fp8gemm::detail
