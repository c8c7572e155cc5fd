#include "tuning/tuning_db.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "families/family.hpp"
#include "util/files.hpp"
#include "util/json_read.hpp"

namespace fp8gemm::detail {
namespace {

constexpr int kFormatVersion = 4;
constexpr int kUnstampedFormat = 3;  // entries without planned / kernel_key
constexpr int kBucketFormat = 2;   // keyed by M bucket, one entry per bucket
constexpr int kOldestFormat = 1;  // no groups either: every entry is a problem of one group
constexpr int64_t kLargestBucket = int64_t(1) << 16;

nlohmann::json metadata_json(const TuningMetadata& m) {
  return {{"gpu", m.gpu_name},
          {"sms", m.sm_count},
          {"driver", m.driver_version},
          {"nvrtc", m.nvrtc_version},
          {"library", m.library_version}};
}

// Holds an exclusive flock on a lock file for its lifetime (no lock if it cannot be
// opened: the atomic rename still keeps the file whole, only a concurrent merge may
// then drop the other writer's newest entries).
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) {
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string TuningMetadata::difference(const TuningMetadata& o) const {
  if (gpu_name != o.gpu_name) return fmt::format("GPU '{}' vs '{}'", gpu_name, o.gpu_name);
  if (sm_count != o.sm_count) return fmt::format("{} vs {} SMs", sm_count, o.sm_count);
  if (driver_version != o.driver_version) return fmt::format("driver {} vs {}", driver_version, o.driver_version);
  if (nvrtc_version != o.nvrtc_version) return fmt::format("NVRTC {} vs {}", nvrtc_version, o.nvrtc_version);
  if (library_version != o.library_version)
    return fmt::format("library {} vs {}", library_version, o.library_version);
  return "";
}

int64_t m_bucket(int64_t m) {
  int64_t bucket = 1;
  while (bucket < m && bucket < kLargestBucket) bucket *= 2;
  return bucket;
}

namespace {

std::string key_with_m(const GemmProblem& p, int64_t m) {
  const std::string one = fmt::format("{}:n{}:k{}:m{}", kind_name(p.kind), p.n, p.k, m);
  const int64_t g = p.plan_groups();
  return g == 1 ? one : fmt::format("{}:g{}", one, g);  // one group: the format-1 form
}

}  // namespace

std::string TuningDb::key(const GemmProblem& p) { return key_with_m(p, p.m); }

std::string TuningDb::bucket_key(const GemmProblem& p) { return key_with_m(p, m_bucket(p.m)); }

const TunedEntry* TuningDb::find(const GemmProblem& p, const std::function<bool(const TunedEntry&)>& usable) const {
  auto ok = [&usable](const TunedEntry& e) { return !usable || usable(e); };
  if (auto it = entries_.find(key(p)); it != entries_.end() && ok(it->second)) return &it->second;
  // The entries of the same kind, N and K lie together in key order, whatever their M and groups.
  const std::string prefix = fmt::format("{}:n{}:k{}:m", kind_name(p.kind), p.n, p.k);
  const int64_t bucket = m_bucket(p.m), groups = p.plan_groups();
  // Nearer by ratio: max(a, m) / min(a, m) < max(b, m) / min(b, m), compared exactly.
  const int64_t m = std::max<int64_t>(p.m, 1);
  auto nearer = [m](int64_t a, int64_t b) {
    a = std::max<int64_t>(a, 1), b = std::max<int64_t>(b, 1);
    const __int128 lhs = static_cast<__int128>(std::max(a, m)) * std::min(b, m);
    const __int128 rhs = static_cast<__int128>(std::max(b, m)) * std::min(a, m);
    return lhs < rhs || (lhs == rhs && a > b);  // equally near: the larger M
  };
  const TunedEntry* best = nullptr;
  for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it) {
    const TunedEntry& e = it->second;
    if (e.groups != groups || m_bucket(e.m_measured) != bucket) continue;
    if ((best == nullptr || nearer(e.m_measured, best->m_measured)) && ok(e)) best = &e;
  }
  return best;
}

TunedEntry TuningDb::keyed(const GemmProblem& p, TunedEntry e) {
  e.m_measured = p.m;  // the key's M, so that the file reads back under the same key
  e.k = p.k;
  e.groups = p.plan_groups();
  return e;
}

void TuningDb::put(const GemmProblem& p, const TunedEntry& entry) { entries_[key(p)] = keyed(p, entry); }

void TuningDb::merge_missing(const TuningDb& other) {
  for (const auto& [k, e] : other.entries_) entries_.emplace(k, e);
}

std::string TuningDb::to_json() const {
  nlohmann::json j;
  j["format"] = kFormatVersion;
  j["about"] = "fp8gemm tuning database: measured best kernel config per (kind, N, K, M, groups); an entry serves the M bucket (power of two) of its M";
  j["metadata"] = metadata_json(metadata_);
  nlohmann::json entries = nlohmann::json::object();
  for (const auto& [k, e] : entries_)
    entries[k] = {{"spec", nlohmann::json::parse(spec_to_json(e.spec))},
                  {"m", e.m_measured},
                  {"us", e.us},
                  {"heuristic", e.heuristic},
                  {"heuristic_us", e.heuristic_us},
                  {"k", e.k},
                  {"groups", e.groups},
                  {"planned", e.planned},
                  {"kernel_key", e.kernel_key}};
  j["entries"] = std::move(entries);
  return j.dump(2) + "\n";
}

std::optional<TuningDb> TuningDb::from_json(const std::string& text, std::string* why) {
  try {
    const nlohmann::json j = parse_json(text);
    const int format = static_cast<int>(json_integer(j, "format", INT32_MIN, INT32_MAX));
    if (format < kOldestFormat || format > kFormatVersion) {
      *why = fmt::format("format {} (this library reads {} to {})", format, kOldestFormat, kFormatVersion);
      return std::nullopt;
    }
    const nlohmann::json& m = j.at("metadata");
    TuningMetadata meta{json_string(m, "gpu"), static_cast<int>(json_integer(m, "sms", 0, INT32_MAX)),
                        static_cast<int>(json_integer(m, "driver", INT32_MIN, INT32_MAX)), json_string(m, "nvrtc"),
                        json_string(m, "library")};
    TuningDb db(meta);
    for (const auto& [k, e] : j.at("entries").items()) {
      TunedEntry entry;
      entry.spec = spec_from_json(e.at("spec").dump());
      const std::string illegal = spec_illegal_reason(entry.spec);
      if (!illegal.empty()) {
        *why = fmt::format("entry {}: {}", k, illegal);
        return std::nullopt;
      }
      entry.m_measured = json_integer(e, "m", 0, INT64_MAX);
      entry.us = e.at("us").get<double>();
      entry.heuristic = e.at("heuristic").get<std::string>();
      entry.heuristic_us = e.at("heuristic_us").get<double>();
      // Format 1 held dense entries only: the spec's K, one group. (Format 2 stores both; a
      // k-grouped spec has k = 0 and its entry the K per group it was planned for.)
      entry.k = format == kOldestFormat ? entry.spec.k : json_integer(e, "k", 0, INT64_MAX);
      entry.groups = format == kOldestFormat ? 1 : json_integer(e, "groups", 0, INT64_MAX);
      if (format > kUnstampedFormat) {
        entry.planned = json_string(e, "planned");
        entry.kernel_key = json_string(e, "kernel_key");
      }
      // The key must be the one this entry would be stored under (formats 1 and 2: by M
      // bucket; read into the format-3 key, by its M).
      const int64_t spec_k = family(entry.spec.kind).k_at_run_time ? entry.k : entry.spec.k;
      const GemmProblem problem{entry.spec.kind, entry.m_measured, entry.spec.n, entry.k, entry.groups};
      if (entry.k != spec_k || (format <= kBucketFormat ? bucket_key(problem) : key(problem)) != k ||
          entry.groups != GemmProblem{entry.spec.kind, 0, 0, 0, entry.groups}.plan_groups()) {
        *why = fmt::format("entry {} does not match its kernel {}, M {}, K {} and groups {}", k, entry.spec.slug(),
                           entry.m_measured, entry.k, entry.groups);
        return std::nullopt;
      }
      db.entries_[key(problem)] = entry;
    }
    return db;
  } catch (const std::exception& e) {
    *why = fmt::format("not a valid tuning database ({})", e.what());
    return std::nullopt;
  }
}

std::string tuning_db_path(const std::string& cache_dir, const TuningMetadata& metadata) {
  std::string name;
  for (char c : metadata.gpu_name) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  if (name.empty()) name = "unknown";
  return fmt::format("{}/tuning/{}-{}sm.json", cache_dir, name, metadata.sm_count);
}

TuningDb load_tuning_db(const std::string& path, const TuningMetadata& expected, std::string* warning) {
  if (::access(path.c_str(), F_OK) != 0) return TuningDb(expected);
  const std::optional<std::string> text = read_file(path);
  if (!text) {
    *warning = fmt::format("tuning database {} is unreadable; using the heuristic", path);
    return TuningDb(expected);
  }
  std::string why;
  std::optional<TuningDb> db = TuningDb::from_json(*text, &why);
  if (!db) {
    *warning = fmt::format("tuning database {} ignored: {}; using the heuristic (re-run `fp8gemm tune`)", path, why);
    return TuningDb(expected);
  }
  if (const std::string diff = db->metadata().difference(expected); !diff.empty()) {
    *warning = fmt::format("tuning database {} was measured elsewhere ({}); ignored, using the heuristic", path, diff);
    return TuningDb(expected);
  }
  return *db;
}

int save_tuning_db(const std::string& path, const TuningDb& db) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos) {
    if (const int err = make_dirs(path.substr(0, slash))) return err;
  }
  FileLock lock(path + ".lock");
  TuningDb merged = db;
  std::string ignored;
  const TuningDb current = load_tuning_db(path, db.metadata(), &ignored);
  merged.merge_missing(current);
  return write_file_atomic(path, merged.to_json());
}

}  // namespace fp8gemm::detail
