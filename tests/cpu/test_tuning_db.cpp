// The tuning database: M buckets, JSON round trip, what invalidates a file (corruption,
// another device or software version, illegal entries), and concurrent writers.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "problem/problem.hpp"
#include "support/mutate_text.hpp"
#include "support/temp_dir.hpp"
#include "tuning/tuning_db.hpp"
#include "util/files.hpp"

using namespace fp8gemm::detail;

namespace {

TuningMetadata h200() { return TuningMetadata{"NVIDIA H200", 132, 13000, "13.0", "0.1.0"}; }

TunedEntry entry(int64_t m, int64_t n, int64_t k, int block_m, int block_n, int stages) {
  TunedEntry e;
  e.spec = KernelSpec{KernelKind::Gemm1D2D, n, k, KernelConfig{block_m, block_n, stages, 8, 0, 0, 1}};
  e.m_measured = m;
  e.us = 100.0;
  e.heuristic = "gemm1d2d_n7168_k2048_bm128_bn128_s5_g8_ts";
  e.heuristic_us = 110.0;
  return e;
}

}  // namespace

TEST(TuningDb, MBuckets) {
  EXPECT_EQ(m_bucket(1), 1);
  EXPECT_EQ(m_bucket(2), 2);
  EXPECT_EQ(m_bucket(3), 4);
  EXPECT_EQ(m_bucket(64), 64);
  EXPECT_EQ(m_bucket(65), 128);
  EXPECT_EQ(m_bucket(4096), 4096);
  EXPECT_EQ(m_bucket(4097), 8192);
  EXPECT_EQ(m_bucket(int64_t(1) << 16), int64_t(1) << 16);
  EXPECT_EQ(m_bucket(int64_t(1) << 30), int64_t(1) << 16);  // one bucket for everything larger
}

TEST(TuningDb, FindUsesTheBucket) {
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 4096, 7168, 2048}, entry(4096, 7168, 2048, 256, 128, 3));
  ASSERT_NE(db.find({KernelKind::Gemm1D2D, 3000, 7168, 2048}), nullptr);  // same bucket (2049..4096]
  EXPECT_EQ(db.find({KernelKind::Gemm1D2D, 3000, 7168, 2048})->spec.config.block_m, 256);
  EXPECT_EQ(db.find({KernelKind::Gemm1D2D, 2048, 7168, 2048}), nullptr);  // other bucket
  EXPECT_EQ(db.find({KernelKind::Gemm1D2D, 4096, 7168, 4096}), nullptr);  // other K
}

// Entries tuned at several M of one bucket stay apart: each problem takes the one tuned at its
// own M, else the nearest by ratio. (One entry per bucket let `fp8gemm tune` on M = 4096 and
// M = 3000 of one N, K keep only the last one's winner, which ran M = 4096 up to 10 % slower
// than the planner's choice: docs/PERFORMANCE.md, log 129.)
TEST(TuningDb, EntriesOfOneBucketKeepTheirM) {
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 4096, 3584, 18944}, entry(4096, 3584, 18944, 128, 192, 4));
  db.put({KernelKind::Gemm1D2D, 3000, 3584, 18944}, entry(3000, 3584, 18944, 192, 112, 4));
  db.put({KernelKind::Gemm1D2D, 1000, 3584, 18944}, entry(1000, 3584, 18944, 128, 128, 5));
  EXPECT_EQ(db.entries().size(), 3u);
  auto block_m_at = [&db](int64_t m) {
    const TunedEntry* e = db.find({KernelKind::Gemm1D2D, m, 3584, 18944});
    return e == nullptr ? 0 : e->spec.config.block_m;
  };
  EXPECT_EQ(block_m_at(4096), 128);
  EXPECT_EQ(block_m_at(3000), 192);
  EXPECT_EQ(block_m_at(3600), 128);  // 4096 / 3600 < 3600 / 3000
  EXPECT_EQ(block_m_at(3400), 192);
  EXPECT_EQ(block_m_at(2049), 192);  // the bucket (2048, 4096]
  EXPECT_EQ(block_m_at(1024), 128);  // the bucket (512, 1024]: only M = 1000
  EXPECT_EQ(block_m_at(2048), 0);    // (1024, 2048]: none
  EXPECT_EQ(block_m_at(4097), 0);
  // Equally near: the larger M.
  TuningDb tie(h200());
  tie.put({KernelKind::Gemm1D2D, 2400, 7168, 2048}, entry(2400, 7168, 2048, 128, 128, 5));
  tie.put({KernelKind::Gemm1D2D, 3750, 7168, 2048}, entry(3750, 7168, 2048, 256, 128, 3));
  ASSERT_NE(tie.find({KernelKind::Gemm1D2D, 3000, 7168, 2048}), nullptr);
  EXPECT_EQ(tie.find({KernelKind::Gemm1D2D, 3000, 7168, 2048})->m_measured, 3750);
  // Another N or K shares no entry, whatever the key's text has in common.
  EXPECT_EQ(db.find({KernelKind::Gemm1D2D, 4096, 358, 18944}), nullptr);
  EXPECT_EQ(db.find({KernelKind::Gemm1D2D, 4096, 3584, 1894}), nullptr);
  std::string why;
  const std::optional<TuningDb> back = TuningDb::from_json(db.to_json(), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->to_json(), db.to_json());
  EXPECT_EQ(back->find({KernelKind::Gemm1D2D, 3000, 3584, 18944})->spec.config.block_m, 192);
  // An entry is stored under its problem's M whatever M it says it was measured at, so the
  // file always reads back.
  TuningDb other(h200());
  other.put({KernelKind::Gemm1D2D, 2500, 3584, 18944}, entry(4000, 3584, 18944, 128, 192, 4));
  EXPECT_EQ(other.find({KernelKind::Gemm1D2D, 2500, 3584, 18944})->m_measured, 2500);
  ASSERT_TRUE(TuningDb::from_json(other.to_json(), &why)) << why;
}

