#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "cache/cache_entry.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "runtime/kernel_store.hpp"
#include "runtime/stats.hpp"
#include "support/temp_dir.hpp"
#include "util/files.hpp"

using namespace fp8gemm::detail;
using fp8gemm::test::TempDir;

namespace {

// Small kernels: they compile in a fraction of a second.
KernelSpec small_spec(int block_n) {
  return KernelSpec{KernelKind::Gemm1D2D, 256, 256, KernelConfig{64, block_n, 2, 8}};
}

std::string only_entry(const std::string& dir) {
  const auto files = list_files(dir + "/kernels");
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? "" : dir + "/kernels/" + files[0];
}

}  // namespace

TEST(KernelStore, CompileThenMemoryThenDisk) {
  TempDir dir;
  DiskCache disk(dir.path());
  KernelStore store(disk);
  KernelSource source;
  const auto first = store.get(small_spec(16), &source);
  EXPECT_EQ(source, KernelSource::Compiled);
  EXPECT_FALSE(first->cubin.empty());
  store.get(small_spec(16), &source);
  EXPECT_EQ(source, KernelSource::Memory);

  DiskCache disk2(dir.path());
  KernelStore fresh(disk2);
  const auto again = fresh.get(small_spec(16), &source);
  EXPECT_EQ(source, KernelSource::Disk);
  EXPECT_EQ(again->cubin, first->cubin);
  EXPECT_EQ(again->lowered_name, first->lowered_name);
  EXPECT_EQ(again->key, first->key);
}

class BrokenEntry : public testing::TestWithParam<const char*> {};

TEST_P(BrokenEntry, IsRecompiledAndReplaced) {
  const std::string damage = GetParam();
  TempDir dir;
  {
    DiskCache disk(dir.path());
    KernelStore(disk).get(small_spec(32));
  }
  const std::string path = only_entry(dir.path());
  std::string bytes = *read_file(path);
  if (damage == "corrupted") bytes[bytes.size() / 2] ^= 0x5a;
  if (damage == "truncated") bytes.resize(bytes.size() / 2);
  if (damage == "garbage") bytes = std::string(bytes.size(), '\x42');
  ASSERT_EQ(write_file_atomic(path, bytes), 0);

  DiskCache disk(dir.path());
  KernelStore store(disk);
  KernelSource source;
  testing::internal::CaptureStderr();
  const auto binary = store.get(small_spec(32), &source);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(source, KernelSource::Compiled);
  EXPECT_EQ(disk.rejected(), 1u);
  EXPECT_NE(err.find("recompiling"), std::string::npos) << err;
  std::string why;
  EXPECT_TRUE(decode_cache_entry(*read_file(path), binary->key, &why)) << "entry not replaced: " << why;
}

INSTANTIATE_TEST_SUITE_P(Damage, BrokenEntry, testing::Values("corrupted", "truncated", "garbage"));

TEST(KernelStore, ForeignEntryUnderAnotherNameIsRejected) {
  TempDir dir;
  DiskCache disk(dir.path());
  KernelStore store(disk);
  const auto a = store.get(small_spec(16));
  const auto b = store.get(small_spec(48));
  // Put a's entry where b's belongs.
  const std::string a_path = disk.entry_path(a->spec.slug(), a->key);
  const std::string b_path = disk.entry_path(b->spec.slug(), b->key);
  ASSERT_EQ(write_file_atomic(b_path, *read_file(a_path)), 0);
  DiskCache disk2(dir.path());
  KernelStore fresh(disk2);
  KernelSource source;
  testing::internal::CaptureStderr();
  const auto again = fresh.get(small_spec(48), &source);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(source, KernelSource::Compiled);
  EXPECT_NE(err.find("another key"), std::string::npos) << err;
  EXPECT_EQ(again->cubin, b->cubin);
}

TEST(KernelStore, ThreadsOfOneStoreCompileOnce) {
  TempDir dir;
  DiskCache disk(dir.path());
  KernelStore store(disk);
  const uint64_t before = counters().kernels_compiled.load();
  std::vector<std::thread> threads;
  std::vector<std::string> cubins(8);
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { cubins[t] = store.get(small_spec(64))->cubin; });
  for (auto& t : threads) t.join();
  EXPECT_EQ(counters().kernels_compiled.load() - before, 1u);
  for (const std::string& c : cubins) EXPECT_EQ(c, cubins[0]);
}

