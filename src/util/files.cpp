#include "util/files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <random>
#include <thread>

#include <fmt/format.h>

namespace fp8gemm::detail {

std::optional<std::string> read_file(const std::string& path) {
  // Non-blocking open: a FIFO (or a device) under a file's name must not hang the reader.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::string data;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int error = S_ISREG(st.st_mode) ? errno : EINVAL;
    ::close(fd);
    errno = error;
    return std::nullopt;
  }
  if (st.st_size > 0) data.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

int make_dirs(const std::string& path) {
  if (path.empty()) return ENOENT;
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return errno;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

int write_file_atomic(const std::string& path, const std::string& data) {
  static std::atomic<unsigned> counter{0};
  // The process id, a random value drawn once per process (processes in different PID
  // namespaces sharing a cache volume may have the same id), the thread and a counter.
  static const uint64_t nonce = std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
  const std::string tmp =
      fmt::format("{}.tmp.{}.{:x}.{:x}.{}", path, ::getpid(), nonce & 0xffffffffffull,
                  std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffff,
                  counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int err = 0;
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) ::unlink(tmp.c_str());
  return err;
}

std::vector<std::string> list_files(const std::string& dir, bool with_other) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (with_other || (::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode))) names.push_back(name);
  }
  ::closedir(d);
  return names;
}

}  // namespace fp8gemm::detail
