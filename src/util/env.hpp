#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fp8gemm::detail {

enum class LogLevel;

// Every environment variable the library reads, read once at first use.
// README.md ("Settings") documents each of them and the values it accepts.
struct Environment {
  std::string cache_dir;         // FP8GEMM_CACHE_DIR, else $XDG_CACHE_HOME/fp8gemm, else ~/.cache/fp8gemm
  std::string cache_dir_source;  // the variable cache_dir came from ("" when there is none)
  bool disk_cache = true;        // FP8GEMM_DISK_CACHE=0 keeps compiled kernels in memory only
  LogLevel log_level;            // FP8GEMM_LOG_LEVEL
  int tuning_mode = 1;           // FP8GEMM_TUNING: off (0), cached (1, default), on (2)
  bool cache_only = false;       // FP8GEMM_CACHE_ONLY=1: never compile on a call; a missing kernel is an error
  // Where each setting came from: "NAME=value" as read, or "default".
  std::string disk_cache_source, log_level_source, tuning_source, cache_only_source;
  // One line per variable whose value was not understood: the variable, the value and what is
  // used instead. Written to stderr once, when the environment is first read.
  std::vector<std::string> warnings;
};

// The settings a lookup of variables describes (pure: env() passes std::getenv; tests pass
// their own table).
Environment read_environment(const std::function<const char*(const char*)>& lookup);

// "off" / "cached" / "on" (any case) -> 0 / 1 / 2; -1 if not one of them.
int parse_tuning_mode(const std::string& text);

// "1", "true", "on", "yes" -> true; "0", "false", "off", "no" -> false (any case); nullopt otherwise.
std::optional<bool> parse_bool(const std::string& text);

const Environment& env();

// The cache directory the variables above select (pure; for tests). A relative
// XDG_CACHE_HOME is ignored, as the XDG base-directory rule says.
std::string resolve_cache_dir(const char* fp8gemm_cache_dir, const char* xdg_cache_home,
                              const char* home);

}  // namespace fp8gemm::detail