TEST(KernelStore, EightThreadsWithSeparateStoresShareOneDirectory) {
  // Like 8 processes: each thread has its own memory cache, all publish into one directory.
  TempDir dir;
  const std::vector<KernelSpec> specs = {small_spec(16), small_spec(32), small_spec(48)};
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      try {
        DiskCache disk(dir.path());
        KernelStore store(disk);
        for (const KernelSpec& s : specs) store.get(s);
      } catch (...) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const auto files = list_files(dir.path() + "/kernels");
  EXPECT_EQ(files.size(), specs.size());  // one entry each, no temporary files left
  DiskCache disk(dir.path());
  KernelStore store(disk);
  for (const KernelSpec& s : specs) {
    KernelSource source;
    store.get(s, &source);
    EXPECT_EQ(source, KernelSource::Disk) << s.slug();
  }
  EXPECT_EQ(disk.rejected(), 0u);
}

TEST(KernelStore, MemoryOnlyCacheStillServesKernels) {
  testing::internal::CaptureStderr();
  DiskCache disk("/proc/self/fp8gemm-cache");
  KernelStore store(disk);
  KernelSource source;
  store.get(small_spec(16), &source);
  EXPECT_EQ(source, KernelSource::Compiled);
  store.get(small_spec(16), &source);
  EXPECT_EQ(source, KernelSource::Memory);
  testing::internal::GetCapturedStderr();
}

// A request that may compile never takes the failure of a cache-only request it met in
// flight for the same kernel (a prewarm beside a cache-only kernel_name or GEMM threw
// NotCached): it builds the kernel itself.
TEST(KernelStore, CacheOnlyMissDoesNotFailACompilingRequest) {
  TempDir dir;
  DiskCache disk(dir.path());
  KernelStore store(disk);
  int delay_us = 0;
  for (int block_n : {16, 32, 48, 64, 80, 96, 112, 128}) {
    SCOPED_TRACE(block_n);
    std::atomic<bool> started{false};
    std::string compiling_error;
    std::thread cache_only([&] {
      started.store(true);
      try {
        store.get(small_spec(block_n), nullptr, /*may_compile=*/false);
      } catch (const fp8gemm::Error&) {
      }
    });
    // Arrive while the cache-only request is looking for the entry (it generates the
    // source, hashes it and reads the disk: some 20 to 100 us), at a different delay each time.
    while (!started.load()) {}
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(delay_us);
    while (std::chrono::steady_clock::now() < until) {}
    delay_us += 4;
    try {
      EXPECT_FALSE(store.get(small_spec(block_n))->cubin.empty());
    } catch (const fp8gemm::Error& e) {
      compiling_error = e.what();
    }
    cache_only.join();
    EXPECT_EQ(compiling_error, "");
  }
}

// The disk loses entries (a cleared cache) or its directory (deleted): persist() writes a
// kernel the store holds again, and a write into a deleted directory recreates it instead of
// turning the cache memory-only for the rest of the process.
TEST(KernelStore, EntriesLostOnDiskAreWrittenAgain) {
  TempDir dir;
  DiskCache disk(dir.path());
  KernelStore store(disk);
  const auto binary = store.get(small_spec(16));
  const std::string entry = only_entry(dir.path());
  ASSERT_EQ(::unlink(entry.c_str()), 0);
  store.persist(small_spec(16));
  EXPECT_TRUE(read_file(entry).has_value());
  // The whole directory: the next write creates it again.
  ASSERT_EQ(::unlink(entry.c_str()), 0);
  ASSERT_EQ(::rmdir((dir.path() + "/kernels").c_str()), 0);
  store.get(small_spec(32));
  EXPECT_FALSE(disk.memory_only()) << disk.memory_only_reason();
  EXPECT_EQ(list_files(dir.path() + "/kernels").size(), 1u);
  store.persist(small_spec(16));
  EXPECT_EQ(list_files(dir.path() + "/kernels").size(), 2u);
}
