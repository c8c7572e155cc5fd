#include "util/env.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "util/log.hpp"

namespace fp8gemm::detail {
namespace {

bool nonempty(const char* s) { return s != nullptr && *s != '\0'; }

LogLevel parse_level(const char* s, bool* bad) {
  *bad = false;
  if (!nonempty(s)) return LogLevel::Warn;
  const std::string v(s);
  if (v == "error") return LogLevel::Error;
  if (v == "warn" || v == "warning") return LogLevel::Warn;
  if (v == "info") return LogLevel::Info;
  if (v == "debug") return LogLevel::Debug;
  *bad = true;
  return LogLevel::Warn;
}

}  // namespace

int parse_tuning_mode(const std::string& text) {
  if (text == "off") return 0;
  if (text == "cached") return 1;
  if (text == "on") return 2;
  return -1;
}

std::string resolve_cache_dir(const char* fp8gemm_cache_dir, const char* xdg_cache_home,
                              const char* home) {
  if (nonempty(fp8gemm_cache_dir)) return fp8gemm_cache_dir;
  if (nonempty(xdg_cache_home)) return std::string(xdg_cache_home) + "/fp8gemm";
  if (nonempty(home)) return std::string(home) + "/.cache/fp8gemm";
  return "";  // no home: memory-only
}

const Environment& env() {
  static const Environment e = [] {
    Environment r;
    r.cache_dir = resolve_cache_dir(std::getenv("FP8GEMM_CACHE_DIR"), std::getenv("XDG_CACHE_HOME"),
                                    std::getenv("HOME"));
    const char* disk = std::getenv("FP8GEMM_DISK_CACHE");
    r.disk_cache = !(nonempty(disk) && std::strcmp(disk, "0") == 0);
    bool bad = false;
    const char* level = std::getenv("FP8GEMM_LOG_LEVEL");
    r.log_level = parse_level(level, &bad);
    if (bad) r.rejected_log_level = level;
    if (const char* tuning = std::getenv("FP8GEMM_TUNING"); nonempty(tuning)) {
      const int mode = parse_tuning_mode(tuning);
      if (mode < 0) r.rejected_tuning = tuning;
      else r.tuning_mode = mode;
    }
    const char* cache_only = std::getenv("FP8GEMM_CACHE_ONLY");
    r.cache_only = nonempty(cache_only) && std::strcmp(cache_only, "0") != 0;
    return r;
  }();
  return e;
}

}  // namespace fp8gemm::detail