TEST(TuningDb, JsonRoundTrip) {
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 4096, 7168, 2048}, entry(4096, 7168, 2048, 256, 128, 3));
  db.put({KernelKind::Gemm1D2D, 1, 7168, 16384}, entry(1, 7168, 16384, 64, 64, 8));
  std::string why;
  const std::optional<TuningDb> back = TuningDb::from_json(db.to_json(), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->metadata(), h200());
  ASSERT_EQ(back->entries().size(), 2u);
  const TunedEntry* e = back->find({KernelKind::Gemm1D2D, 1, 7168, 16384});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->spec, entry(1, 7168, 16384, 64, 64, 8).spec);
  EXPECT_DOUBLE_EQ(e->us, 100.0);
  EXPECT_DOUBLE_EQ(e->heuristic_us, 110.0);
}

TEST(TuningDb, FileRoundTripAndMissingFile) {
  fp8gemm::test::TempDir dir;
  const std::string path = tuning_db_path(dir.path(), h200());
  EXPECT_NE(path.find("/tuning/NVIDIA_H200-132sm.json"), std::string::npos) << path;
  std::string warning;
  EXPECT_TRUE(load_tuning_db(path, h200(), &warning).entries().empty());
  EXPECT_EQ(warning, "");  // no file yet is not worth a warning
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 128, 2112, 7168}, entry(128, 2112, 7168, 64, 64, 8));
  ASSERT_EQ(save_tuning_db(path, db), 0);
  const TuningDb back = load_tuning_db(path, h200(), &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(back.entries().size(), 1u);
}

TEST(TuningDb, MetadataMismatchIsIgnoredWithAWarning) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/db.json";
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 128, 2112, 7168}, entry(128, 2112, 7168, 64, 64, 8));
  ASSERT_EQ(save_tuning_db(path, db), 0);
  for (TuningMetadata other : {TuningMetadata{"NVIDIA H100 80GB HBM3", 132, 13000, "13.0", "0.1.0"},
                               TuningMetadata{"NVIDIA H200", 114, 13000, "13.0", "0.1.0"},
                               TuningMetadata{"NVIDIA H200", 132, 12080, "13.0", "0.1.0"},
                               TuningMetadata{"NVIDIA H200", 132, 13000, "12.8", "0.1.0"},
                               TuningMetadata{"NVIDIA H200", 132, 13000, "13.0", "0.2.0"}}) {
    std::string warning;
    EXPECT_TRUE(load_tuning_db(path, other, &warning).entries().empty());
    EXPECT_NE(warning.find("measured elsewhere"), std::string::npos) << warning;
  }
}

