#pragma once

#include <string>

namespace fp8gemm::detail {

enum class LogLevel;

// Every environment variable the library reads, read once at first use.
// README.md documents each of them.
struct Environment {
  std::string cache_dir;      // FP8GEMM_CACHE_DIR, else $XDG_CACHE_HOME/fp8gemm, else ~/.cache/fp8gemm
  bool disk_cache = true;     // FP8GEMM_DISK_CACHE=0 keeps compiled kernels in memory only
  LogLevel log_level;         // FP8GEMM_LOG_LEVEL
  std::string rejected_log_level;  // an unrecognised FP8GEMM_LOG_LEVEL value, reported once
  int tuning_mode = 1;        // FP8GEMM_TUNING: off (0), cached (1, default), on (2)
  std::string rejected_tuning;  // an unrecognised FP8GEMM_TUNING value, reported once
  bool cache_only = false;    // FP8GEMM_CACHE_ONLY=1: never compile on a call; a missing kernel is an error
};

// "off" / "cached" / "on" -> 0 / 1 / 2; -1 if not one of them.
int parse_tuning_mode(const std::string& text);

const Environment& env();

// The cache directory the variables above select (pure; for tests).
std::string resolve_cache_dir(const char* fp8gemm_cache_dir, const char* xdg_cache_home,
                              const char* home);

}  // namespace fp8gemm::detail
