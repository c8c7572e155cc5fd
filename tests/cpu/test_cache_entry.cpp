#include <gtest/gtest.h>

#include "cache/cache_entry.hpp"

using namespace fp8gemm::detail;

namespace {
CacheEntry sample() {
  CacheEntry e;
  e.key = std::string(64, 'c');
  e.slug = "gemm1d2d_n8_k16_bm64_bn16_s2_g8";
  e.lowered_name = "_Z6kernelv";
  e.resources.registers = 168;
  e.resources.performance_notes = {"ptxas info : (C7514) example"};
  e.cubin = std::string("\x7f" "ELF", 4) + std::string(1000, '\x01') + std::string("\0\n\n", 3);
  return e;
}
}  // namespace

TEST(CacheEntry, RoundTrip) {
  const CacheEntry e = sample();
  std::string why;
  const auto d = decode_cache_entry(encode_cache_entry(e), e.key, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(d->cubin, e.cubin);
  EXPECT_EQ(d->lowered_name, e.lowered_name);
  EXPECT_EQ(d->slug, e.slug);
  EXPECT_EQ(d->resources.registers, 168);
  EXPECT_EQ(d->resources.performance_notes, e.resources.performance_notes);
}

TEST(CacheEntry, RejectsCorruptTruncatedForeignAndGarbage) {
  const CacheEntry e = sample();
  const std::string good = encode_cache_entry(e);
  std::string why;

  std::string corrupt = good;
  corrupt[corrupt.size() - 500] ^= 0x40;
  EXPECT_FALSE(decode_cache_entry(corrupt, e.key, &why));
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;

  EXPECT_FALSE(decode_cache_entry(good.substr(0, good.size() - 10), e.key, &why));
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  EXPECT_FALSE(decode_cache_entry(good.substr(0, 30), e.key, &why));

  EXPECT_FALSE(decode_cache_entry(good, std::string(64, 'd'), &why));
  EXPECT_NE(why.find("another key"), std::string::npos) << why;

  EXPECT_FALSE(decode_cache_entry("", e.key, &why));
  EXPECT_FALSE(decode_cache_entry(std::string(4096, '\0'), e.key, &why));
  EXPECT_FALSE(decode_cache_entry(std::string(kCacheEntryMagic) + "\n{not json}\n", e.key, &why));
}

// The header is covered by its own checksum: an edited field is caught like a damaged cubin,
// and entries of the older format 1 (no header checksum) are refused and recompiled.
TEST(CacheEntry, EditedHeaderAndFormat1AreRejected) {
  const CacheEntry e = sample();
  const std::string good = encode_cache_entry(e);
  std::string why;
  std::string edited = good;
  const size_t at = edited.find("\"registers\":168");
  ASSERT_NE(at, std::string::npos) << good.substr(0, 400);
  edited.replace(at, 15, "\"registers\":255");
  EXPECT_FALSE(decode_cache_entry(edited, e.key, &why));
  EXPECT_NE(why.find("header checksum"), std::string::npos) << why;
  std::string format1 = good;
  format1.replace(0, std::string(kCacheEntryMagic).size(), "FP8GEMM-KERNEL 1");
  EXPECT_FALSE(decode_cache_entry(format1, e.key, &why));
  EXPECT_NE(why.find("format 1"), std::string::npos) << why;
}
