#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "problem/gemm_problem.hpp"
#include "problem/problem.hpp"

namespace fp8gemm::detail {

// What a tuning database was measured on. A database whose metadata differs from the
// running device and software is ignored (kernels and timings would not transfer).
struct TuningMetadata {
  std::string gpu_name;
  int sm_count = 0;
  int driver_version = 0;
  std::string nvrtc_version;
  std::string library_version;

  bool operator==(const TuningMetadata& o) const {
    return gpu_name == o.gpu_name && sm_count == o.sm_count && driver_version == o.driver_version &&
           nvrtc_version == o.nvrtc_version && library_version == o.library_version;
  }
  // "" if equal, else what differs (for the warning).
  std::string difference(const TuningMetadata& o) const;
};

// M is only known at run time: a tuned entry serves its M bucket. Buckets are the powers
// of two: M in (2^(i-1), 2^i] belongs to bucket 2^i (1, 2, 4, ..., 65536); larger M
// share the last bucket. A bucket may hold entries tuned at several M (M = 3000 and 4096
// both lie in (2048, 4096] and may want different tiles): a problem takes the entry tuned
// at its own M, else the one of its bucket tuned at the nearest M (by ratio).
int64_t m_bucket(int64_t m);

// One measured winner.
struct TunedEntry {
  KernelSpec spec;          // the winner (its N and K are the problem's; KGrouped: k = 0)
  int64_t m_measured = 0;   // the M it was timed at: the problem's (TuningDb::put sets it)
  double us = 0.0;          // its median time
  std::string heuristic;    // the heuristic's choice for the same problem (slug) ...
  double heuristic_us = 0;  // ... and its median time in the same measurement
  // What the entry is keyed by besides the spec and M (TuningDb::put sets them): the problem's
  // K (KGrouped: the columns per group it was planned for) and problem_groups.
  int64_t k = 0;
  int64_t groups = 1;
  // What it was timed against (stamp_tuned_entry, tuning/entry_stamp.hpp): the planner's first
  // choice for its problem and the cache key of the winner's kernel. Empty in entries of
  // formats 1 to 3, which the library no longer uses (tuned_entry_stale_reason).
  std::string planned;
  std::string kernel_key;
};

// The database: per (kind, N, K, M, groups) the measured best config, serving the M bucket
// (see m_bucket). Pure data plus JSON; file I/O is in load_tuning_db / save_tuning_db.
// groups: as problem_groups (any count may be passed; kinds that do not depend on it are keyed
// without it).
class TuningDb {
 public:
  explicit TuningDb(TuningMetadata metadata = {}) : metadata_(std::move(metadata)) {}

  const TuningMetadata& metadata() const { return metadata_; }
  const std::map<std::string, TunedEntry>& entries() const { return entries_; }

  // The entry of a problem (by its kind, N, K and plan_groups): the one tuned at its M, else
  // the one of its M bucket tuned at the nearest M (ties: the larger M), or nullptr.
  // `usable` (if given) passes over entries it rejects, as if they were not there.
  const TunedEntry* find(const GemmProblem& problem,
                         const std::function<bool(const TunedEntry&)>& usable = nullptr) const;
  void put(const GemmProblem& problem, const TunedEntry& entry);
  // The entry as put() stores it for a problem: its m_measured, k and groups are the problem's.
  static TunedEntry keyed(const GemmProblem& problem, TunedEntry entry);
  // Adds `other`'s entries that this one lacks (this one's win on conflicts).
  void merge_missing(const TuningDb& other);

  // Format 4: entries keyed by the M they were tuned at, each with what it was timed against
  // (planned, kernel_key). (Format 3 had neither; format 2 keyed entries by M bucket, one
  // entry per bucket; format 1, written before the grouped kinds were tuned, had no groups
  // either. Their entries read as format 4 ones, keyed by their measured M, without stamps.)
  std::string to_json() const;
  // Parses formats 1 to 3; std::nullopt with `why` set if the text is not a valid database.
  static std::optional<TuningDb> from_json(const std::string& text, std::string* why);

  // "gemm1d2d:n7168:k2048:m3000" (M as tuned); with more than one group (problem_groups)
  // ":g8" follows.
  static std::string key(const GemmProblem& problem);
  // The same with M's bucket in place of M ("...:m4096"): what one tuning run covers (the
  // format-2 key).
  static std::string bucket_key(const GemmProblem& problem);

 private:
  TuningMetadata metadata_;
  std::map<std::string, TunedEntry> entries_;
};

// Where the database for a device lives: <cache dir>/tuning/<gpu name>-<SMs>sm.json
// (the name reduced to [A-Za-z0-9_-]).
std::string tuning_db_path(const std::string& cache_dir, const TuningMetadata& metadata);

// Reads the database at `path` for a device described by `expected`. A missing file is
// an empty database (no warning); an unreadable, corrupt or mismatched one is an empty
// database and `warning` says why (the caller reports it once).
TuningDb load_tuning_db(const std::string& path, const TuningMetadata& expected, std::string* warning);

// Merges `db` into whatever the file holds now (another process may have added entries:
// under an exclusive lock on "<path>.lock", read, merge with `db`'s entries winning,
// write atomically). A file with other metadata is replaced. Returns 0 or errno.
int save_tuning_db(const std::string& path, const TuningDb& db);

}  // namespace fp8gemm::detail
