// cached_kernels / clear_cache: what `fp8gemm cache list|verify|stats|clear` shows and does.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "api/library.hpp"
#include "cache/cache_entry.hpp"
#include "fp8gemm/version.hpp"
#include "util/files.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

std::string entry_status(const std::string& name, const std::string& bytes) {
  // The header names the key; the file name must carry its first 16 hex digits and the
  // slug, and the payload must match the header's size and checksum.
  const size_t line1 = bytes.find('\n');
  const size_t line2 = line1 == std::string::npos ? line1 : bytes.find('\n', line1 + 1);
  if (line2 == std::string::npos) return "corrupt: truncated header";
  std::string key, slug, library;
  try {
    const nlohmann::json h = nlohmann::json::parse(bytes.substr(line1 + 1, line2 - line1 - 1));
    key = h.at("key").get<std::string>();
    slug = h.at("slug").get<std::string>();
    library = h.value("library_version", "");
  } catch (const std::exception&) {
    return "corrupt: malformed header";
  }
  std::string why;
  if (!decode_cache_entry(bytes, key, &why)) return "corrupt: " + why;
  if (name != slug + "-" + key.substr(0, 16) + ".fp8k") return "misnamed: the header says " + slug;
  if (library != FP8GEMM_VERSION_STRING) return "stale: written by library " + library;
  return "ok";
}

}  // namespace

std::vector<CachedKernel> cached_kernels() {
  std::vector<CachedKernel> out;
  const std::string dir = Library::instance().disk().dir();
  if (dir.empty()) return out;
  const std::string kernels = dir + "/kernels";
  for (const std::string& name : list_files(kernels)) {
    if (name.size() < 5 || name.substr(name.size() - 5) != ".fp8k") continue;
    CachedKernel k;
    k.file = kernels + "/" + name;
    k.kernel = name.substr(0, name.rfind('-'));
    const std::optional<std::string> bytes = read_file(k.file);
    k.bytes = bytes ? bytes->size() : 0;
    k.status = bytes ? entry_status(name, *bytes) : "unreadable";
    out.push_back(k);
  }
  std::sort(out.begin(), out.end(), [](const CachedKernel& a, const CachedKernel& b) { return a.kernel < b.kernel; });
  return out;
}

CacheClearReport clear_cache(bool kernels, bool tuning) {
  CacheClearReport r;
  const std::string dir = Library::instance().disk().dir();
  if (dir.empty()) return r;
  auto sweep = [&](const std::string& sub, size_t* counted, auto is_ours) {
    for (const std::string& name : list_files(dir + "/" + sub)) {
      const bool temporary = name.find(".tmp.") != std::string::npos;
      if (!temporary && !is_ours(name)) continue;
      if (::unlink((dir + "/" + sub + "/" + name).c_str()) == 0) ++(temporary ? r.other : *counted);
    }
  };
  auto ends_with = [](const std::string& s, const char* suffix) {
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
  };
  if (kernels) sweep("kernels", &r.kernels, [&](const std::string& n) { return ends_with(n, ".fp8k"); });
  if (tuning)
    sweep("tuning", &r.tuning_files, [&](const std::string& n) { return ends_with(n, ".json") || ends_with(n, ".lock"); });
  return r;
}

}  // namespace fp8gemm
