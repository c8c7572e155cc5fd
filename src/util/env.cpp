#include "util/env.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "util/log.hpp"

namespace fp8gemm::detail {
namespace {

bool nonempty(const char* s) { return s != nullptr && *s != '\0'; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<LogLevel> parse_level(const std::string& text) {
  const std::string v = lower(text);
  if (v == "error") return LogLevel::Error;
  if (v == "warn" || v == "warning") return LogLevel::Warn;
  if (v == "info") return LogLevel::Info;
  if (v == "debug") return LogLevel::Debug;
  return std::nullopt;
}

}  // namespace

int parse_tuning_mode(const std::string& text) {
  const std::string v = lower(text);
  if (v == "off") return 0;
  if (v == "cached") return 1;
  if (v == "on") return 2;
  return -1;
}

std::optional<bool> parse_bool(const std::string& text) {
  const std::string v = lower(text);
  if (v == "1" || v == "true" || v == "on" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no") return false;
  return std::nullopt;
}

std::string resolve_cache_dir(const char* fp8gemm_cache_dir, const char* xdg_cache_home,
                              const char* home) {
  if (nonempty(fp8gemm_cache_dir)) return fp8gemm_cache_dir;
  if (nonempty(xdg_cache_home) && xdg_cache_home[0] == '/') return std::string(xdg_cache_home) + "/fp8gemm";
  if (nonempty(home)) return std::string(home) + "/.cache/fp8gemm";
  return "";  // no home: memory-only
}

Environment read_environment(const std::function<const char*(const char*)>& lookup) {
  Environment r;
  const char* dir = lookup("FP8GEMM_CACHE_DIR");
  const char* xdg = lookup("XDG_CACHE_HOME");
  const char* home = lookup("HOME");
  r.cache_dir = resolve_cache_dir(dir, xdg, home);
  if (nonempty(dir)) r.cache_dir_source = "FP8GEMM_CACHE_DIR";
  else if (nonempty(xdg) && xdg[0] == '/') r.cache_dir_source = "XDG_CACHE_HOME";
  else if (nonempty(home)) r.cache_dir_source = "HOME";
  if (nonempty(xdg) && xdg[0] != '/')
    r.warnings.push_back(fmt::format("XDG_CACHE_HOME={} is not an absolute path; ignored (the XDG rule), using {}", xdg,
                                     r.cache_dir.empty() ? std::string("no cache directory") : r.cache_dir));

  // A variable that is unset or empty takes its default silently; any other value that is
  // not understood takes the default with one warning naming the accepted values.
  auto boolean = [&](const char* name, bool fallback, bool* out, std::string* source) {
    *out = fallback;
    *source = "default";
    const char* v = lookup(name);
    if (!nonempty(v)) return;
    if (const std::optional<bool> b = parse_bool(v)) {
      *out = *b;
      *source = fmt::format("{}={}", name, v);
    } else {
      r.warnings.push_back(fmt::format("{}={} is not one of 1, 0, true, false, on, off, yes, no; using {}", name, v,
                                       fallback ? "on" : "off"));
    }
  };
  boolean("FP8GEMM_DISK_CACHE", true, &r.disk_cache, &r.disk_cache_source);
  boolean("FP8GEMM_CACHE_ONLY", false, &r.cache_only, &r.cache_only_source);

  r.log_level = LogLevel::Warn;
  r.log_level_source = "default";
  if (const char* v = lookup("FP8GEMM_LOG_LEVEL"); nonempty(v)) {
    if (const std::optional<LogLevel> level = parse_level(v)) {
      r.log_level = *level;
      r.log_level_source = fmt::format("FP8GEMM_LOG_LEVEL={}", v);
    } else {
      r.warnings.push_back(fmt::format("FP8GEMM_LOG_LEVEL={} is not one of error, warn, info, debug; using warn", v));
    }
  }
  r.tuning_source = "default";
  if (const char* v = lookup("FP8GEMM_TUNING"); nonempty(v)) {
    const int mode = parse_tuning_mode(v);
    if (mode >= 0) {
      r.tuning_mode = mode;
      r.tuning_source = fmt::format("FP8GEMM_TUNING={}", v);
    } else {
      r.warnings.push_back(fmt::format("FP8GEMM_TUNING={} is not one of off, cached, on; using cached", v));
    }
  }
  return r;
}

const Environment& env() {
  static const Environment e = [] {
    Environment r = read_environment([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
    // Written here, once, whatever else the process logs (a setting that was misread must be
    // seen); an explicit FP8GEMM_LOG_LEVEL=error silences them with every other warning.
    if (r.log_level != LogLevel::Error)
      for (const std::string& w : r.warnings) log_write(LogLevel::Warn, w);
    return r;
  }();
  return e;
}

}  // namespace fp8gemm::detail
