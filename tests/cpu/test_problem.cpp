#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "fp8gemm/fp8gemm.hpp"
#include "problem/problem.hpp"

using namespace fp8gemm::detail;

namespace {
KernelSpec spec(int n, int k, int bm, int bn, int stages, int group = 8) {
  return KernelSpec{KernelKind::Gemm1D2D, n, k, KernelConfig{bm, bn, stages, group}};
}
// The layout of a spec that must be legal, with the slug and cluster size it must have.
KernelLayout legal_layout(const KernelSpec& s, const std::string& slug, int cluster_size) {
  EXPECT_EQ(spec_illegal_reason(s), "") << slug;
  EXPECT_EQ(s.slug(), slug);
  const KernelLayout l = kernel_layout(s);
  EXPECT_EQ(l.cluster_size, cluster_size) << slug;
  return l;
}
// Why `s` with `change` applied to its config is illegal ("" where it is legal).
template <typename Change>
std::string illegal_with(KernelSpec s, Change&& change) {
  change(s.config);
  return spec_illegal_reason(s);
}
}  // namespace

TEST(Problem, SlugIsReadableAndComplete) {
  EXPECT_EQ(spec(7168, 2048, 128, 112, 5).slug(), "gemm1d2d_n7168_k2048_bm128_bn112_s5_g8");
}

TEST(Problem, LayoutDerivedInOnePlace) {
  const KernelLayout l = kernel_layout(spec(7168, 7184, 128, 112, 4));
  EXPECT_EQ(l.math_warpgroups, 2);
  EXPECT_EQ(l.threads, 384);
  EXPECT_EQ(l.producer_registers * 128 + l.math_registers * 256, 64512);  // fits the 64K register file
  EXPECT_EQ(l.a_stage_bytes, 128 * 128);
  EXPECT_EQ(l.b_stage_bytes, 112 * 128);
  EXPECT_EQ(l.k_blocks, 57);  // 7184 = 56 * 128 + 16
  EXPECT_EQ(l.n_blocks, 64);  // 7168 / 112
  // stages x (A + B + A scales) + two tiles of B scales (2 x 57 floats) + 12 barriers
  EXPECT_EQ(l.smem_bytes, 1024 + 4 * (16384 + 14336 + 512) + 2 * 2 * 57 * 4 + 12 * 8);
  const KernelLayout one = kernel_layout(spec(576, 7168, 64, 64, 8));
  EXPECT_EQ(one.threads, 256);
  EXPECT_LE(one.producer_registers * 128 + one.math_registers * 128, 65536);
  EXPECT_EQ(one.producer_registers, 56);
  // Three math warpgroups (192-row tiles): 512 threads at 128 registers each, all of it
  // handed out (the producer at 32 spilled; see kernel_layout).
  const KernelLayout three = kernel_layout(spec(2112, 7168, 192, 128, 4));
  EXPECT_EQ(three.math_warpgroups, 3);
  EXPECT_EQ(three.threads, 512);
  EXPECT_EQ(three.producer_registers * 128 + three.math_registers * 384, 65536);
  EXPECT_EQ(three.producer_registers, 56);
  EXPECT_EQ(three.math_registers % 8, 0);
}

