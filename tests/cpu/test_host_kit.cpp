#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "common/fp8_host.hpp"
#include "common/grouped_sizes.hpp"
#include "common/reference.hpp"
#include "common/shape_file.hpp"
#include "support/mutate_text.hpp"
#include "support/temp_dir.hpp"

using namespace fp8gemm::host;

TEST(HostKit, E4m3Decode) {
  EXPECT_EQ(e4m3_to_float(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_float(0xb8), -1.0f);
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3_to_float(0x00), 0.0f);
  EXPECT_TRUE(std::isnan(e4m3_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3_to_float(0xff)));
}

TEST(HostKit, E4m3EncodeRoundTripsEveryFiniteCode) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f) continue;
    const float v = e4m3_to_float(uint8_t(c));
    if (v == 0.0f) continue;
    EXPECT_EQ(float_to_e4m3(v), c) << c;
  }
  EXPECT_EQ(float_to_e4m3(1000.0f), 0x7e);  // saturates
  EXPECT_EQ(float_to_e4m3(1.0625f), 0x38);  // tie -> even mantissa (1.0)
}

TEST(HostKit, Bf16Rounding) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_float(kBf16Poison)));
}

TEST(HostKit, RandomOperandsAreValidAndPadded) {
  const Fp8Operand a = random_operand(5, 200, 224, true, 7);
  EXPECT_EQ(a.scale_stride, 8);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 224; ++c) {
      const bool nan = std::isnan(e4m3_to_float(a.data[r * 224 + c]));
      EXPECT_EQ(nan, c >= 200) << r << "," << c;  // padding is NaN, data never
    }
  EXPECT_TRUE(std::isnan(a.scales[5]));  // scale padding rows
  EXPECT_FALSE(std::isnan(a.scales[4]));
  const Fp8Operand again = random_operand(5, 200, 224, true, 7);
  EXPECT_EQ(a.data, again.data);
}

TEST(HostKit, ReferenceMatchesNaiveSum) {
  const Fp8Operand a = random_operand(3, 272, 272, true, 1);
  const Fp8Operand b = random_operand(136, 272, 288, false, 2);
  const std::vector<int64_t> rows = {0, 2};
  const std::vector<double> ref = reference_rows(a, b, rows, 2);
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t j = 0; j < 136; ++j) {
      double s = 0;
      for (int64_t c = 0; c < 272; ++c)
        s += double(e4m3_to_float(a.data[rows[i] * 272 + c])) * a.scales[(c / 128) * 4 + rows[i]] *
             double(e4m3_to_float(b.data[j * 288 + c])) * b.scales[(j / 128) * 3 + c / 128];
      EXPECT_NEAR(ref[i * 136 + j], s, 1e-9 * (1 + std::fabs(s)));
    }
}

namespace {

// Writes `json` to `path` and expects read_shape_file to refuse it with a message that names
// the file and holds `needle`.
void expect_shape_file_rejected(const std::string& path, const std::string& json, const std::string& needle) {
  SCOPED_TRACE(json);
  std::ofstream(path) << json;
  try {
    read_shape_file(path);
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

}  // namespace

// Every shape set shipped in shapes/ reads (strictly) without error and has shapes.
TEST(HostKit, EveryShippedShapeSetReads) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FP8GEMM_SHAPES_DIR)) {
    if (entry.path().extension() != ".json") continue;
    const ShapeFile f = read_shape_file(entry.path().string());
    EXPECT_GT(f.dense.size() + f.wgrad.size() + f.grouped.size() + f.k_grouped.size(), 0u) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 6);
}

TEST(HostKit, ShapeFileFormats) {
  const ShapeFile f = read_shape_file(std::string(FP8GEMM_SHAPES_DIR) + "/deepseek-v3.json");
  EXPECT_EQ(f.dense.size(), 28u);  // 4 M values x 7 (N, K)
  EXPECT_EQ(f.dense.front().n, 2112);
  ASSERT_EQ(f.wgrad.size(), 5u);  // the weight-gradient shapes
  EXPECT_EQ(f.wgrad.front().kind, fp8gemm::GemmKind::WeightGradient);
  EXPECT_EQ(f.dense.front().kind, fp8gemm::GemmKind::Forward);
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/s.json";
  std::ofstream(path) << R"({"dense": {"mnk": [[1, 8, 16], [3, 16, 32]]}})";
  EXPECT_EQ(read_shape_file(path).dense.size(), 2u);
  std::ofstream(path) << "{ nope";
  EXPECT_THROW(read_shape_file(path), std::runtime_error);
  std::ofstream(path) << R"({"wgrad": {}})";
  EXPECT_THROW(read_shape_file(path), std::runtime_error);
  EXPECT_THROW(read_shape_file(dir.path() + "/missing.json"), std::runtime_error);
}

