// cached_kernels / cached_tuning_databases / clear_cache / clear_stale_cache: what
// `fp8gemm cache list|verify|stats|clear` shows and does. Nothing here creates a directory.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/library.hpp"
#include "cache/cache_entry.hpp"
#include "cache/cache_key.hpp"
#include "codegen/gemm_codegen.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "fp8gemm/version.hpp"
#include "tuning/entry_stamp.hpp"
#include "tuning/tuning_db.hpp"
#include "util/files.hpp"
#include "util/json_read.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

// A temporary file younger than this may belong to a writer that is still running (a write
// takes milliseconds); an older one is left over from an interrupted process.
constexpr int64_t kTemporaryGraceSeconds = 60;

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool is_temporary(const std::string& name) { return name.find(".tmp.") != std::string::npos; }

// Seconds since the file was modified; negative when it is dated in the future.
int64_t age_seconds(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(std::time(nullptr)) - static_cast<int64_t>(st.st_mtime);
}

// Whether a temporary file of this age is left over: older than the grace period, or dated
// further in the future than it (clock skew, a cache copied with its times) - a live
// writer's file is dated now.
bool left_over(int64_t age) { return age >= kTemporaryGraceSeconds || age <= -kTemporaryGraceSeconds; }

// Why an entry is of no use to this library, or "ok". Besides the checks of every read, the
// entry must be the one a lookup computes: this library's key for the spec its slug names.
std::string entry_status(const std::string& name, const std::string& bytes) {
  const size_t line1 = bytes.find('\n');
  const size_t line2 = line1 == std::string::npos ? line1 : bytes.find('\n', line1 + 1);
  if (line2 == std::string::npos) return "corrupt: truncated header";
  std::string key, slug, library;
  try {
    const nlohmann::json h = parse_json(std::string_view(bytes).substr(line1 + 1, line2 - line1 - 1));
    key = json_string(h, "key");
    slug = json_string(h, "slug");
    library = h.contains("library_version") ? json_string(h, "library_version") : std::string();
  } catch (const std::exception&) {
    return "corrupt: malformed header";
  }
  std::string why;
  if (!decode_cache_entry(bytes, key, &why)) return (why.find("format 1") != std::string::npos ? "stale: " : "corrupt: ") + why;
  if (key.size() < 16 || name != slug + "-" + key.substr(0, 16) + ".fp8k") return "misnamed: the header says " + slug;
  if (library != FP8GEMM_VERSION_STRING) return "stale: written by library " + library;
  const std::optional<KernelSpec> spec = spec_from_slug(slug);
  if (!spec || !spec_illegal_reason(*spec).empty()) return "stale: this library has no kernel " + slug;
  if (kernel_cache_key(*spec) != key)
    return "stale: no lookup reaches it (compiled by another build of the library or another NVRTC)";
  return "ok";
}

// Removes `path`, counting it in *counted, or records why it could not be removed.
void remove_file(const std::string& path, size_t* counted, CacheClearReport* r) {
  if (::unlink(path.c_str()) == 0) {
    ++*counted;
  } else if (errno != ENOENT) {  // gone already: another process cleared it
    r->failed.push_back(path + ": " + std::strerror(errno));
  }
}

}  // namespace

std::vector<CachedKernel> cached_kernels() {
  std::vector<CachedKernel> out;
  const std::string dir = Library::instance().disk().dir();
  if (dir.empty()) return out;
  const std::string kernels = dir + "/kernels";
  for (const std::string& name : list_files(kernels, true)) {
    CachedKernel k;
    k.file = kernels + "/" + name;
    // A symbolic link to a regular file is what the loader reads through it (a dangling one,
    // or one to anything else, is stray).
    struct stat st {};
    const bool found = ::stat(k.file.c_str(), &st) == 0;
    if (!found && errno == ENOENT && ::lstat(k.file.c_str(), &st) != 0)
      continue;  // gone since the listing (a writer's rename, another process's cleanup)
    const bool regular = found && S_ISREG(st.st_mode);
    k.bytes = regular ? static_cast<uint64_t>(st.st_size) : 0;
    if (!regular) {
      k.category = "stray";
      k.kernel = name;
      k.status = "stray: not a regular file";
      k.stale = true;
    } else if (is_temporary(name)) {
      const int64_t age = age_seconds(k.file);
      k.category = "temporary";
      k.kernel = name;
      k.stale = left_over(age);
      k.status = !k.stale ? fmt::format("being written ({} s old)", std::max<int64_t>(age, 0))
                 : age > 0 ? fmt::format("leftover of an interrupted write, {} s old", age)
                           : fmt::format("leftover of an interrupted write, dated {} s in the future", -age);
    } else if (ends_with(name, ".fp8k")) {
      k.kernel = name.substr(0, name.rfind('-'));
      const std::optional<std::string> bytes = read_file(k.file);
      k.status = bytes ? entry_status(name, *bytes) : std::string("unreadable: ") + std::strerror(errno);
      k.stale = k.status != "ok";
    } else {
      k.category = "stray";
      k.kernel = name;
      k.status = "stray: not a cache file";
      k.stale = true;
    }
    out.push_back(k);
  }
  std::sort(out.begin(), out.end(), [](const CachedKernel& a, const CachedKernel& b) { return a.kernel < b.kernel; });
  return out;
}

