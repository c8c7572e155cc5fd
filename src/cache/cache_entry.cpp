#include "cache/cache_entry.hpp"

#include <nlohmann/json.hpp>

#include "fp8gemm/version.hpp"
#include "util/json_read.hpp"
#include "util/sha256.hpp"

namespace fp8gemm::detail {

namespace {

// SHA-256 over the header's canonical JSON without its own checksum field.
std::string header_checksum(const nlohmann::json& original) {
  nlohmann::json header = original;
  header.erase("header_sha256");
  const std::string text = header.dump();
  return Sha256::hex(Sha256::of(text.data(), text.size()));
}

}  // namespace

std::string encode_cache_entry(const CacheEntry& e) {
  nlohmann::json header = {
      {"key", e.key},
      {"slug", e.slug},
      {"lowered_name", e.lowered_name},
      {"cubin_bytes", e.cubin.size()},
      {"cubin_sha256", Sha256::hex(Sha256::of(e.cubin.data(), e.cubin.size()))},
      {"registers", e.resources.registers},
      {"stack_frame_bytes", e.resources.stack_frame_bytes},
      {"spill_store_bytes", e.resources.spill_store_bytes},
      {"spill_load_bytes", e.resources.spill_load_bytes},
      {"performance_notes", e.resources.performance_notes},
      {"library_version", FP8GEMM_VERSION_STRING}};
  header["header_sha256"] = header_checksum(header);
  std::string out = kCacheEntryMagic;
  out += "\n";
  out += header.dump();
  out += "\n";
  out += e.cubin;
  return out;
}

std::optional<CacheEntry> decode_cache_entry(const std::string& bytes, const std::string& expected_key,
                                             std::string* why) {
  auto reject = [why](const std::string& reason) -> std::optional<CacheEntry> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  const size_t line1 = bytes.find('\n');
  if (line1 != std::string::npos && bytes.compare(0, line1, "FP8GEMM-KERNEL 1") == 0)
    return reject("written in entry format 1 by an older library");
  if (line1 == std::string::npos || bytes.compare(0, line1, kCacheEntryMagic) != 0)
    return reject("not an fp8gemm kernel entry (bad format tag)");
  const size_t line2 = bytes.find('\n', line1 + 1);
  if (line2 == std::string::npos) return reject("truncated header");
  CacheEntry e;
  size_t cubin_bytes = 0;
  std::string cubin_sha;
  try {
    const nlohmann::json h = parse_json(std::string_view(bytes).substr(line1 + 1, line2 - line1 - 1));
    if (!h.is_object() || !h.contains("header_sha256") || !h["header_sha256"].is_string() ||
        h["header_sha256"].get<std::string>() != header_checksum(h))
      return reject("header checksum mismatch (edited or corrupted header)");
    e.key = json_string(h, "key");
    e.slug = json_string(h, "slug");
    e.lowered_name = json_string(h, "lowered_name");
    cubin_bytes = static_cast<size_t>(json_integer(h, "cubin_bytes", 0, INT64_MAX));
    cubin_sha = json_string(h, "cubin_sha256");
    const int64_t kMaxCount = 1 << 30;  // registers and bytes of a kernel: far below
    e.resources.registers = static_cast<int>(json_integer(h, "registers", 0, kMaxCount));
    e.resources.stack_frame_bytes = static_cast<int>(json_integer(h, "stack_frame_bytes", 0, kMaxCount));
    e.resources.spill_store_bytes = static_cast<int>(json_integer(h, "spill_store_bytes", 0, kMaxCount));
    e.resources.spill_load_bytes = static_cast<int>(json_integer(h, "spill_load_bytes", 0, kMaxCount));
    e.resources.performance_notes = h.at("performance_notes").get<std::vector<std::string>>();
    e.resources.parsed = true;
  } catch (const nlohmann::json::exception& ex) {
    return reject(std::string("malformed header: ") + ex.what());
  } catch (const JsonReadError& ex) {
    return reject(std::string("malformed header: ") + ex.what());
  }
  if (e.key != expected_key) return reject("entry belongs to another key (" + e.key.substr(0, 16) + ")");
  if (e.lowered_name.empty()) return reject("no kernel name");
  const size_t payload = bytes.size() - (line2 + 1);
  if (payload != cubin_bytes)
    return reject("cubin is " + std::to_string(payload) + " bytes, header says " + std::to_string(cubin_bytes) +
                  " (truncated or appended)");
  e.cubin = bytes.substr(line2 + 1);
  if (Sha256::hex(Sha256::of(e.cubin.data(), e.cubin.size())) != cubin_sha)
    return reject("cubin checksum mismatch (corrupted)");
  return e;
}

}  // namespace fp8gemm::detail