// "m_grouped_contiguous" and "m_grouped_masked": every (groups, expected_m) with every (n, k);
// "k_grouped": (groups, m, n, expected_k) tuples.
TEST(HostKit, ShapeFileGroupedSections) {
  const ShapeFile f = read_shape_file(std::string(FP8GEMM_SHAPES_DIR) + "/deepseek-v3.json");
  ASSERT_EQ(f.grouped.size(), 24u);  // contiguous 2 x 4 (N, K), then masked 4 x 4
  const GroupedShape& c = f.grouped.front();
  EXPECT_EQ(c.kind, fp8gemm::GemmKind::GroupedContiguous);
  EXPECT_EQ(c.groups, 4);
  EXPECT_EQ(c.expected_m, 8192);
  EXPECT_EQ(c.max_m, 0);
  EXPECT_EQ(c.n, 6144);
  EXPECT_EQ(c.k, 7168);
  EXPECT_EQ(f.grouped[4].groups, 8);  // the second (groups, expected_m) with the first (n, k)
  EXPECT_EQ(f.grouped[4].n, 6144);
  EXPECT_EQ(f.grouped[7].k, 2048);
  size_t masked = 0;
  for (const GroupedShape& g : f.grouped)
    if (g.kind == fp8gemm::GemmKind::GroupedMasked) {
      ++masked;
      EXPECT_EQ(g.max_m, 4096);
      EXPECT_LE(g.expected_m, g.max_m);
    }
  EXPECT_EQ(masked, 16u);
  const GroupedShape& m = f.grouped[8];
  EXPECT_EQ(m.kind, fp8gemm::GemmKind::GroupedMasked);
  EXPECT_EQ(m.groups, 32);
  EXPECT_EQ(m.expected_m, 192);
  ASSERT_EQ(f.k_grouped.size(), 6u);
  EXPECT_EQ(f.k_grouped.front().groups, 4);
  EXPECT_EQ(f.k_grouped.front().m, 4096);
  EXPECT_EQ(f.k_grouped.front().n, 7168);
  EXPECT_EQ(f.k_grouped.front().expected_k, 8192);
  // Prewarmed as A [m, groups x padded expected_k] with `groups` groups.
  const fp8gemm::GemmShape pk = prewarm_shape(KGroupedShape{16, 7168, 2048, 2000});
  EXPECT_EQ(pk.kind, fp8gemm::GemmKind::KGroupedWeightGradient);
  EXPECT_EQ(pk.m, 7168);
  EXPECT_EQ(pk.n, 2048);
  EXPECT_EQ(pk.k, 16 * 2048);
  EXPECT_EQ(pk.groups, 16);

  // Prewarm shapes: contiguous M = groups x round_up(expected_m, 128); masked M = groups x expected_m.
  const fp8gemm::GemmShape pc = prewarm_shape(GroupedShape{fp8gemm::GemmKind::GroupedContiguous, 8, 200, 0, 4096, 7168});
  EXPECT_EQ(pc.m, 8 * 256);
  EXPECT_EQ(pc.n, 4096);
  EXPECT_EQ(pc.k, 7168);
  EXPECT_EQ(pc.kind, fp8gemm::GemmKind::GroupedContiguous);
  EXPECT_EQ(pc.groups, 8);  // the experts tune() splits the rows over
  EXPECT_EQ(prewarm_shape(GroupedShape{fp8gemm::GemmKind::GroupedContiguous, 4, 8192, 0, 1, 1}).m, 4 * 8192);
  const fp8gemm::GemmShape pm = prewarm_shape(GroupedShape{fp8gemm::GemmKind::GroupedMasked, 32, 20, 4096, 4096, 2048});
  EXPECT_EQ(pm.m, 32 * 20);
  EXPECT_EQ(pm.kind, fp8gemm::GemmKind::GroupedMasked);
  EXPECT_EQ(pm.groups, 32);

  // The small set that checks grouped tuning on a GPU: one shape of each grouped kind.
  const ShapeFile small = read_shape_file(std::string(FP8GEMM_SHAPES_DIR) + "/grouped-small.json");
  ASSERT_EQ(small.grouped.size(), 2u);
  EXPECT_EQ(small.grouped[0].kind, fp8gemm::GemmKind::GroupedContiguous);
  EXPECT_EQ(small.grouped[1].kind, fp8gemm::GemmKind::GroupedMasked);
  EXPECT_EQ(small.k_grouped.size(), 1u);
  EXPECT_TRUE(small.dense.empty() && small.wgrad.empty());

  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/g.json";
  // A file of grouped shapes alone is a shape set.
  std::ofstream(path) << R"({"m_grouped_masked": {"max_m": 256, "groups_expected_m": [[2, 64]], "nk": [[512, 256], [264, 528]]}})";
  const ShapeFile only = read_shape_file(path);
  EXPECT_TRUE(only.dense.empty());
  ASSERT_EQ(only.grouped.size(), 2u);
  EXPECT_EQ(only.grouped[1].n, 264);
  EXPECT_EQ(only.grouped[1].max_m, 256);
  std::ofstream(path) << R"({"m_grouped_masked": {"groups_expected_m": [[2, 64]], "nk": [[512, 256]]}})";
  EXPECT_THROW(read_shape_file(path), std::runtime_error);  // no max_m
  std::ofstream(path) << R"({"m_grouped_masked": {"max_m": 32, "groups_expected_m": [[2, 64]], "nk": [[512, 256]]}})";
  EXPECT_THROW(read_shape_file(path), std::runtime_error);  // expected_m > max_m
  std::ofstream(path) << R"({"m_grouped_contiguous": {"groups_expected_m": [[0, 64]], "nk": [[512, 256]]}})";
  EXPECT_THROW(read_shape_file(path), std::runtime_error);  // no groups
  std::ofstream(path) << R"({"m_grouped_contiguous": {"nk": [[512, 256]]}})";
  EXPECT_THROW(read_shape_file(path), std::runtime_error);

  // Listed sizes: one list per entry, the same problem for every (n, k); none listed: empty
  // (the bench draws them).
  std::ofstream(path) << R"({"m_grouped_masked": {"max_m": 256, "groups_expected_m": [[2, 64], [3, 100]],
    "rows": [[64, 0], [256, 17, 99]], "nk": [[512, 256], [264, 528]]},
    "m_grouped_contiguous": {"groups_expected_m": [[2, 64]], "nk": [[512, 256]]},
    "k_grouped": {"groups_m_n_expected_k": [[2, 256, 512, 300]], "ks": [[300, 0]]}})";
  const ShapeFile listed = read_shape_file(path);
  ASSERT_EQ(listed.grouped.size(), 5u);
  EXPECT_TRUE(listed.grouped[0].rows.empty());  // contiguous: drawn
  EXPECT_EQ(listed.grouped[1].rows, (std::vector<int64_t>{64, 0}));
  EXPECT_EQ(listed.grouped[2].rows, (std::vector<int64_t>{64, 0}));
  EXPECT_EQ(listed.grouped[2].n, 264);
  EXPECT_EQ(listed.grouped[4].rows, (std::vector<int64_t>{256, 17, 99}));
  EXPECT_EQ(listed.grouped[4].expected_m, 100);  // still the planning hint
  ASSERT_EQ(listed.k_grouped.size(), 1u);
  EXPECT_EQ(listed.k_grouped[0].ks, (std::vector<int64_t>{300, 0}));
  // The shipped sets list the reference run's sizes (the same problem for every (n, k)).
  int64_t rows = 0, ks = 0;
  for (const int64_t r : f.grouped.front().rows) rows += r;
  for (const int64_t k : f.k_grouped.front().ks) ks += k;
  EXPECT_EQ(rows, 32771);
  EXPECT_EQ(f.grouped[1].rows, f.grouped.front().rows);
  EXPECT_EQ(ks, 31581);
}

