#include <gtest/gtest.h>

#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/disk_cache.hpp"
#include "support/temp_dir.hpp"
#include "util/files.hpp"

using namespace fp8gemm::detail;
using fp8gemm::test::TempDir;

namespace {
CacheEntry entry(const std::string& slug, char key_char) {
  CacheEntry e;
  e.key = std::string(64, key_char);
  e.slug = slug;
  e.lowered_name = "_Z1kv";
  e.cubin = std::string(300, 'x');
  return e;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST(DiskCache, MissThenHitWithReadableName) {
  TempDir dir;
  DiskCache cache(dir.path());
  EXPECT_FALSE(cache.memory_only());
  // Nothing is created before the first store (read-only commands leave the disk alone).
  EXPECT_EQ(cache.state(), "read-write (created on first write)");
  const CacheEntry e = entry("gemm1d2d_n8_k16_bm64_bn16_s2_g8", 'a');
  EXPECT_FALSE(cache.load(e.slug, e.key));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/kernels"));
  cache.store(e);
  EXPECT_EQ(cache.state(), "read-write");
  const auto hit = cache.load(e.slug, e.key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->cubin, e.cubin);
  const auto files = list_files(dir.path() + "/kernels");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0], "gemm1d2d_n8_k16_bm64_bn16_s2_g8-aaaaaaaaaaaaaaaa.fp8k");
  EXPECT_EQ(cache.entry_path(e.slug, e.key), dir.path() + "/kernels/" + files[0]);
}

TEST(DiskCache, UnwritableLocationIsMemoryOnlyWithOneWarning) {
  // /proc/self exists and is not writable, even for root.
  testing::internal::CaptureStderr();
  DiskCache cache("/proc/self/fp8gemm-cache");
  cache.store(entry("a", 'a'));
  cache.store(entry("b", 'b'));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(cache.memory_only());
  EXPECT_NE(cache.state().find("memory-only"), std::string::npos) << cache.state();
  EXPECT_EQ(count(err, "memory-only"), 1) << err;
  EXPECT_FALSE(cache.load("a", std::string(64, 'a')));
}

TEST(DiskCache, PathThroughAFileIsMemoryOnly) {
  TempDir dir;
  ASSERT_EQ(write_file_atomic(dir.path() + "/file", "x"), 0);
  testing::internal::CaptureStderr();
  DiskCache cache(dir.path() + "/file/cache");
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(cache.memory_only());
  cache.store(entry("a", 'a'));  // no throw, nothing written
}

TEST(DiskCache, ReadOnlyDirectoryServesExistingEntriesMemoryOnly) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permission bits do not stop root (the /proc test covers unwritable caches)";
  TempDir dir;
  const CacheEntry e = entry("ro", 'r');
  DiskCache(dir.path()).store(e);
  ASSERT_EQ(::chmod((dir.path() + "/kernels").c_str(), 0555), 0);
  testing::internal::CaptureStderr();
  DiskCache cache(dir.path());
  cache.store(entry("other", 'o'));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(cache.memory_only());
  EXPECT_EQ(count(err, "memory-only"), 1) << err;
  EXPECT_TRUE(cache.load(e.slug, e.key));  // a shipped, read-only cache still serves its entries
  ::chmod((dir.path() + "/kernels").c_str(), 0755);
}

TEST(DiskCache, CorruptEntryIsRejectedAndCounted) {
  TempDir dir;
  DiskCache cache(dir.path());
  const CacheEntry e = entry("c", 'c');
  cache.store(e);
  std::string bytes = *read_file(cache.entry_path(e.slug, e.key));
  bytes[bytes.size() - 1] ^= 1;
  ASSERT_EQ(write_file_atomic(cache.entry_path(e.slug, e.key), bytes), 0);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(cache.load(e.slug, e.key));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("recompiling"), std::string::npos) << err;
  EXPECT_EQ(cache.rejected(), 1u);
}