TEST(Problem, OutputSlabsCoverBlockN) {
  KernelSpec with_tile = spec(7168, 2048, 128, 128, 5);
  with_tile.config.tma_store = 1;
  EXPECT_EQ(spec_illegal_reason(with_tile), "");
  EXPECT_EQ(with_tile.slug(), "gemm1d2d_n7168_k2048_bm128_bn128_s5_g8_ts");
  const KernelLayout tma = kernel_layout(with_tile);
  EXPECT_TRUE(tma.tma_store);
  EXPECT_EQ(tma.d_tile_bytes, 128 * 128 * 2);
  EXPECT_EQ(tma.smem_bytes, 1024 + 5 * (16384 + 16384 + 512) + 128 * 128 * 2 + 2 * 2 * 16 * 4 + 14 * 8);
  const KernelLayout direct = kernel_layout(spec(7168, 2048, 128, 128, 5));
  EXPECT_FALSE(direct.tma_store);
  EXPECT_EQ(direct.d_tile_bytes, 0);
  with_tile.config.stages = 6;  // the D tile takes a stage's worth of shared memory
  EXPECT_NE(spec_illegal_reason(with_tile), "");
  KernelSpec one_buffer = spec(7168, 2048, 256, 128, 4);
  one_buffer.config.tma_store = 2;  // a 64x64 slab per math warpgroup: room for a 4th stage
  EXPECT_EQ(spec_illegal_reason(one_buffer), "");
  EXPECT_EQ(kernel_layout(one_buffer).d_tile_bytes, 2 * 64 * 64 * 2);
  EXPECT_EQ(one_buffer.slug(), "gemm1d2d_n7168_k2048_bm256_bn128_s4_g8_ts1");
  one_buffer.config.tma_store = 1;
  EXPECT_NE(spec_illegal_reason(one_buffer), "");
  // block_n not a multiple of 64: ceil(block_n / 64) slabs per wave, the last one
  // overlapping the one before.
  KernelSpec odd = spec(7168, 2048, 128, 144, 5);
  odd.config.tma_store = 1;
  EXPECT_EQ(spec_illegal_reason(odd), "");
  EXPECT_EQ(kernel_layout(odd).d_tile_bytes, 2 * 3 * 64 * 64 * 2);
  odd.config.tma_store = 2;
  EXPECT_EQ(kernel_layout(odd).d_tile_bytes, 2 * 64 * 64 * 2);
  KernelSpec narrow = spec(7168, 2048, 128, 48, 5);
  narrow.config.tma_store = 1;  // narrower than one slab
  EXPECT_NE(spec_illegal_reason(narrow), "");
}

TEST(Problem, ThreeMathWarpgroupsFor192Rows) {
  const KernelLayout l = kernel_layout(spec(7168, 2048, 192, 128, 4));
  EXPECT_EQ(l.math_warpgroups, 3);
  EXPECT_EQ(l.threads, 512);
  EXPECT_EQ(l.producer_registers * 128 + l.math_registers * 384, 65536);  // the whole register file
  EXPECT_EQ(l.a_stage_bytes, 192 * 128);
}