std::vector<CachedTuningDatabase> cached_tuning_databases() {
  std::vector<CachedTuningDatabase> out;
  const std::string dir = Library::instance().disk().dir();
  if (dir.empty()) return out;
  for (const std::string& name : list_files(dir + "/tuning")) {
    if (!ends_with(name, ".json")) continue;
    CachedTuningDatabase t;
    t.file = dir + "/tuning/" + name;
    const std::optional<std::string> text = read_file(t.file);
    std::string why = text ? "" : std::strerror(errno);
    const std::optional<TuningDb> db = text ? TuningDb::from_json(*text, &why) : std::nullopt;
    if (!db) {
      t.status = "not readable: " + why + " (ignored by the library; cache clear --tuning-only removes it)";
    } else {
      const TuningMetadata& m = db->metadata();
      t.readable = true;
      t.problems = db->entries().size();
      t.gpu = m.gpu_name;
      t.sms = m.sm_count;
      t.driver = m.driver_version;
      t.nvrtc = m.nvrtc_version;
      t.library = m.library_version;
      const bool this_software = m.nvrtc_version == nvrtc_version() && m.library_version == FP8GEMM_VERSION_STRING;
      t.status = this_software ? "ok"
                               : "stale: measured with NVRTC " + m.nvrtc_version + " and library " +
                                     m.library_version + " (ignored by this one)";
      for (const auto& [key, e] : db->entries())
        if (!this_software || !tuned_entry_stale_reason(e, m).empty()) ++t.problems_stale;
    }
    out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const CachedTuningDatabase& a, const CachedTuningDatabase& b) { return a.file < b.file; });
  return out;
}

CacheClearReport clear_cache(bool kernels, bool tuning) {
  CacheClearReport r;
  const std::string dir = Library::instance().disk().dir();
  if (dir.empty()) return r;
  // A temporary a writer may still rename is left alone (removed, it made that writer's
  // rename fail), and so is a tuning database's lock file (removed while held, two writers
  // could each lock a file of that name and merge at once).
  auto sweep = [&](const std::string& sub, size_t* counted, auto is_ours) {
    for (const std::string& name : list_files(dir + "/" + sub, true)) {
      const std::string path = dir + "/" + sub + "/" + name;
      const bool temporary = is_temporary(name);
      if (temporary ? !left_over(age_seconds(path)) : !is_ours(name)) continue;
      remove_file(path, temporary ? &r.other : counted, &r);
    }
  };
  if (kernels) sweep("kernels", &r.kernels, [&](const std::string& n) { return ends_with(n, ".fp8k"); });
  if (tuning) sweep("tuning", &r.tuning_files, [&](const std::string& n) { return ends_with(n, ".json"); });
  return r;
}

CacheClearReport clear_stale_cache() {
  CacheClearReport r;
  for (const CachedKernel& k : cached_kernels()) {
    if (!k.stale) continue;
    if (k.category == "entry") {
      // Judged again just before it goes: another process may have replaced it with a good
      // entry since the listing.
      const std::optional<std::string> bytes = read_file(k.file);
      if (bytes && entry_status(k.file.substr(k.file.rfind('/') + 1), *bytes) == "ok") continue;
    }
    remove_file(k.file, k.category == "entry" ? &r.kernels : &r.other, &r);
  }
  const std::string dir = Library::instance().disk().dir();
  if (dir.empty()) return r;
  for (const std::string& name : list_files(dir + "/tuning"))
    if (is_temporary(name) && left_over(age_seconds(dir + "/tuning/" + name)))
      remove_file(dir + "/tuning/" + name, &r.other, &r);
  return r;
}

}  // namespace fp8gemm
