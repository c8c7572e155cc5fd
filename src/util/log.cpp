#include "util/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>

#include "util/env.hpp"

namespace fp8gemm::detail {
namespace {

void log_line(LogLevel level, const std::string& message);

std::atomic<int>& level_storage() {
  static std::atomic<int> level{static_cast<int>(env().log_level)};
  return level;
}

}  // namespace

const char* log_level_word(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "warn";
}

LogLevel log_level() { return static_cast<LogLevel>(level_storage().load(std::memory_order_relaxed)); }

void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }

namespace {
void log_line(LogLevel level, const std::string& message) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  // Lines read "[fp8gemm warning] ..." rather than "warn".
  std::fprintf(stderr, "[fp8gemm %s] %s\n", level == LogLevel::Warn ? "warning" : log_level_word(level),
               message.c_str());
  std::fflush(stderr);
}
}  // namespace

void log_write(LogLevel level, const std::string& message) { log_line(level, message); }

void warn_once(const std::string& key, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.insert(key).second) return;
  }
  log(LogLevel::Warn, "{}", message);
}

}  // namespace fp8gemm::detail