TEST(Problem, LegalityRules) {
  EXPECT_EQ(spec_illegal_reason(spec(7168, 2048, 128, 128, 5)), "");
  EXPECT_EQ(spec_illegal_reason(spec(7168, 2048, 128, 112, 6)), "");
  EXPECT_EQ(spec_illegal_reason(spec(7168, 2048, 64, 48, 8)), "");
  EXPECT_EQ(spec_illegal_reason(spec(7168, 2048, 128, 192, 4)), "");
  EXPECT_EQ(spec_illegal_reason(spec(7168, 2048, 256, 128, 3)), "");
  EXPECT_EQ(spec_illegal_reason(spec(7168, 2048, 192, 128, 4)), "");  // three math warpgroups
  EXPECT_NE(spec_illegal_reason(spec(7168, 2048, 192, 144, 4)), "");  // 160 registers each: block_n <= 128
  EXPECT_NE(spec_illegal_reason(spec(7168, 2048, 256, 144, 3)), "");  // 2 waves + buffer would not fit in registers
  EXPECT_NE(spec_illegal_reason(spec(7168, 2048, 128, 208, 3)), "");  // result + buffer would not fit
  // 176 columns: a tile may touch three 128-column blocks of B's scales (a third row of
  // them per tile buffer). The weight gradient reads B's scales per column: any width.
  const KernelSpec three_blocks = spec(7168, 2048, 128, 176, 3);
  EXPECT_EQ(spec_illegal_reason(three_blocks), "");
  const KernelSpec two_blocks = spec(7168, 2048, 128, 160, 3);
  EXPECT_EQ(kernel_layout(three_blocks).smem_bytes - kernel_layout(two_blocks).smem_bytes,
            3 * 16 * 128 + 2 * 16 * 4);  // 16 more B columns per stage, a third scale row per buffer
  KernelSpec wgrad_176 = three_blocks;
  wgrad_176.kind = KernelKind::Gemm1D1D;
  EXPECT_EQ(spec_illegal_reason(wgrad_176), "");
  // Weight gradient: 64, 128 or 192 rows (one to three math warpgroups); 192 up to 128 columns.
  KernelSpec wgrad_192 = spec(4096, 7168, 192, 128, 3);
  wgrad_192.kind = KernelKind::Gemm1D1D;
  EXPECT_EQ(spec_illegal_reason(wgrad_192), "");
  const KernelLayout l192 = kernel_layout(wgrad_192);
  EXPECT_EQ(l192.math_warpgroups, 3);
  EXPECT_EQ(l192.threads, 512);
  EXPECT_EQ(l192.producer_registers * 128 + l192.math_registers * 384, 65536);
  EXPECT_EQ(l192.d_tile_bytes, 3 * 8 * 4096);  // each warpgroup's 64 x 128 fp32 result
  wgrad_192.config.block_n = 144;
  EXPECT_NE(spec_illegal_reason(wgrad_192), "");
  // The weight gradient takes widths in steps of 8; one 8 past a multiple of 16 ends in an
  // overlapping slab (128x152: 10 slabs of 4 KiB per math warpgroup).
  KernelSpec wgrad_152 = spec(4096, 7168, 128, 152, 4);
  wgrad_152.kind = KernelKind::Gemm1D1D;
  EXPECT_EQ(spec_illegal_reason(wgrad_152), "");
  EXPECT_EQ(kernel_layout(wgrad_152).d_tile_bytes, 2 * 10 * 4096);
  wgrad_152.config.block_n = 148;
  EXPECT_NE(spec_illegal_reason(wgrad_152), "");
  EXPECT_NE(spec_illegal_reason(spec(7168, 2048, 128, 152, 4)), "");  // the forward kernel: steps of 16
  wgrad_192.config = KernelConfig{256, 128, 3, 8};
  EXPECT_NE(spec_illegal_reason(wgrad_192), "");
  EXPECT_NE(spec_illegal_reason(spec(7168, 2048, 128, 120, 4)), "");  // not a multiple of 16
  EXPECT_NE(spec_illegal_reason(spec(7168, 2048, 96, 128, 4)), "");   // block_m
  EXPECT_NE(spec_illegal_reason(spec(7168, 2048, 128, 128, 7)), "");  // too much shared memory
  EXPECT_NE(spec_illegal_reason(spec(7168, 2048, 128, 128, 1)), "");  // no pipeline
  EXPECT_NE(spec_illegal_reason(spec(7170, 2048, 128, 128, 4)), "");  // N % 8
  EXPECT_NE(spec_illegal_reason(spec(7168, 2056, 128, 128, 4)), "");  // K % 16
  // Grouped: 256-row tiles only for masked problems (contiguous segments are 128-row aligned).
  KernelSpec masked = spec(7168, 2048, 256, 128, 3);
  masked.kind = KernelKind::GroupedMasked;
  EXPECT_EQ(spec_illegal_reason(masked), "");
  KernelSpec contiguous = masked;
  contiguous.kind = KernelKind::GroupedContiguous;
  EXPECT_NE(spec_illegal_reason(contiguous), "");
  EXPECT_NE(illegal_with(masked, [](KernelConfig& c) { c.multicast = 1; }), "");
  // Masked B pairs: tiles of up to 128 rows.
  EXPECT_NE(illegal_with(masked, [](KernelConfig& c) { c.multicast = 2; }), "");
  EXPECT_EQ(illegal_with(masked, [](KernelConfig& c) {
              c.block_m = 128;
              c.block_n = 192;
              c.stages = 4;
              c.multicast = 2;
            }),
            "");
}

TEST(Problem, MulticastLayoutAndLegality) {
  KernelSpec a = spec(7168, 2048, 256, 128, 3);
  a.config.multicast = 1;
  const KernelLayout la = legal_layout(a, "gemm1d2d_n7168_k2048_bm256_bn128_s3_g8_mcA", 2);
  EXPECT_EQ(la.a_box_rows, 128);  // each CTA of the pair loads half of the shared A tile
  EXPECT_EQ(la.b_box_rows, 128);
  EXPECT_EQ(la.threads, 384);     // two math warpgroups of two 64-row waves each
  KernelSpec b = spec(7168, 2048, 128, 96, 6);
  b.config.multicast = 2;
  EXPECT_EQ(b.slug(), "gemm1d2d_n7168_k2048_bm128_bn96_s6_g8_mcB");
  EXPECT_EQ(kernel_layout(b).a_box_rows, 128);
  EXPECT_EQ(kernel_layout(b).b_box_rows, 48);
  EXPECT_FALSE(KernelSpecHash{}(a) == KernelSpecHash{}(spec(7168, 2048, 256, 128, 3)));
  EXPECT_NE(illegal_with(b, [](KernelConfig& c) { c.multicast = 3; }), "");
}

