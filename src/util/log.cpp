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

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warning";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "?";
}

}  // namespace

LogLevel log_level() { return static_cast<LogLevel>(level_storage().load(std::memory_order_relaxed)); }

void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }

namespace {
void log_line(LogLevel level, const std::string& message) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "[fp8gemm %s] %s\n", level_name(level), message.c_str());
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