// The bench's grouped layouts: drawn sizes reproduce from the seed (the rows and K these
// shapes had in the device runs of docs/PERFORMANCE.md, log 125, seed 1), listed sizes are
// taken as given; contiguous segments start on 128-row boundaries, masked experts at e x max_m,
// k-grouped groups on 128-column boundaries.
TEST(HostKit, GroupedLayoutsDrawnAndListed) {
  using fp8gemm::GemmKind;
  const int64_t nks[4][2] = {{6144, 7168}, {7168, 3072}, {4096, 4096}, {4096, 2048}};
  const int64_t contiguous_rows[4] = {30569, 25356, 35454, 34918}, masked_rows[4] = {5129, 6167, 5745, 5235};
  for (int i = 0; i < 4; ++i) {
    const GroupedLayout c = grouped_layout(GroupedShape{GemmKind::GroupedContiguous, 4, 8192, 0, nks[i][0], nks[i][1]}, 1);
    EXPECT_EQ(c.real_rows, contiguous_rows[i]);
    ASSERT_EQ(c.rows.size(), 4u);
    int64_t at = 0;
    for (size_t e = 0; e < 4; ++e) {
      EXPECT_GE(c.rows[e], int64_t(0.7 * 8192));
      EXPECT_LT(c.rows[e], int64_t(1.3 * 8192));
      EXPECT_EQ(c.offset[e], at);
      at += (c.rows[e] + 127) / 128 * 128;
    }
    EXPECT_EQ(c.a_rows, at);
    EXPECT_EQ(c.plan.m, at);
    const GroupedLayout m = grouped_layout(GroupedShape{GemmKind::GroupedMasked, 6, 1024, 4096, nks[i][0], nks[i][1]}, 1);
    EXPECT_EQ(m.real_rows, masked_rows[i]);
    EXPECT_EQ(m.a_rows, 6 * 4096);
    EXPECT_EQ(m.offset[5], 5 * 4096);
    EXPECT_EQ(m.plan.m, 6 * 1024);  // planned at expected_m, whatever was drawn
  }
  GroupedShape listed{GemmKind::GroupedContiguous, 4, 8192, 0, 4096, 2048};
  listed.rows = {6349, 10037, 0, 8807};
  const GroupedLayout l = grouped_layout(listed, 1);
  EXPECT_EQ(l.rows, listed.rows);
  EXPECT_EQ(l.real_rows, 6349 + 10037 + 8807);
  EXPECT_EQ(l.offset, (std::vector<int64_t>{0, 6400, 16512, 16512}));  // an empty expert takes no rows
  EXPECT_EQ(l.a_rows, 16512 + 8832);
  EXPECT_EQ(grouped_layout(listed, 99).rows, listed.rows);  // the seed does not matter

  KGroupedShape kg{4, 4096, 7168, 8192, {}};
  SplitMix64 drawn(1 + uint64_t(4 * 1009 + 4096 * 131 + 7168 * 7 + 8192));  // the bench's seed for this shape
  const KGroupedLayout d = k_grouped_layout(kg, &drawn);
  EXPECT_EQ(d.columns, 33024);
  EXPECT_EQ(d.real_k, d.columns);  // drawn K are whole 128-column blocks
  kg.ks = {6118, 9672, 7303, 8488};
  SplitMix64 any(7);
  const KGroupedLayout k = k_grouped_layout(kg, &any);
  EXPECT_EQ(k.ks, (std::vector<int32_t>{6118, 9672, 7303, 8488}));
  EXPECT_EQ(k.start, (std::vector<int64_t>{0, 6144, 15872, 23296}));
  EXPECT_EQ(k.columns, 31872);
  EXPECT_EQ(k.real_k, 31581);
}