// The tile order: contiguous problems walk stripes along M while one expert's B (N x K bytes)
// stays in L2 (at most kAlongMMaxExpertBBytes), else along N; every other kernel along N.
TEST(Problem, ContiguousTileOrderFollowsTheExpertsBBytes) {
  auto along_m = [](KernelKind kind, int n, int k, int multicast) {
    KernelSpec s{kind, n, k, KernelConfig{128, 192, 4, 8, multicast}};
    return kernel_layout(s).stripes_along_m;
  };
  EXPECT_TRUE(along_m(KernelKind::GroupedContiguous, 4096, 2048, 0));   // 8 MiB
  EXPECT_TRUE(along_m(KernelKind::GroupedContiguous, 7168, 3072, 2));   // 21 MiB, B pairs
  EXPECT_FALSE(along_m(KernelKind::GroupedContiguous, 6144, 7168, 2));  // 42 MiB
  EXPECT_FALSE(along_m(KernelKind::GroupedContiguous, 6144, 7168, 0));
  EXPECT_TRUE(along_m(KernelKind::GroupedContiguous, 4096, 6144, 0));   // exactly 24 MiB
  EXPECT_FALSE(along_m(KernelKind::GroupedContiguous, 4096, 6272, 0));
  EXPECT_EQ(int64_t(4096) * 6144, kAlongMMaxExpertBBytes);
  for (KernelKind kind : {KernelKind::Gemm1D2D, KernelKind::GroupedMasked}) EXPECT_FALSE(along_m(kind, 4096, 2048, 0));
  KernelSpec a_pairs{KernelKind::GroupedContiguous, 4096, 2048, KernelConfig{128, 192, 4, 8, 1}};
  EXPECT_FALSE(kernel_layout(a_pairs).stripes_along_m);
}

TEST(Problem, SplitKLayoutAndLegality) {
  KernelSpec s = spec(4096, 7168, 64, 64, 8);
  s.config.split_k = 2;
  const KernelLayout l = legal_layout(s, "gemm1d2d_n4096_k7168_bm64_bn64_s8_g8_sk2", 2);
  EXPECT_EQ(l.split_exchange_bytes, 64 / 4 * 128 * 4);  // a quarter of the accumulator per thread, 128 threads
  EXPECT_EQ(l.a_box_rows, 64);
  EXPECT_NE(illegal_with(s, [](KernelConfig& c) { c.multicast = 1; }), "");  // both need the CTA pair
  EXPECT_NE(illegal_with(s, [](KernelConfig& c) { c.split_k = 3; }), "");
  EXPECT_NE(illegal_with(spec(4096, 128, 64, 64, 8), [](KernelConfig& c) { c.split_k = 2; }), "");  // nothing to split
  // Each CTA would store half a 64-column slab.
  EXPECT_NE(illegal_with(s, [](KernelConfig& c) { c.tma_store = 1; }), "");
}

TEST(Problem, JsonRoundTrip) {
  KernelSpec s = spec(24576, 1536, 64, 96, 7, 16);
  EXPECT_EQ(spec_from_json(spec_to_json(s)), s);
  s.config.multicast = 2;
  EXPECT_EQ(spec_from_json(spec_to_json(s)), s);
  s.config.multicast = 0;
  s.config.split_k = 2;
  s.config.tma_store = 0;
  EXPECT_EQ(spec_from_json(spec_to_json(s)), s);
  EXPECT_THROW(spec_from_json("{\"kind\": \"gemm1d2d\"}"), fp8gemm::Error);
  EXPECT_THROW(spec_from_json("not json"), fp8gemm::Error);
}

