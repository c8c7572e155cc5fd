#include "cache/disk_cache.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/files.hpp"
#include "util/log.hpp"

namespace fp8gemm::detail {

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) {
    go_memory_only("no cache directory: set FP8GEMM_CACHE_DIR or HOME");
    return;
  }
  kernels_dir_ = dir_ + "/kernels";
  if (const int err = make_dirs(kernels_dir_); err != 0) {
    go_memory_only("cannot create " + kernels_dir_ + ": " + std::strerror(err));
    return;
  }
  if (::access(kernels_dir_.c_str(), W_OK) != 0)
    go_memory_only(kernels_dir_ + " is not writable: " + std::strerror(errno));
}

std::string DiskCache::entry_path(const std::string& slug, const std::string& key) const {
  return kernels_dir_ + "/" + slug + "-" + key.substr(0, 16) + ".fp8k";
}

std::optional<CacheEntry> DiskCache::load(const std::string& slug, const std::string& key) {
  if (kernels_dir_.empty()) return std::nullopt;
  const std::string path = entry_path(slug, key);
  const std::optional<std::string> bytes = read_file(path);
  if (!bytes) return std::nullopt;
  std::string why;
  std::optional<CacheEntry> entry = decode_cache_entry(*bytes, key, &why);
  if (!entry) {
    rejected_.fetch_add(1);
    log(LogLevel::Warn, "ignoring kernel cache entry {}: {}; recompiling it", path, why);
  }
  return entry;
}

void DiskCache::store(const CacheEntry& entry) {
  if (memory_only()) return;
  const std::string path = entry_path(entry.slug, entry.key);
  if (const int err = write_file_atomic(path, encode_cache_entry(entry)); err != 0)
    go_memory_only("cannot write " + path + ": " + std::strerror(err));
}

void DiskCache::go_memory_only(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (memory_only_.load()) return;
    reason_ = reason;
    memory_only_.store(true);
  }
  log(LogLevel::Warn, "kernel cache is memory-only for this process ({}); compiled kernels will not be reused by other processes",
      reason);
}

std::string DiskCache::state() const {
  if (!memory_only()) return "read-write";
  std::lock_guard<std::mutex> lock(mutex_);
  return "memory-only (" + reason_ + ")";
}

}  // namespace fp8gemm::detail
