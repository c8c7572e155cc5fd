// The kernels' tile schedules (kernels/fp8gemm/schedule.cuh) walked on the host: every
// CTA of a persistent grid walks its own copy, as each role of the kernel does, and together
// they must store every output tile exactly once, with the rows and the expert the kernel's
// contract gives it (forward: dense, contiguous, masked, CTA pairs sharing A or B; weight
// gradient: dense and k-grouped with each group's K blocks). The header is
// compiled against a host stand-in of its device helpers (schedule_host/fp8gemm/ptx.cuh).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fp8gemm/schedule.cuh"

namespace {

using fp8gemm_dev::ForwardTiles;
using fp8gemm_dev::TileRows;

struct Stored {
  int m_block, n_block, row0, limit, group;
};

// The tiles a grid of `grid` CTAs stores (clusters of two when the schedule pairs tiles),
// walked as the kernel walks them: CTA c starts at its cluster's index and steps by the
// cluster count. Each tile is asked for twice, as the math warps ask for it (before the K
// loop and again in the epilogue): both answers must agree. A partner tile past M or N
// stores nothing.
template <int kGrouping, int kBlockM, int kNBlocks, int kGroupN, int kPairM, int kPairN, bool kAlongM>
std::vector<Stored> walk(int grid, int m, const std::vector<int>& group_info, int groups, int group_rows) {
  constexpr int kSuperN = (kNBlocks + kPairN - 1) / kPairN;
  constexpr int kCluster = kPairM * kPairN > 1 ? 2 : 1;
  const int m_blocks = fp8gemm_dev::grouped_m_blocks<kGrouping, kBlockM>(m, groups, group_rows);
  const int super_m = (m_blocks + kPairM - 1) / kPairM;
  const int num_super = super_m * kSuperN;
  gridDim.x = static_cast<unsigned>(grid);
  std::vector<Stored> out;
  for (int cta = 0; cta < grid; ++cta) {
    const unsigned rank = static_cast<unsigned>(cta % kCluster);
    ForwardTiles<kGrouping, kBlockM, kSuperN, kGroupN, kPairM, kPairN, kAlongM> tiles(
        m, super_m, num_super, group_info.data(), groups, group_rows, rank);
    for (int st = cta / kCluster;; st += grid / kCluster) {
      int m_block = -1, n_block = -1;
      TileRows tr{};
      if (!tiles.next(st, m_block, n_block, tr)) break;
      int m_again = -1, n_again = -1;
      TileRows again{};
      EXPECT_TRUE(tiles.next(st, m_again, n_again, again));
      EXPECT_EQ(std::tie(m_block, n_block, tr.row0, tr.limit, tr.group),
                std::tie(m_again, n_again, again.row0, again.limit, again.group));
      // (A masked B pair's partner block past masked_m stores nothing: every row is past the limit.)
      const bool masked_partner_past = kGrouping == 2 && kPairM > 1 && tr.row0 >= tr.limit;
      if (m_block < m_blocks && n_block < kNBlocks && !masked_partner_past)
        out.push_back({m_block, n_block, tr.row0, tr.limit, tr.group});
    }
  }
  return out;
}

// Every (M block, N block) of a dense or contiguous problem stored once.
void expect_each_tile_once(const std::vector<Stored>& stored, int m_blocks, int n_blocks) {
  std::map<std::pair<int, int>, int> count;
  for (const Stored& s : stored) ++count[{s.m_block, s.n_block}];
  EXPECT_EQ(static_cast<int>(count.size()), m_blocks * n_blocks);
  for (const auto& [tile, n] : count) {
    EXPECT_EQ(n, 1) << "tile " << tile.first << "," << tile.second;
    EXPECT_LT(tile.first, m_blocks);
    EXPECT_LT(tile.second, n_blocks);
  }
}

// Segments padded to 128 rows, -1 on the padding, experts in the given order.
std::vector<int> contiguous_layout(const std::vector<int>& rows, const std::vector<int>& order) {
  std::vector<int> map;
  for (int g : order) {
    map.insert(map.end(), rows[static_cast<size_t>(g)], g);
    map.insert(map.end(), (128 - rows[static_cast<size_t>(g)] % 128) % 128, -1);
  }
  return map;
}

int expert_of_block(const std::vector<int>& map, int row0, int groups) {
  const int g = map[static_cast<size_t>(row0)];
  return g < 0 || g >= groups ? 0 : g;
}

}  // namespace

