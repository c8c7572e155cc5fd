#pragma once

#include <string>

namespace fp8gemm::test {

// The fp8gemm command line, run as a separate process through the shell.
struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `fp8gemm <args>` with `env` (shell assignments such as "FP8GEMM_DISK_CACHE=0", or "")
// in front of it.
CliResult run_cli(const std::string& args, const std::string& env = "");

// Writes `json` to <dir>/<name> and returns its path.
std::string write_shapes(const std::string& dir, const std::string& json, const std::string& name = "shapes.json");

}  // namespace fp8gemm::test
