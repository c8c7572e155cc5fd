#pragma once

// Tile schedules: which tile a persistent CTA computes next, and where its rows and K
// blocks lie. Every role of a CTA (TMA producer, scale loader, math warpgroups, storers)
// walks its own copy of the same schedule and so agrees on every tile without talking to
// the others. Each kernel has one schedule object per role: ForwardTiles (gemm_1d2d.cuh:
// dense, contiguous, masked) and WgradTiles (gemm_1d1d.cuh: dense and k-grouped). The tile
// order (super tiles in stripes) is shared by both; the forward kernel's rows (dense,
// contiguous) come from tile_rows, the masked walk (MaskedWalk) and the k-grouped one
// (GroupWalk) read the group data as they go.

#include "fp8gemm/ptx.cuh"

namespace fp8gemm_dev {

// Tile order. With a cluster of two CTAs, pairs of tiles that share an operand form
// one "super tile": kPairN = 2 pairs neighbouring N blocks (they share A), kPairM = 2
// neighbouring M blocks (they share B). Super tiles are walked in stripes of kGroup
// blocks of one dimension (the striped one, `striped_blocks` of them), the other
// dimension (`other_blocks`) inside a stripe, so that CTAs running at the same time share
// the tiles of both operands in L2; the last stripe may be narrower. Returns the tile's
// block along the other dimension and along the striped one. A partner tile past the end
// of M or N (an odd block count) is computed on zero-filled operands and not stored.
template <int kGroup>
__device__ __forceinline__ void stripe_coords(int tile, int striped_blocks, int other_blocks, int& other,
                                              int& striped) {
  const int per_stripe = other_blocks * kGroup;
  const int stripe = tile / per_stripe;
  const int first = stripe * kGroup;
  const int width = imin(kGroup, striped_blocks - first);
  const int within = tile - stripe * per_stripe;
  other = within / width;
  striped = first + within - other * width;
}

// Stripes of kGroupN super-N-blocks, M inside a stripe.
template <int kSuperN, int kGroupN>
__device__ __forceinline__ void super_tile_coords(int super_tile, int super_m, int& sm, int& sn) {
  stripe_coords<kGroupN>(super_tile, kSuperN, super_m, sm, sn);
}

// The same walk with the roles swapped: stripes of kGroupM super-M-blocks, N inside a
// stripe, so that the A rows of a stripe stay in L2 while every N block passes over them.
// Contiguous problems walk this way while one expert's B stays in L2 across its stripes
// (kernel_layout, kAlongMMaxExpertBBytes): their A (all experts' rows) is the large operand,
// read from HBM once instead of once per N stripe (4 x 8192 rows, 4096x2048: 257 -> 166 MB
// of DRAM reads). An expert's B that does not stay (6144x7168, 44 MB) is read again by every
// M stripe (ncu: 2.2-2.6 GB of DRAM reads; the dense walk of the same tile and size 1.4 GB),
// so those problems walk along N.
template <int kSuperN, int kGroupM>
__device__ __forceinline__ void super_tile_coords_along_m(int super_tile, int super_m, int& sm, int& sn) {
  stripe_coords<kGroupM>(super_tile, super_m, kSuperN, sn, sm);
}

// Where an M block of a problem lies. kGrouping 0: dense, rows m_block * kBlockM onwards.
// 1 (contiguous): the same rows; the expert is the group index of the block's first row
// (segments start at multiples of 128 rows and kBlockM <= 128, so a block never mixes
// experts when the layout is valid); an index outside [0, groups) (a padding block)
// computes with expert 0, and its rows are zeroed in the epilogue. (Masked problems,
// kGrouping 2, walk only their active tiles and get these from next_masked_tile.)
struct TileRows {
  int row0;     // first row of the block in A and D
  int limit;    // rows at or past this are not stored
  int group;    // expert whose B and B scales are used (0 when dense)
};

template <int kGrouping, int kBlockM>
__device__ __forceinline__ int grouped_m_blocks(int m, int groups, int group_rows) {
  return kGrouping == 2 ? groups * ((group_rows + kBlockM - 1) / kBlockM) : (m + kBlockM - 1) / kBlockM;
}

__device__ __forceinline__ int contiguous_group(const int* group_info, int row0, int groups) {
  const int g = ldg_s32(group_info + row0);
  return g < 0 || g >= groups ? 0 : g;
}

template <int kGrouping, int kBlockM>
__device__ __forceinline__ TileRows tile_rows(int m_block, int m, const int* group_info, int groups) {
  static_assert(kGrouping == 0 || kGrouping == 1, "masked tiles come from next_masked_tile");
  const int row0 = m_block * kBlockM;
  if constexpr (kGrouping == 0) {
    return {row0, m, 0};
  } else {
    return {row0, m, contiguous_group(group_info, row0, groups)};
  }
}

// A contiguous B pair (two neighbouring M blocks, the even one always inside M): the CTA's
// rows and expert; share_b: both blocks use that expert (then they share B). A partner past
// M takes the even block's expert (its rows are neither read from group_info nor stored).
template <int kBlockM>
__device__ __forceinline__ TileRows contiguous_pair_rows(int m_block, int m, const int* group_info, int groups,
                                                         bool& share_b) {
  const int even = m_block & ~1;
  const int g_even = contiguous_group(group_info, even * kBlockM, groups);
  const int odd_row0 = (even + 1) * kBlockM;
  const int g_odd = odd_row0 < m ? contiguous_group(group_info, odd_row0, groups) : g_even;
  share_b = g_even == g_odd;
  return {m_block * kBlockM, m, m_block == even ? g_even : g_odd};
}

// K blocks of a group of k columns (0 for an empty group or a bad negative value).
__device__ __forceinline__ int group_k_blocks(int k) { return k > 0 ? k / 128 + (k % 128 != 0) : 0; }

// The K blocks of the group a tile belongs to, found by walking the groups in order
// (tiles only move forward, so each step reads one more group_k entry). Blocks past
// `total` (more columns claimed on the device than A has) are cut off.
struct GroupWalk {
  int group = 0, first = 0, count = 0;
  __device__ __forceinline__ void start(const int* group_k, int total) {
    count = imin(group_k_blocks(ldg_s32(group_k)), total);
  }
  __device__ __forceinline__ void to(int target, const int* group_k, int total) {
    while (group < target) {
      first = imin(first + count, total);
      ++group;
      count = imin(group_k_blocks(ldg_s32(group_k + group)), total - first);
    }
  }
};

// The weight gradient's tiles (gemm_1d1d.cuh), the same walk for every role. Dense: the
// m_blocks x kNBlocks tiles in stripes of kGroupN N blocks, each with all kKBlocks K blocks.
// k-grouped (kKGrouped): those tiles per group, group after group, each with its group's K
// blocks (GroupWalk over group_k, cut off at total_k_blocks). at(tile) moves to tile `tile`
// (tiles only move forward) and gives its blocks; group(), k_first() and k_blocks() then
// describe it.
template <int kNBlocks, int kGroupN, int kKBlocks, bool kKGrouped>
struct WgradTiles {
  int m_blocks, group_tiles, count;  // count: tiles of all groups
  const int* group_k;
  int total_k_blocks;
  GroupWalk walk;
  __device__ __forceinline__ WgradTiles(int m_blocks_, int groups, const int* group_k_, int total_k_blocks_)
      : m_blocks(m_blocks_),
        group_tiles(m_blocks_ * kNBlocks),
        count(kKGrouped ? group_tiles * groups : group_tiles),
        group_k(group_k_),
        total_k_blocks(total_k_blocks_) {
    if (kKGrouped) walk.start(group_k, total_k_blocks);
  }
  __device__ __forceinline__ void at(int tile, int& m_block, int& n_block) {
    if (kKGrouped) {
      walk.to(tile / group_tiles, group_k, total_k_blocks);
      tile -= walk.group * group_tiles;
    }
    super_tile_coords<kNBlocks, kGroupN>(tile, m_blocks, m_block, n_block);
  }
  __device__ __forceinline__ int group() const { return kKGrouped ? walk.group : 0; }
  __device__ __forceinline__ int k_first() const { return kKGrouped ? walk.first : 0; }
  __device__ __forceinline__ int k_blocks() const { return kKGrouped ? walk.count : kKBlocks; }
};

// Masked problems (the forward kernel's kGrouping 2): the CTAs walk only the active tiles,
// group after group. Group g holds ceil(masked_m[g] / kBlockM / kPairM) x kSuperN super tiles
// (rasterized within the group), so that the rows past masked_m cost nothing; masked_m
// values are clamped to [0, group_rows]. Tiles only move forward, so each step reads one
// more masked_m entry. With B pairs (kPairM 2) a super tile is two neighbouring M blocks of
// one group: both use its B; a partner block past masked_m stores nothing.
template <int kBlockM, int kSuperN, int kPairM>
struct MaskedWalk {
  int group = 0, first = 0, blocks = 0, valid = 0;  // first: the group's first tile; blocks: its super M blocks;
                                                    // valid: its rows
  __device__ __forceinline__ static int valid_rows(const int* masked_m, int g, int group_rows) {
    return imin(imax(ldg_s32(masked_m + g), 0), group_rows);
  }
  __device__ __forceinline__ static int super_blocks(int valid) {
    return ((valid + kBlockM - 1) / kBlockM + kPairM - 1) / kPairM;
  }
  __device__ __forceinline__ void start(const int* masked_m, int group_rows) {
    valid = valid_rows(masked_m, 0, group_rows);
    blocks = super_blocks(valid);
  }
  // Moves to the group that holds tile `st`; false when `st` lies past the last group.
  __device__ __forceinline__ bool to(int st, const int* masked_m, int groups, int group_rows) {
    while (st >= first + blocks * kSuperN) {
      first += blocks * kSuperN;
      if (++group >= groups) return false;
      valid = valid_rows(masked_m, group, group_rows);
      blocks = super_blocks(valid);
    }
    return true;
  }
};

// The forward kernel's tiles (gemm_1d2d.cuh). pair_tile_coords: this CTA's tile of super tile
// `super_tile` (with a CTA pair, `rank` picks its half); kAlongM: stripes of kGroupN M blocks
// (super_tile_coords_along_m), else of kGroupN N blocks. next_masked_tile: the coordinates and
// rows of this CTA's tile `st` of a masked problem, walking its active tiles with `w`, or
// false past the last one.
template <int kSuperN, int kGroupN, int kPairM, int kPairN, bool kAlongM>
__device__ __forceinline__ void pair_tile_coords(int super_tile, int super_m, u32 rank, int& m_block, int& n_block) {
  int sm, sn;
  if constexpr (kAlongM)
    super_tile_coords_along_m<kSuperN, kGroupN>(super_tile, super_m, sm, sn);
  else
    super_tile_coords<kSuperN, kGroupN>(super_tile, super_m, sm, sn);
  m_block = sm * kPairM + (kPairM > 1 ? static_cast<int>(rank) : 0);
  n_block = sn * kPairN + (kPairN > 1 ? static_cast<int>(rank) : 0);
}

template <int kGroupN, int kBlockM, int kSuperN, int kPairM>
__device__ __forceinline__ bool next_masked_tile(MaskedWalk<kBlockM, kSuperN, kPairM>& w, int st, const int* masked_m,
                                                 int groups, int group_rows, u32 rank, int& m_block, int& n_block,
                                                 TileRows& tr) {
  if (!w.to(st, masked_m, groups, group_rows)) return false;
  super_tile_coords<kSuperN, kGroupN>(st - w.first, w.blocks, m_block, n_block);
  if constexpr (kPairM > 1) m_block = m_block * kPairM + static_cast<int>(rank);
  const int base = w.group * group_rows;
  tr = TileRows{base + m_block * kBlockM, base + w.valid, w.group};
  return true;
}

// The forward kernel's tiles (gemm_1d2d.cuh), the same walk for every role of a CTA (each
// constructs its own after the dependency wait). Dense and contiguous: the super tiles below
// num_super, this CTA's tile of each (pair_tile_coords), its rows from tile_rows. Masked
// (kGrouping 2): only the active tiles, group after group (MaskedWalk, next_masked_tile).
// next(st, ...) gives super tile st's blocks and rows, or false past the last tile.
template <int kGrouping, int kBlockM, int kSuperN, int kGroupN, int kPairM, int kPairN, bool kAlongM>
struct ForwardTiles {
  int m, super_m, num_super;
  const int* group_info;
  int groups, group_rows;
  u32 rank;
  bool share_b = true;  // contiguous B pairs: the last tile's two M blocks use one expert
  MaskedWalk<kBlockM, kSuperN, kPairM> walk;
  __device__ __forceinline__ ForwardTiles(int m_, int super_m_, int num_super_, const int* group_info_, int groups_,
                                          int group_rows_, u32 rank_)
      : m(m_),
        super_m(super_m_),
        num_super(num_super_),
        group_info(group_info_),
        groups(groups_),
        group_rows(group_rows_),
        rank(rank_) {
    if constexpr (kGrouping == 2) walk.start(group_info, group_rows);
  }
  __device__ __forceinline__ bool next(int st, int& m_block, int& n_block, TileRows& tr) {
    if constexpr (kGrouping == 2) {
      return next_masked_tile<kGroupN>(walk, st, group_info, groups, group_rows, rank, m_block, n_block, tr);
    } else {
      if (st >= num_super) return false;
      pair_tile_coords<kSuperN, kGroupN, kPairM, kPairN, kAlongM>(st, super_m, rank, m_block, n_block);
      if constexpr (kGrouping == 1 && kPairM == 2)
        tr = contiguous_pair_rows<kBlockM>(m_block, m, group_info, groups, share_b);
      else
        tr = tile_rows<kGrouping, kBlockM>(m_block, m, group_info, groups);
      return true;
    }
  }
};

}  // namespace fp8gemm_dev
