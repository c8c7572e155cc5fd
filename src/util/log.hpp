#pragma once

#include <string>

#include <fmt/format.h>

namespace fp8gemm::detail {

// The library's only output channel: one line per message on stderr, filtered by
// FP8GEMM_LOG_LEVEL (error | warn | info | debug; default warn).
enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

LogLevel log_level();
// "error", "warn", "info" or "debug": the FP8GEMM_LOG_LEVEL word of a level.
const char* log_level_word(LogLevel level);
void set_log_level(LogLevel level);  // tests and tools
void log_write(LogLevel level, const std::string& message);

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (level <= log_level()) log_write(level, fmt::format(format, std::forward<Args>(args)...));
}

// Warns only the first time `key` is seen in this process.
void warn_once(const std::string& key, const std::string& message);

}  // namespace fp8gemm::detail