TEST(TuningDb, CorruptOrIllegalFilesAreIgnoredWithAWarning) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/db.json";
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 128, 2112, 7168}, entry(128, 2112, 7168, 64, 64, 8));
  const std::string good = db.to_json();
  std::string illegal = good;  // a config no kernel can have
  illegal.replace(illegal.find("\"block_n\": 64"), 13, "\"block_n\": 72");
  std::string moved = good;  // an entry under another shape's key
  moved.replace(moved.find("n2112"), 5, "n4096");
  for (const std::string& text : {good.substr(0, good.size() / 2), std::string("\x00\x01garbage", 9),
                                  std::string("{}"), std::string("[1, 2, 3]"), illegal, moved}) {
    ASSERT_EQ(write_file_atomic(path, text), 0);
    std::string warning;
    EXPECT_TRUE(load_tuning_db(path, h200(), &warning).entries().empty());
    EXPECT_NE(warning.find("ignored"), std::string::npos) << warning;
  }
  // Saving over a corrupt file replaces it with a valid one.
  ASSERT_EQ(save_tuning_db(path, db), 0);
  std::string warning;
  EXPECT_EQ(load_tuning_db(path, h200(), &warning).entries().size(), 1u);
  EXPECT_EQ(warning, "");
}

// Numbers that are not the integers a field holds (132.5 SMs was read as 132 and the entries
// used; 1e300 converted to int is undefined) and a spec nested past any level the library
// writes (printing it recursed per level: a stack overflow in every process that loaded the
// file) make the file ignored like any corrupt one.
TEST(TuningDb, NonIntegersAndDeepNestingAreIgnoredWithAWarning) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/db.json";
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 128, 2112, 7168}, entry(128, 2112, 7168, 64, 64, 8));
  const std::string good = db.to_json();
  auto replaced = [&good](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from << " in " << good;
    return text.replace(at, from.size(), to);
  };
  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {replaced("\"sms\": 132", "\"sms\": 132.5"), "sms"},
           {replaced("\"sms\": 132", "\"sms\": 1e300"), "sms"},
           {replaced("\"format\": 4", "\"format\": 4.0"), "format"},
           {replaced("\"m\": 128", "\"m\": 128.5"), "m"},
           {replaced("\"groups\": 1", "\"groups\": 1e300"), "groups"},
           {replaced("\"spec\": {", "\"spec\": {\"deep\": " + std::string(1000000, '[') + std::string(1000000, ']') + ", "),
            "nested more than"}}) {
    ASSERT_EQ(write_file_atomic(path, text), 0);
    std::string warning;
    EXPECT_TRUE(load_tuning_db(path, h200(), &warning).entries().empty()) << field;
    EXPECT_NE(warning.find("ignored"), std::string::npos) << warning;
    EXPECT_NE(warning.find(field), std::string::npos) << warning;
  }
}

// Writers that each add their own entries: none is lost, the file stays valid, and no
// temporary file is left behind. Threads and processes both.
TEST(TuningDb, ConcurrentWritersMerge) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/tuning/db.json";
  constexpr int kWriters = 8, kEach = 5;
  auto write_some = [&](int writer) {
    for (int i = 0; i < kEach; ++i) {
      TuningDb db(h200());
      const int64_t n = 1024 + 16 * (writer * kEach + i);
      db.put({KernelKind::Gemm1D2D, 64, n, 2048}, entry(64, n, 2048, 64, 64, 8));
      ASSERT_EQ(save_tuning_db(path, db), 0);
    }
  };
  // The processes are forked before the threads start: a child forked while another thread
  // holds a lock (the allocator's) may wait on it for ever (it did under AddressSanitizer).
  std::vector<pid_t> children;
  for (int w = kWriters / 2; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      write_some(w);
      ::_exit(testing::Test::HasFailure() ? 1 : 0);
    }
    children.push_back(pid);
  }
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters / 2; ++w) threads.emplace_back(write_some, w);
  for (std::thread& t : threads) t.join();
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::string warning;
  const TuningDb db = load_tuning_db(path, h200(), &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(db.entries().size(), size_t(kWriters * kEach));
  for (const std::string& name : list_files(dir.path() + "/tuning"))
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;
}

namespace {

TunedEntry grouped_entry(KernelKind kind, int64_t m, int64_t n, int64_t k, int block_m, int block_n) {
  TunedEntry e = entry(m, n, k, block_m, block_n, 4);
  e.spec.kind = kind;
  if (kind == KernelKind::KGrouped) e.spec.k = 0;  // K at run time
  return e;
}

}  // namespace