// A spec read from a file (a tuning database) takes JSON integers only, within what its field
// holds: 2.5 is not read as 2, 1e300 (a float: its conversion to int is undefined), 2^40 in
// an int field and a document nested deeper than the library writes are refused.
TEST(Problem, JsonFieldsMustBeIntegersThatFit) {
  const std::string good = spec_to_json(spec(24576, 1536, 64, 96, 7, 16));
  ASSERT_EQ(spec_from_json(good), spec(24576, 1536, 64, 96, 7, 16));
  auto with = [&good](const std::string& field, const std::string& value) {
    std::string text = good;
    const size_t at = text.find("\"" + field + "\":");
    EXPECT_NE(at, std::string::npos) << field << " in " << good;
    const size_t from = at + field.size() + 3, to = text.find_first_of(",}", from);
    return text.replace(from, to - from, value);
  };
  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"block_m", "64.5"}, {"block_m", "1e300"}, {"stages", "1099511627776"}, {"n", "1e300"},
           {"k", "18446744073709551615"}, {"group_n", "\"16\""}, {"kind", "7"}}) {
    const std::string text = with(field, value);
    try {
      spec_from_json(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const fp8gemm::Error& e) {
      EXPECT_EQ(e.code(), fp8gemm::ErrorCode::InvalidArgument) << text;
      EXPECT_NE(std::string(e.what()).find(field == "kind" ? "kind" : "\"" + field + "\" must be an integer"),
                std::string::npos)
          << e.what();
    }
  }
  const std::string deep = with("n", std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_THROW(spec_from_json(deep), fp8gemm::Error);
}

// Slugs read back into their specs (cache administration recomputes an entry's key from its
// name); anything slug() does not write is refused.
TEST(Problem, SpecFromSlugRoundTrips) {
  const std::vector<KernelSpec> specs = {
      KernelSpec{KernelKind::Gemm1D2D, 7168, 16384, KernelConfig{256, 128, 3, 8, 0, 1}},
      KernelSpec{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{64, 128, 8, 8, 2, 1}},
      KernelSpec{KernelKind::Gemm1D2D, 4096, 7168, KernelConfig{64, 64, 8, 8, 0, 0, 2}},
      KernelSpec{KernelKind::Gemm1D2D, 4096, 7168, KernelConfig{128, 128, 4, 8, 1, 2}},
      KernelSpec{KernelKind::Gemm1D1D, 4096, 16384, KernelConfig{128, 128, 4, 8}},
      KernelSpec{KernelKind::GroupedContiguous, 6144, 7168, KernelConfig{128, 192, 4, 8, 0, 1}},
      KernelSpec{KernelKind::GroupedMasked, 4096, 2048, KernelConfig{256, 128, 3, 8, 0, 1}},
      KernelSpec{KernelKind::KGrouped, 7168, 0, KernelConfig{128, 128, 4, 8}},
      KernelSpec{KernelKind::Quantize1x128},
      KernelSpec{KernelKind::CopyScales},
  };
  for (KernelSpec s : specs) {
    const std::optional<KernelSpec> back = spec_from_slug(s.slug());
    ASSERT_TRUE(back) << s.slug();
    EXPECT_TRUE(*back == s) << s.slug();
  }
  KernelSpec cb{KernelKind::Gemm1D2D, 32768, 512, KernelConfig{64, 128, 8, 8}};
  cb.option = 1;
  ASSERT_TRUE(spec_from_slug(cb.slug()));
  EXPECT_TRUE(*spec_from_slug(cb.slug()) == cb);
  KernelSpec pow2{KernelKind::Quantize128x128};
  pow2.option = 1;
  EXPECT_TRUE(*spec_from_slug(pow2.slug()) == pow2);
  for (const char* bad : {"", "gemm1d2d", "gemm1d2d_n7168_k16384_bm256_bn128_s3", "gemm1d2d_n7168_k16384_bm256_bn128_s3_g8_x",
                          "gemm1d2d_n07168_k16384_bm256_bn128_s3_g8", "gemm1d2d_n7168_k16384_bm256_bn128_s3_g8_ts_mcA",
                          "gemm1d1d_kg_n7168_k0_bm128_bn128_s4_g8", "quant1x128_pow3", "notakernel_n1"})
    EXPECT_FALSE(spec_from_slug(bad)) << bad;
}