// Listed sizes are checked as strictly as the rest: their count, their range, masked rows
// within max_m, and the padded total within the library's limit.
TEST(HostKit, ShapeFileListedSizesAreStrict) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/s.json";
  auto rejected = [&](const std::string& json, const std::string& needle) { expect_shape_file_rejected(path, json, needle); };
  const std::string masked = R"({"m_grouped_masked": {"max_m": 256, "groups_expected_m": [[2, 64]], "nk": [[512, 256]], )";
  rejected(masked + R"("rows": [[64, 64, 64]]}})",
           "section 'm_grouped_masked', \"rows\"[0]: must list 2 rows (one per group of entry 0), got [64,64,64]");
  rejected(masked + R"("rows": [[64, 64], [1, 1]]}})", "\"rows\": must hold one list per entry (1), got");
  rejected(masked + R"("rows": [[64, 300]]}})", "\"rows\"[0]: an expert's rows 300 are more than max_m 256");
  rejected(masked + R"("rows": [[64, -1]]}})", "rows = -1 must be 0 or more");
  rejected(masked + R"("rows": [[64, 1.5]]}})", "rows = 1.5 is not an integer");
  rejected(masked + R"("rows": 7}})", "must hold one list per entry (1), got 7");
  rejected(R"({"m_grouped_contiguous": {"groups_expected_m": [[2, 64]], "nk": [[512, 256]], "rows": [[2147482624, 1]]}})",
           "the experts' rows, each padded to 128, are 2147482752, more than 2147482624");
  rejected(R"({"k_grouped": {"groups_m_n_expected_k": [[2, 256, 512, 300]], "ks": [[300]]}})",
           "section 'k_grouped', \"ks\"[0]: must list 2 K values");
  rejected(R"({"k_grouped": {"groups_m_n_expected_k": [[2, 256, 512, 300]], "ks": [[2147482624, 1]]}})",
           "the groups' K, each padded to 128, are 2147482752 columns, more than 2147482624");
}

