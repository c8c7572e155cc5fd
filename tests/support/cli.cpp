#include "support/cli.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>

namespace fp8gemm::test {

CliResult run_cli(const std::string& args, const std::string& env) {
  const std::string command = (env.empty() ? "" : "env " + env + " ") + std::string(FP8GEMM_CLI_PATH) + " " + args +
                              " 2>&1";
  CliResult r;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), p)) > 0) r.output.append(buffer, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string write_shapes(const std::string& dir, const std::string& json, const std::string& name) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << json;
  return path;
}

}  // namespace fp8gemm::test