TEST(TileSchedule, DenseEveryTileOnceOnAnyGrid) {
  const std::vector<int> none;
  for (int grid : {1, 7, 132}) {
    for (int m : {1, 128, 4096, 4097, 9000}) {
      SCOPED_TRACE(testing::Message() << "grid " << grid << " m " << m);
      expect_each_tile_once(walk<0, 128, 11, 8, 1, 1, false>(grid, m, none, 1, 0), (m + 127) / 128, 11);
      expect_each_tile_once(walk<0, 256, 56, 8, 1, 1, false>(grid, m, none, 1, 0), (m + 255) / 256, 56);
      // Rows: each tile from its block's first row, stored up to M.
      for (const Stored& s : walk<0, 64, 5, 16, 1, 1, false>(grid, m, none, 1, 0)) {
        EXPECT_EQ(s.row0, s.m_block * 64);
        EXPECT_EQ(s.limit, m);
        EXPECT_EQ(s.group, 0);
      }
    }
  }
}

// CTA pairs: A shared by two N blocks (odd N block counts leave a partner past N), B by two
// M blocks (odd M block counts leave one past M); clusters of two walk super tiles.
TEST(TileSchedule, PairsEveryTileOnce) {
  const std::vector<int> none;
  for (int grid : {2, 66, 132}) {
    for (int m : {256, 700, 4096}) {
      SCOPED_TRACE(testing::Message() << "grid " << grid << " m " << m);
      expect_each_tile_once(walk<0, 256, 11, 8, 1, 2, false>(grid, m, none, 1, 0), (m + 255) / 256, 11);
      expect_each_tile_once(walk<0, 128, 11, 8, 2, 1, false>(grid, m, none, 1, 0), (m + 127) / 128, 11);
    }
  }
}

// Contiguous tiles, walked in stripes along M or N: every block once, with the expert of its first
// row (a padding block computes with expert 0), rows up to M.
TEST(TileSchedule, ContiguousBlocksTakeTheirFirstRowsExpert) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int groups = 1 + static_cast<int>(rng() % 9);
    std::vector<int> rows(static_cast<size_t>(groups)), order(static_cast<size_t>(groups));
    for (int g = 0; g < groups; ++g) {
      rows[static_cast<size_t>(g)] = static_cast<int>(rng() % 3000);
      order[static_cast<size_t>(g)] = g;
    }
    std::shuffle(order.begin(), order.end(), rng);
    const std::vector<int> map = contiguous_layout(rows, order);
    const int m = static_cast<int>(map.size());
    if (m == 0) continue;
    SCOPED_TRACE(testing::Message() << "trial " << trial << " groups " << groups << " m " << m);
    // Both tile orders: stripes along M (an expert's B small enough to stay in L2) and along N;
    // alone and in CTA pairs sharing B (two neighbouring M blocks per cluster, as planned: stripes
    // of 4 super M blocks along M, of 8 N blocks along N; a pair may straddle two experts, and an
    // odd block count leaves a partner past M).
    for (const std::vector<Stored>& stored :
         {walk<1, 128, 22, 8, 1, 1, true>(132, m, map, groups, 0), walk<1, 128, 22, 8, 1, 1, false>(132, m, map, groups, 0),
          walk<1, 128, 22, 4, 2, 1, true>(132, m, map, groups, 0), walk<1, 128, 22, 8, 2, 1, false>(132, m, map, groups, 0),
          walk<1, 128, 22, 8, 2, 1, false>(66, m, map, groups, 0)}) {
      expect_each_tile_once(stored, m / 128, 22);
      for (const Stored& s : stored) {
        EXPECT_EQ(s.row0, s.m_block * 128);
        EXPECT_EQ(s.limit, m);
        EXPECT_EQ(s.group, expert_of_block(map, s.row0, groups));
      }
    }
  }
}

