#pragma once

#include <cstddef>
#include <string>

namespace fp8gemm::cli {

// A progress line on stderr: redrawn in place with a bar and ETA on a terminal, one
// line per step otherwise (logs, CI).
class Progress {
 public:
  Progress(std::string what, size_t total, bool quiet);
  void step(size_t done, const std::string& item, const std::string& note, double elapsed_s);
  void finish();

 private:
  std::string what_;
  size_t total_;
  bool quiet_;
  bool tty_;
  bool drawn_ = false;
};

}  // namespace fp8gemm::cli
