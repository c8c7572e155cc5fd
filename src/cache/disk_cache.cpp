#include "cache/disk_cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/files.hpp"
#include "util/log.hpp"

namespace fp8gemm::detail {

namespace {

// Why `dir` (absent) could not be created, judged without creating it: the nearest existing
// ancestor must be a writable directory. "" when it can be.
std::string cannot_create(const std::string& dir) {
  std::string parent = dir;
  for (;;) {
    const size_t slash = parent.find_last_of('/');
    parent = slash == std::string::npos ? "." : slash == 0 ? "/" : parent.substr(0, slash);
    struct stat st {};
    if (::stat(parent.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) return "cannot create " + dir + ": " + parent + " is not a directory";
      if (::access(parent.c_str(), W_OK) != 0) return "cannot create " + dir + ": " + std::strerror(errno);
      return "";
    }
    if (errno != ENOENT) return "cannot create " + dir + ": " + std::strerror(errno);
    if (parent == "/" || parent == ".") return "cannot create " + dir;
  }
}

}  // namespace

DiskCache::DiskCache(std::string dir, std::string off_reason) : dir_(std::move(dir)) {
  if (dir_.empty()) {
    go_memory_only(off_reason.empty() ? "no cache directory: set FP8GEMM_CACHE_DIR or HOME" : off_reason);
    return;
  }
  kernels_dir_ = dir_ + "/kernels";
  struct stat st {};
  if (::stat(kernels_dir_.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) go_memory_only(kernels_dir_ + " is not a directory");
    else if (::access(kernels_dir_.c_str(), W_OK) != 0)
      go_memory_only(kernels_dir_ + " is not writable: " + std::strerror(errno));
    return;
  }
  if (errno != ENOENT) {
    go_memory_only("cannot use " + kernels_dir_ + ": " + std::strerror(errno));
    return;
  }
  if (const std::string why = cannot_create(kernels_dir_); !why.empty()) {
    go_memory_only(why);
    return;
  }
  pending_create_.store(true);
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

bool DiskCache::holds(const std::string& slug, const std::string& key) const {
  if (kernels_dir_.empty()) return false;
  const std::optional<std::string> bytes = read_file(entry_path(slug, key));
  std::string why;
  return bytes && decode_cache_entry(*bytes, key, &why).has_value();
}

void DiskCache::store(const CacheEntry& entry) {
  if (memory_only()) return;
  if (pending_create_.load()) {
    std::lock_guard<std::mutex> lock(create_mutex_);
    if (pending_create_.load()) {
      if (const int err = make_dirs(kernels_dir_); err != 0) {
        go_memory_only("cannot create " + kernels_dir_ + ": " + std::strerror(err));
        return;
      }
      pending_create_.store(false);
    }
  }
  const std::string path = entry_path(entry.slug, entry.key);
  const std::string bytes = encode_cache_entry(entry);
  int err = write_file_atomic(path, bytes);
  // Once more after what another process's cleanup does, rather than giving up on the disk
  // for good: ENOENT, the directory was deleted or this write's temporary file was removed
  // (`cache clear`) before its rename; EEXIST, a temporary of the same name exists.
  if (err == ENOENT || err == EEXIST) {
    if (err == ENOENT) make_dirs(kernels_dir_);
    err = write_file_atomic(path, bytes);
  }
  if (err != 0) go_memory_only("cannot write " + path + ": " + std::strerror(err));
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
  if (!memory_only()) return pending_create_.load() ? "read-write (created on first write)" : "read-write";
  std::lock_guard<std::mutex> lock(mutex_);
  return "memory-only (" + reason_ + ")";
}

std::string DiskCache::memory_only_reason() const {
  if (!memory_only()) return "";
  std::lock_guard<std::mutex> lock(mutex_);
  return reason_;
}

}  // namespace fp8gemm::detail
