#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fp8gemm::detail {

// Small POSIX file helpers. None of them throws: failures come back as an errno
// value (0 = success) so that callers can degrade (e.g. to a memory-only cache).

// Reads a whole regular file (or one a symbolic link names); std::nullopt, with errno set,
// if it cannot be opened or read, or is no regular file (EINVAL: a FIFO, a device, a
// directory), without blocking on it.
std::optional<std::string> read_file(const std::string& path);

// Creates the directory and its parents (mode 0755). Returns 0 or errno.
int make_dirs(const std::string& path);

// Writes `data` to a unique temporary file beside `path`, flushes it to disk and
// renames it over `path`, so readers see either the old file or the whole new one.
// Returns 0 or errno; the temporary file is removed on failure.
int write_file_atomic(const std::string& path, const std::string& data);

// Names of the regular files in a directory (not recursive; with `with_other`, every other
// entry too: subdirectories, links, sockets); empty if unreadable.
std::vector<std::string> list_files(const std::string& dir, bool with_other = false);

}  // namespace fp8gemm::detail