// Masked and k-grouped problems are keyed by their groups too (they plan and run differently
// per count); a contiguous one is not (its rows are planned as one matrix). Problems of one
// group keep the format-1 key.
TEST(TuningDb, GroupedKeys) {
  EXPECT_EQ(TuningDb::key({KernelKind::Gemm1D2D, 4096, 7168, 2048}), "gemm1d2d:n7168:k2048:m4096");
  EXPECT_EQ(TuningDb::key({KernelKind::Gemm1D2D, 4096, 7168, 2048, 8}), "gemm1d2d:n7168:k2048:m4096");
  EXPECT_EQ(TuningDb::key({KernelKind::GroupedMasked, 640, 4096, 2048, 32}), "gemm1d2d_gm:n4096:k2048:m640:g32");
  EXPECT_EQ(TuningDb::key({KernelKind::GroupedMasked, 640, 4096, 2048, 1}), "gemm1d2d_gm:n4096:k2048:m640");
  EXPECT_EQ(TuningDb::bucket_key({KernelKind::GroupedMasked, 640, 4096, 2048, 32}), "gemm1d2d_gm:n4096:k2048:m1024:g32");
  EXPECT_EQ(TuningDb::key({KernelKind::KGrouped, 8 * 4096, 7168, 4096, 8}), "gemm1d1d_kg:n7168:k4096:m32768:g8");
  EXPECT_EQ(TuningDb::key({KernelKind::GroupedContiguous, 32768, 4096, 7168, 8}),
            TuningDb::key({KernelKind::GroupedContiguous, 32768, 4096, 7168, 4}));
  EXPECT_EQ((GemmProblem{KernelKind::GroupedMasked, 0, 0, 0, 0}.plan_groups()), 1);
  EXPECT_EQ((GemmProblem{KernelKind::KGrouped, 0, 0, 0, 16}.plan_groups()), 16);
  EXPECT_EQ((GemmProblem{KernelKind::Gemm1D1D, 0, 0, 0, 16}.plan_groups()), 1);

  TuningDb db(h200());
  db.put({KernelKind::GroupedMasked, 640, 4096, 2048, 32}, grouped_entry(KernelKind::GroupedMasked, 640, 4096, 2048, 64, 128));
  ASSERT_NE(db.find({KernelKind::GroupedMasked, 600, 4096, 2048, 32}), nullptr);  // same bucket and experts
  EXPECT_EQ(db.find({KernelKind::GroupedMasked, 640, 4096, 2048, 6}), nullptr);   // other experts
  EXPECT_EQ(db.find({KernelKind::GroupedMasked, 640, 4096, 2048}), nullptr);      // planned as one matrix
  EXPECT_EQ(db.find({KernelKind::Gemm1D2D, 640, 4096, 2048, 32}), nullptr);       // other kind
  EXPECT_EQ(db.find({KernelKind::GroupedMasked, 640, 4096, 2048, 32})->groups, 32);
}

// Entries of every GEMM kind survive JSON and the file, with their K and groups.
TEST(TuningDb, GroupedEntriesRoundTrip) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/tuning/db.json";
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 4096, 7168, 2048}, entry(4096, 7168, 2048, 256, 128, 3));
  db.put({KernelKind::GroupedContiguous, 32768, 4096, 7168, 8}, grouped_entry(KernelKind::GroupedContiguous, 32768, 4096, 7168, 128, 128));
  db.put({KernelKind::GroupedMasked, 640, 4096, 2048, 32}, grouped_entry(KernelKind::GroupedMasked, 640, 4096, 2048, 64, 128));
  db.put({KernelKind::KGrouped, 8 * 4096, 7168, 4096, 8}, grouped_entry(KernelKind::KGrouped, 8 * 4096, 7168, 4096, 128, 112));
  ASSERT_EQ(save_tuning_db(path, db), 0);
  std::string warning;
  const TuningDb back = load_tuning_db(path, h200(), &warning);
  EXPECT_EQ(warning, "");
  ASSERT_EQ(back.entries().size(), 4u);
  EXPECT_EQ(back.to_json(), db.to_json());
  const TunedEntry* kg = back.find({KernelKind::KGrouped, 8 * 4096, 7168, 4096, 8});
  ASSERT_NE(kg, nullptr);
  EXPECT_EQ(kg->spec, grouped_entry(KernelKind::KGrouped, 8 * 4096, 7168, 4096, 128, 112).spec);
  EXPECT_EQ(kg->k, 4096);
  EXPECT_EQ(kg->groups, 8);
  EXPECT_EQ(back.find({KernelKind::KGrouped, 8 * 4096, 7168, 4096, 4}), nullptr);
  EXPECT_NE(back.find({KernelKind::GroupedContiguous, 30000, 4096, 7168, 4}), nullptr);  // any expert count
  EXPECT_NE(back.find({KernelKind::GroupedMasked, 640, 4096, 2048, 32}), nullptr);
  EXPECT_NE(back.find({KernelKind::Gemm1D2D, 4096, 7168, 2048}), nullptr);
}

