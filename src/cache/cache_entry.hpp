#pragma once

#include <optional>
#include <string>

#include "compiler/resource_report.hpp"

namespace fp8gemm::detail {

// One kernel as stored on disk (format in cache/README.md): a text line with the
// format tag, a one-line JSON header, then the cubin bytes.
struct CacheEntry {
  std::string key;           // hex SHA-256 of the cache key inputs
  std::string slug;
  std::string lowered_name;  // mangled kernel name inside the cubin
  ResourceUsage resources;   // registers and local memory (warnings are not stored)
  std::string cubin;
};

// Format 2: the header carries header_sha256, a checksum over the rest of the header, so that
// an edited field ("registers") is caught like a damaged cubin.
constexpr const char* kCacheEntryMagic = "FP8GEMM-KERNEL 2";

std::string encode_cache_entry(const CacheEntry& entry);

// Parses and verifies an entry: format tag, the header's own checksum, expected key, size
// and SHA-256 of the cubin. On any mismatch returns nullopt and says why in *why.
std::optional<CacheEntry> decode_cache_entry(const std::string& bytes, const std::string& expected_key,
                                             std::string* why);

}  // namespace fp8gemm::detail
