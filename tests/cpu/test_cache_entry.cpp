#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/cache_entry.hpp"
#include "util/sha256.hpp"

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

namespace {
// `good` with its header's field replaced by the JSON `value`, the header checksum made right.
std::string with_header_field(const std::string& good, const std::string& field, const std::string& value) {
  const size_t line1 = good.find('\n'), line2 = good.find('\n', line1 + 1);
  nlohmann::json h = nlohmann::json::parse(good.substr(line1 + 1, line2 - line1 - 1));
  h.erase("header_sha256");
  h[field] = nlohmann::json::parse(value);
  const std::string text = h.dump();
  h["header_sha256"] = Sha256::hex(Sha256::of(text.data(), text.size()));
  return good.substr(0, line1 + 1) + h.dump() + good.substr(line2);
}
}  // namespace

// A header anyone could have written, its checksum right: numbers that are not the integers a
// field holds (2.5 was read as 2; 1e300 converted to int is undefined), and nesting past any
// level the library writes (the checksum's copy and print recursed per level: a stack
// overflow killed every process that read the entry) are refused like any corrupt entry.
TEST(CacheEntry, HeadersWithNonIntegersOrDeepNestingAreRejected) {
  const CacheEntry e = sample();
  const std::string good = encode_cache_entry(e);
  std::string why;
  ASSERT_TRUE(decode_cache_entry(with_header_field(good, "registers", "168"), e.key, &why)) << why;
  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"registers", "168.5"}, {"registers", "1e300"}, {"registers", "-1"}, {"stack_frame_bytes", "4294967296"},
           {"spill_load_bytes", "true"}, {"cubin_bytes", "-1"}, {"cubin_bytes", "1e300"}}) {
    EXPECT_FALSE(decode_cache_entry(with_header_field(good, field, value), e.key, &why)) << field << " " << value;
    EXPECT_NE(why.find("\"" + field + "\" must be an integer"), std::string::npos) << why;
  }
  const size_t line1 = good.find('\n');
  const std::string deep = good.substr(0, line1 + 1) + "{\"key\":" + std::string(1000000, '[') +
                           std::string(1000000, ']') + "}" + good.substr(good.find('\n', line1 + 1));
  EXPECT_FALSE(decode_cache_entry(deep, e.key, &why));
  EXPECT_NE(why.find("nested more than"), std::string::npos) << why;
}

// Every single-byte change of an entry (each position, a few values), every truncation and
// random splices are refused with a reason, never accepted and never a crash: a broken entry
// is recompiled, not trusted.
TEST(CacheEntry, EveryDamagedByteAndTruncationIsRejected) {
  CacheEntry e = sample();
  e.cubin.resize(160);  // keeps the loops short; the header is what the parser walks
  const std::string good = encode_cache_entry(e);
  std::string why;
  ASSERT_TRUE(decode_cache_entry(good, e.key, &why)) << why;
  for (size_t i = 0; i < good.size(); ++i)
    for (unsigned char x : {0x01, 0x20, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ x);
      why.clear();
      EXPECT_FALSE(decode_cache_entry(bad, e.key, &why)) << "byte " << i << " ^ " << int(x);
      EXPECT_FALSE(why.empty()) << "byte " << i;
    }
  for (size_t n = 0; n < good.size(); ++n) {
    why.clear();
    EXPECT_FALSE(decode_cache_entry(good.substr(0, n), e.key, &why)) << "first " << n << " bytes";
    EXPECT_FALSE(why.empty()) << "first " << n << " bytes";
  }
  // Splices of two entries and inserted bytes.
  const std::string other = encode_cache_entry(sample());
  uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull, state >> 33; };
  for (int i = 0; i < 2000; ++i) {
    std::string bad = good.substr(0, next() % good.size()) + other.substr(next() % other.size());
    if (i % 2) bad.insert(next() % bad.size(), std::string(1 + next() % 8, static_cast<char>(next())));
    if (bad == good || bad == other) continue;  // a splice may rebuild either whole entry
    EXPECT_FALSE(decode_cache_entry(bad, e.key, &why)) << "splice " << i;
  }
}
