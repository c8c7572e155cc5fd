#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "cache/cache_entry.hpp"

namespace fp8gemm::detail {

// The on-disk kernel cache: one file per kernel under <dir>/kernels/, named
// "<slug>-<first 16 hex digits of the key>.fp8k" (format: cache/README.md).
// Safe for many threads and processes: entries are published by atomic rename, and
// readers verify every entry before trusting it. A directory that cannot be created
// or written turns the cache memory-only, with one warning.
class DiskCache {
 public:
  // An empty `dir` means memory-only from the start, for `off_reason` (default: no
  // directory was configured). Nothing is created until the first store(): a directory that
  // does not exist yet is created then, so that read-only uses (info, cache list) leave the
  // file system as they found it.
  explicit DiskCache(std::string dir, std::string off_reason = "");

  // A verified entry, or nullopt. A present but unusable entry (corrupt, truncated,
  // foreign) is reported with a warning and counted in rejected(); the caller
  // recompiles and store() replaces it.
  std::optional<CacheEntry> load(const std::string& slug, const std::string& key);

  // Whether a verified entry is on disk (no warning, nothing counted).
  bool holds(const std::string& slug, const std::string& key) const;

  // Publishes an entry. Never throws: on failure the cache turns memory-only.
  void store(const CacheEntry& entry);

  const std::string& dir() const { return dir_; }
  std::string entry_path(const std::string& slug, const std::string& key) const;
  bool memory_only() const { return memory_only_.load(); }
  // "read-write", "read-write (created on first write)" or "memory-only (<reason>)".
  std::string state() const;
  // Why the cache is memory-only ("" while it is not).
  std::string memory_only_reason() const;
  uint64_t rejected() const { return rejected_.load(); }

 private:
  void go_memory_only(const std::string& reason);

  std::string dir_;
  std::string kernels_dir_;
  std::atomic<bool> memory_only_{false};
  std::atomic<bool> pending_create_{false};  // the directory is created by the first store()
  std::atomic<uint64_t> rejected_{0};
  mutable std::mutex mutex_;  // guards reason_
  std::mutex create_mutex_;   // one thread creates the directory
  std::string reason_;
};

}  // namespace fp8gemm::detail
