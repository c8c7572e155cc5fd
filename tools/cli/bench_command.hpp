#pragma once

#include <cstdint>
#include <string>

namespace fp8gemm::cli {

struct BenchOptions {
  std::string shapes;      // shape set (JSON)
  int replays = 15;        // timed graph replays per shape (the median is reported)
  bool cublas = true;      // also time cuBLASLt's block-scaled FP8 GEMM
  std::string json, csv;   // optional outputs
  uint64_t seed = 1;
};

// Times gemm_fp8_nt (and cuBLASLt) on every shape of the set; returns the exit code.
int run_bench(const BenchOptions& options);

}  // namespace fp8gemm::cli