// Masked: only each expert's blocks below masked_m (clamped to [0, max_m]), each once, stored
// up to it.
TEST(TileSchedule, MaskedWalksOnlyTheActiveBlocks) {
  const int group_rows = 320, n_blocks = 7;
  const std::vector<int> masked_m = {150, 320, 0, 255, -4, 1000, 1, 129};
  const int groups = static_cast<int>(masked_m.size());
  auto check = [&](const std::vector<Stored>& stored, int block_m) {
    std::map<std::tuple<int, int, int>, int> count;  // (expert, row0, N block)
    for (const Stored& s : stored) {
      const int g = s.group, valid = std::clamp(masked_m[static_cast<size_t>(g)], 0, group_rows);
      EXPECT_EQ(s.limit, g * group_rows + valid);
      EXPECT_EQ((s.row0 - g * group_rows) % block_m, 0);
      EXPECT_GE(s.row0, g * group_rows);
      EXPECT_LT(s.row0, g * group_rows + valid);
      ++count[{g, s.row0, s.n_block}];
    }
    int expected = 0;
    for (int v : masked_m) expected += (std::clamp(v, 0, group_rows) + block_m - 1) / block_m * n_blocks;
    EXPECT_EQ(static_cast<int>(count.size()), expected);
    for (const auto& [tile, n] : count) EXPECT_EQ(n, 1);
  };
  for (int grid : {1, 13, 132}) {
    SCOPED_TRACE(grid);
    check(walk<2, 128, n_blocks, 8, 1, 1, false>(grid, 0, masked_m, groups, group_rows), 128);
    check(walk<2, 256, n_blocks, 8, 1, 1, false>(grid, 0, masked_m, groups, group_rows), 256);
    check(walk<2, 64, n_blocks, 4, 1, 1, false>(grid, 0, masked_m, groups, group_rows), 64);
  }
  // B pairs: two neighbouring M blocks of one expert per cluster (an odd block count leaves
  // the last partner past masked_m, storing nothing); the same tiles, each once.
  for (int grid : {2, 14, 132}) {
    SCOPED_TRACE(grid);
    check(walk<2, 128, n_blocks, 8, 2, 1, false>(grid, 0, masked_m, groups, group_rows), 128);
    check(walk<2, 64, n_blocks, 4, 2, 1, false>(grid, 0, masked_m, groups, group_rows), 64);
  }
}

// The weight gradient's walk (WgradTiles): dense, every tile once with all K blocks; k-grouped,
// every (group, tile) once, with the group's K blocks in order (each group starting where the
// last ended, a negative count read as 0, columns past A's K cut off).
TEST(TileSchedule, WgradTilesTakeEachGroupsKBlocks) {
  constexpr int kNBlocks = 5, kKBlocks = 9;
  for (int grid : {1, 3, 132}) {
    SCOPED_TRACE(grid);
    const int m_blocks = 7;
    std::map<std::pair<int, int>, int> dense;
    for (int cta = 0; cta < grid; ++cta) {
      fp8gemm_dev::WgradTiles<kNBlocks, 2, kKBlocks, false> tiles(m_blocks, 1, nullptr, kKBlocks);
      for (int tile = cta; tile < tiles.count; tile += grid) {
        int m_block = -1, n_block = -1;
        tiles.at(tile, m_block, n_block);
        EXPECT_EQ(tiles.k_first(), 0);
        EXPECT_EQ(tiles.k_blocks(), kKBlocks);
        ++dense[{m_block, n_block}];
      }
    }
    EXPECT_EQ(static_cast<int>(dense.size()), m_blocks * kNBlocks);
    for (const auto& [tile, n] : dense) EXPECT_EQ(n, 1);

    // K per group in columns: whole blocks, empty, partial, negative (0), and more than A holds.
    const std::vector<int> group_k = {256, 0, 300, -5, 1040, 16, 100000};
    const int groups = static_cast<int>(group_k.size()), total = 20;  // A's K: 20 blocks
    std::vector<int> first(group_k.size()), count(group_k.size());
    int at = 0;
    for (size_t g = 0; g < group_k.size(); ++g) {
      const int blocks = group_k[g] > 0 ? (group_k[g] + 127) / 128 : 0;
      first[g] = std::min(at, total);
      count[g] = std::min(blocks, total - first[g]);
      at = first[g] + count[g];
    }
    std::map<std::tuple<int, int, int>, int> seen;
    for (int cta = 0; cta < grid; ++cta) {
      fp8gemm_dev::WgradTiles<kNBlocks, 2, 0, true> tiles(m_blocks, groups, group_k.data(), total);
      EXPECT_EQ(tiles.count, groups * m_blocks * kNBlocks);
      for (int tile = cta; tile < tiles.count; tile += grid) {
        int m_block = -1, n_block = -1;
        tiles.at(tile, m_block, n_block);
        const int g = tiles.group();
        EXPECT_EQ(tiles.k_first(), first[static_cast<size_t>(g)]) << "group " << g;
        EXPECT_EQ(tiles.k_blocks(), count[static_cast<size_t>(g)]) << "group " << g;
        ++seen[{g, m_block, n_block}];
      }
    }
    EXPECT_EQ(static_cast<int>(seen.size()), groups * m_blocks * kNBlocks);
    for (const auto& [tile, n] : seen) EXPECT_EQ(n, 1);
  }
}