// Shape files are strict: each mistake names the file, the section, the index and the rule.
TEST(HostKit, ShapeFilesAreStrict) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/s.json";
  auto rejected = [&](const std::string& json, const std::string& needle) { expect_shape_file_rejected(path, json, needle); };
  rejected(R"({"dense": {"mnk": [[4, 2048.5, 512]]}})", "section 'dense', \"mnk\"[0]: n = 2048.5 is not an integer");
  rejected(R"({"dense": {"m": [1e3], "nk": [[256, 512]]}})", "\"m\"[0]: m = 1000.0 is not an integer");
  rejected(R"({"dense": {"mnk": [[4, 256, 512], [4, 256]]}})", "\"mnk\"[1]: must be [m, n, k] (3 integers)");
  rejected(R"({"wgrad": {"mnk": [[4, 256, 512, 9]]}})", "section 'wgrad', \"mnk\"[0]: must be [m, n, k]");
  rejected(R"({"dense": {"mnk": [[4, 256, 512]], "mkn": []}})", "section 'dense': unknown key \"mkn\"");
  rejected(R"({"desne": {"mnk": [[4, 256, 512]]}})", "unknown section 'desne'");
  rejected(R"({"dense": {"mnk": [[4, 256, 512]], "mnk": [[8, 256, 512]]}})", "key \"mnk\" appears twice");
  rejected(R"({"dense": {"mnk": [[4, 256, 512]]}} {"dense": {}})", "not valid JSON");
  rejected(R"({"dense": {"mnk": [[4, 18446744073709551615, 512]]}})", "is more than 2147482624");
  rejected(R"({"dense": {"mnk": [[4, 99999999999999999999, 512]]}})",
           "n = 1e+20 is more than 2147482624");  // past 64 bits the JSON reader holds a double
  // Sizes that are each in range but not all groups together (once a product nobody wrote).
  rejected(R"({"m_grouped_contiguous": {"groups_expected_m": [[2147482624, 2147482624]], "nk": [[4096, 7168]]}})",
           "\"groups_expected_m\"[0]: groups x expected_m (padded to 128 rows) = 2147482624 x 2147482624 rows is more");
  rejected(R"({"m_grouped_masked": {"max_m": 65536, "groups_expected_m": [[65536, 64]], "nk": [[4096, 7168]]}})",
           "groups x max_m = 65536 x 65536 rows is more than 2147482624");
  rejected(R"({"k_grouped": {"groups_m_n_expected_k": [[1, 256, 512, 128], [100000, 4096, 4096, 100000]]}})",
           "\"groups_m_n_expected_k\"[1]: groups x expected_k (padded to 128 columns) = 100000 x 100096 is more");
  rejected(R"({"k_grouped": {"groups_m_n_expected_k": [[65536, 65536, 4096, 128]]}})",
           "groups x m = 65536 x 65536 rows of D is more than 2147482624");
  rejected(std::string(R"({"dense": {"mnk": [[128, 4096, 7168]]}})") + '\0' + R"({"garbage": [[[)",
           "not valid JSON: a NUL byte at offset 39");
  rejected(R"({"dense": {"mnk": [[4, 4294967296, 512]]}})", "n = 4294967296 is more than 2147482624");
  rejected(R"({"dense": {"mnk": [[-4, 256, 512]]}})", "m = -4 must be positive");
  rejected(R"({"k_grouped": {"groups_m_n_expected_k": [[2, 256, 512]]}})",
           "section 'k_grouped', \"groups_m_n_expected_k\"[0]: must be [groups, m, n, expected_k]");
  rejected(R"({"m_grouped_masked": {"max_m": 256, "groups_expected_m": [[2, 64]], "nk": [[512, 256]], "x": 1}})",
           "unknown key \"x\"");
  // Lists that multiply past 2^20 shapes (20,000 x 5,000 asked for gigabytes); nesting past 16
  // levels; a value's text cut short in the message.
  auto many = [](size_t count, const std::string& one) {
    std::string list = "[" + one;
    for (size_t i = 1; i < count; ++i) list += ", " + one;
    return list + "]";
  };
  rejected(R"({"dense": {"m": )" + many(2000, "1") + R"(, "nk": )" + many(1000, "[256, 512]") + "}}",
           "section 'dense': 2000 m x 1000 [n, k] are 2000000 shapes, more than 1048576; list fewer");
  rejected(R"({"m_grouped_contiguous": {"groups_expected_m": )" + many(2000, "[4, 64]") + R"(, "nk": )" +
               many(1000, "[256, 512]") + "}}",
           "2000 [groups, expected_m] x 1000 [n, k] are 2000000 shapes");
  rejected(R"({"dense": {"mnk": [)" + std::string(17, '[') + std::string(17, ']') + "]}}",
           "not valid JSON: nested more than 16 levels deep");
  rejected(R"({"dense": {"mnk": [)" + many(100, "7") + "]}}",
           "must be [m, n, k] (3 integers), got [7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,...");
  // "about" is allowed everywhere.
  std::ofstream(path) << R"({"about": "x", "dense": {"about": "y", "mnk": [[4, 256, 512]]}})";
  EXPECT_EQ(read_shape_file(path).dense.size(), 1u);
}

