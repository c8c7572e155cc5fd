// The tuning database: M buckets, JSON round trip, what invalidates a file (corruption,
// another device or software version, illegal entries), and concurrent writers.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>
#include <vector>

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
  db.put(KernelKind::Gemm1D2D, 4096, 7168, 2048, entry(4096, 7168, 2048, 256, 128, 3));
  ASSERT_NE(db.find(KernelKind::Gemm1D2D, 3000, 7168, 2048), nullptr);  // same bucket (2049..4096]
  EXPECT_EQ(db.find(KernelKind::Gemm1D2D, 3000, 7168, 2048)->spec.config.block_m, 256);
  EXPECT_EQ(db.find(KernelKind::Gemm1D2D, 2048, 7168, 2048), nullptr);  // other bucket
  EXPECT_EQ(db.find(KernelKind::Gemm1D2D, 4096, 7168, 4096), nullptr);  // other K
}

TEST(TuningDb, JsonRoundTrip) {
  TuningDb db(h200());
  db.put(KernelKind::Gemm1D2D, 4096, 7168, 2048, entry(4096, 7168, 2048, 256, 128, 3));
  db.put(KernelKind::Gemm1D2D, 1, 7168, 16384, entry(1, 7168, 16384, 64, 64, 8));
  std::string why;
  const std::optional<TuningDb> back = TuningDb::from_json(db.to_json(), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->metadata(), h200());
  ASSERT_EQ(back->entries().size(), 2u);
  const TunedEntry* e = back->find(KernelKind::Gemm1D2D, 1, 7168, 16384);
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
  db.put(KernelKind::Gemm1D2D, 128, 2112, 7168, entry(128, 2112, 7168, 64, 64, 8));
  ASSERT_EQ(save_tuning_db(path, db), 0);
  const TuningDb back = load_tuning_db(path, h200(), &warning);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(back.entries().size(), 1u);
}

TEST(TuningDb, MetadataMismatchIsIgnoredWithAWarning) {
  fp8gemm::test::TempDir dir;
  const std::string path = dir.path() + "/db.json";
  TuningDb db(h200());
  db.put(KernelKind::Gemm1D2D, 128, 2112, 7168, entry(128, 2112, 7168, 64, 64, 8));
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
  db.put(KernelKind::Gemm1D2D, 128, 2112, 7168, entry(128, 2112, 7168, 64, 64, 8));
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
      db.put(KernelKind::Gemm1D2D, 64, n, 2048, entry(64, n, 2048, 64, 64, 8));
      ASSERT_EQ(save_tuning_db(path, db), 0);
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters / 2; ++w) threads.emplace_back(write_some, w);
  std::vector<pid_t> children;
  for (int w = kWriters / 2; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      write_some(w);
      ::_exit(testing::Test::HasFailure() ? 1 : 0);
    }
    children.push_back(pid);
  }
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