// A file written before the grouped kinds were tuned (format 1: no K or groups per entry)
// still loads, its entries found under their keys; the next save merges them into a
// format-4 file (the library passes over such unstamped entries: entry_stamp.hpp).
TEST(TuningDb, Format1FilesStillLoad) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/tuning/db.json";
  const std::string old = R"json({
  "format": 1,
  "about": "fp8gemm tuning database: measured best kernel config per (kind, N, K, M bucket)",
  "metadata": {"gpu": "NVIDIA H200", "sms": 132, "driver": 13000, "nvrtc": "13.0", "library": "0.1.0"},
  "entries": {
    "gemm1d2d:n7168:k2048:m4096": {"spec": {"kind": "gemm1d2d", "n": 7168, "k": 2048, "block_m": 256,
      "block_n": 128, "stages": 3, "group_n": 8, "multicast": 0, "tma_store": 0, "split_k": 1},
      "m": 4096, "us": 100.0, "heuristic": "x", "heuristic_us": 110.0}}})json";
  ASSERT_EQ(make_dirs(dir.path() + "/tuning"), 0);
  ASSERT_EQ(write_file_atomic(path, old), 0);
  std::string warning;
  const TuningDb loaded = load_tuning_db(path, h200(), &warning);
  EXPECT_EQ(warning, "");
  const TunedEntry* e = loaded.find({KernelKind::Gemm1D2D, 3000, 7168, 2048});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->spec, entry(4096, 7168, 2048, 256, 128, 3).spec);
  EXPECT_EQ(e->k, 2048);
  EXPECT_EQ(e->groups, 1);

  TuningDb more(h200());
  more.put({KernelKind::GroupedMasked, 640, 4096, 2048, 32}, grouped_entry(KernelKind::GroupedMasked, 640, 4096, 2048, 64, 128));
  ASSERT_EQ(save_tuning_db(path, more), 0);
  const TuningDb merged = load_tuning_db(path, h200(), &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(merged.entries().size(), 2u);
  EXPECT_NE(merged.find({KernelKind::Gemm1D2D, 4096, 7168, 2048}), nullptr);
  EXPECT_NE(read_file(path)->find("\"format\": 4"), std::string::npos);
}

// A format-2 file (one entry per M bucket, keyed by the bucket) loads with each entry keyed
// by the M it was tuned at; an entry under another bucket's key is still a mismatch.
TEST(TuningDb, Format2FilesStillLoad) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/db.json";
  const std::string old = R"json({
  "format": 2,
  "metadata": {"gpu": "NVIDIA H200", "sms": 132, "driver": 13000, "nvrtc": "13.0", "library": "0.1.0"},
  "entries": {
    "gemm1d2d:n7168:k2048:m4096": {"spec": {"kind": "gemm1d2d", "n": 7168, "k": 2048, "block_m": 256,
      "block_n": 128, "stages": 3, "group_n": 8, "multicast": 0, "tma_store": 0, "split_k": 1},
      "m": 3000, "us": 100.0, "heuristic": "x", "heuristic_us": 110.0, "k": 2048, "groups": 1}}})json";
  ASSERT_EQ(write_file_atomic(path, old), 0);
  std::string warning;
  const TuningDb loaded = load_tuning_db(path, h200(), &warning);
  EXPECT_EQ(warning, "");
  ASSERT_EQ(loaded.entries().size(), 1u);
  EXPECT_EQ(loaded.entries().begin()->first, "gemm1d2d:n7168:k2048:m3000");
  ASSERT_NE(loaded.find({KernelKind::Gemm1D2D, 4096, 7168, 2048}), nullptr);  // its bucket
  EXPECT_EQ(loaded.find({KernelKind::Gemm1D2D, 2048, 7168, 2048}), nullptr);
  std::string elsewhere = old;
  elsewhere.replace(elsewhere.find(":m4096"), 6, ":m8192");
  ASSERT_EQ(write_file_atomic(path, elsewhere), 0);
  EXPECT_TRUE(load_tuning_db(path, h200(), &warning).entries().empty());
  EXPECT_NE(warning.find("does not match"), std::string::npos) << warning;
  // Format 3 keys by the M itself: the bucket's key no longer matches an entry tuned at 3000.
  std::string bucket_keyed = old;
  bucket_keyed.replace(bucket_keyed.find("\"format\": 2"), 11, "\"format\": 3");
  ASSERT_EQ(write_file_atomic(path, bucket_keyed), 0);
  EXPECT_TRUE(load_tuning_db(path, h200(), &warning).entries().empty());
  EXPECT_NE(warning.find("does not match"), std::string::npos) << warning;
}