// The shipped shape sets, each mutated at random (bytes flipped, cut, inserted or repeated,
// numbers swapped for edge values and other JSON types): each mutant either reads into
// sizes the library takes (grouped ones planned without error) or is refused with a
// std::runtime_error that names the file. (This test, and a harness of the same mutations on
// 100 K mutants, run clean under -fsanitize=address,undefined.)
TEST(HostKit, MutatedShapeSetsReadOrAreRefusedByName) {
  std::vector<std::string> shipped;
  for (const auto& entry : std::filesystem::directory_iterator(FP8GEMM_SHAPES_DIR)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    shipped.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::sort(shipped.begin(), shipped.end());  // (directory order is the file system's)
  ASSERT_GE(shipped.size(), 6u);
  const std::vector<std::string> values = {"0", "-1", "1", "2147482624", "2147482625", "9223372036854775807",
                                           "18446744073709551615", "184467440737095516160", "1e300", "-1e300", "1.5",
                                           "1e3", "\"x\"", "null", "[]", "{}", "true", "[1]", "[[1,2]]", "-0", "0.0",
                                           "1E400", "NaN"};
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/mutant.json";
  std::mt19937_64 rng(7);
  int read = 0, refused = 0;
  for (int it = 0; it < 3000; ++it) {
    const std::string text = fp8gemm::test::mutate_text(shipped[rng() % shipped.size()], rng, values);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    try {
      const ShapeFile f = read_shape_file(path);
      ++read;
      for (const auto* list : {&f.dense, &f.wgrad})
        for (const fp8gemm::GemmShape& s : *list) {
          EXPECT_TRUE(s.m >= 1 && s.n >= 1 && s.k >= 1) << text;
          EXPECT_TRUE(s.m <= fp8gemm::kMaxDimension && s.n <= fp8gemm::kMaxDimension) << text;
        }
      for (const GroupedShape& g : f.grouped) {
        EXPECT_TRUE(g.groups >= 1 && g.expected_m >= 1 && g.n >= 1 && g.k >= 1) << text;
        for (const int64_t rows : g.rows) EXPECT_TRUE(rows >= 0 && (g.max_m == 0 || rows <= g.max_m)) << text;
        EXPECT_NO_THROW(prewarm_shape(g)) << text;
      }
      for (const KGroupedShape& g : f.k_grouped) {
        for (const int64_t k : g.ks) EXPECT_GE(k, 0) << text;
        EXPECT_NO_THROW(prewarm_shape(g)) << text;
      }
    } catch (const std::runtime_error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  // Both outcomes are reached often (the mutations neither always break nor never touch a file).
  EXPECT_GT(read, 300);
  EXPECT_GT(refused, 300);
}
