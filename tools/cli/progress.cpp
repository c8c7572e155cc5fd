#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace fp8gemm::cli {

Progress::Progress(std::string what, size_t total, bool quiet)
    : what_(std::move(what)), total_(total), quiet_(quiet), tty_(::isatty(2) != 0) {}

void Progress::step(size_t done, const std::string& item, const std::string& note, double elapsed_s) {
  if (quiet_) return;
  const double eta = done > 0 ? elapsed_s / double(done) * double(total_ - done) : 0.0;
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = total_ > 0 ? int(kWidth * done / total_) : kWidth;
    const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
    fmt::print(stderr, "\r\033[K{} [{}] {}/{}  {:.1f}s  ETA {:.0f}s  {}", what_, bar, done, total_, elapsed_s,
               eta, item);
    drawn_ = true;
  } else {
    fmt::print(stderr, "{} [{}/{}] {:.1f}s ETA {:.0f}s  {} ({})\n", what_, done, total_, elapsed_s, eta, item,
               note);
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

}  // namespace fp8gemm::cli