// What a grouped entry must agree with: its key (kind, N, K, M bucket, groups); a format this
// library does not know is named in the warning.
TEST(TuningDb, MismatchedGroupedEntriesAndUnknownFormatsAreIgnored) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/db.json";
  TuningDb db(h200());
  db.put({KernelKind::GroupedMasked, 640, 4096, 2048, 32}, grouped_entry(KernelKind::GroupedMasked, 640, 4096, 2048, 64, 128));
  const std::string good = db.to_json();
  auto changed = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
  };
  for (const std::string& text : {changed(":g32\"", ":g16\""), changed("\"groups\": 32", "\"groups\": 16"),
                                  changed("\"groups\": 32", "\"groups\": 0"), changed("\"format\": 4", "\"format\": 5"),
                                  changed("\"format\": 4", "\"format\": 0")}) {
    ASSERT_EQ(write_file_atomic(path, text), 0);
    std::string warning;
    EXPECT_TRUE(load_tuning_db(path, h200(), &warning).entries().empty()) << text;
    EXPECT_NE(warning.find("ignored"), std::string::npos) << warning;
  }
  ASSERT_EQ(write_file_atomic(path, changed("\"format\": 4", "\"format\": 5")), 0);
  std::string warning;
  load_tuning_db(path, h200(), &warning);
  EXPECT_NE(warning.find("format 5 (this library reads 1 to 4)"), std::string::npos) << warning;
}

// A database of every kind, mutated at random (bytes flipped, cut, inserted or repeated;
// numbers swapped for edge values and other JSON types): each mutant is either refused with
// a reason or read into entries that are all legal kernels, each stored under the key its
// own problem has (what `find` serves is what was tuned for it). (Clean under
// -fsanitize=address,undefined.)
TEST(TuningDb, MutatedFilesAreRefusedOrHoldOnlyLegalEntries) {
  TuningDb db(h200());
  db.put({KernelKind::Gemm1D2D, 4096, 7168, 2048}, entry(4096, 7168, 2048, 256, 128, 3));
  db.put({KernelKind::Gemm1D2D, 128, 2112, 7168}, entry(128, 2112, 7168, 64, 64, 8));
  db.put({KernelKind::GroupedContiguous, 32768, 4096, 7168, 8}, grouped_entry(KernelKind::GroupedContiguous, 32768, 4096, 7168, 128, 128));
  db.put({KernelKind::GroupedMasked, 640, 4096, 2048, 32}, grouped_entry(KernelKind::GroupedMasked, 640, 4096, 2048, 64, 128));
  db.put({KernelKind::KGrouped, 8 * 4096, 7168, 4096, 8}, grouped_entry(KernelKind::KGrouped, 8 * 4096, 7168, 4096, 128, 112));
  const std::string good = db.to_json();
  const std::vector<std::string> values = {"0", "-1", "1", "3", "64", "2147483647", "2147483648",
                                           "9223372036854775807", "18446744073709551615", "1e300", "-1e300", "1.5",
                                           "\"x\"", "null", "[]", "{}", "true"};
  std::mt19937_64 rng(11);
  int read = 0, refused = 0;
  for (int it = 0; it < 20000; ++it) {
    const std::string text = fp8gemm::test::mutate_text(good, rng, values);
    std::string why;
    const std::optional<TuningDb> back = TuningDb::from_json(text, &why);
    if (!back) {
      ++refused;
      EXPECT_FALSE(why.empty()) << text;
      continue;
    }
    ++read;
    for (const auto& [key, e] : back->entries()) {
      EXPECT_EQ(spec_illegal_reason(e.spec), "") << key << "\n" << text;
      const GemmProblem problem{e.spec.kind, e.m_measured, e.spec.n, e.k, e.groups};
      EXPECT_EQ(TuningDb::key(problem), key) << text;
      const TunedEntry* found = back->find(problem);
      ASSERT_NE(found, nullptr) << key;
      EXPECT_EQ(found->spec, e.spec) << key;
    }
  }
  EXPECT_GT(read, 500);  // mutants that still hold entries (a digit of a time, of a name)
  EXPECT_GT(refused, 500);
}
