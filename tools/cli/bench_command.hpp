#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::cli {

struct BenchOptions {
  std::string shapes;      // shape set (JSON)
  int replays = 15;        // timed graph replays per shape (the median is reported)
  // Time isolated calls instead of graph replays: each call alone after an L2 flush and a
  // 2 ms pause (median of max(20, 2 x replays) calls), below the card's power limit.
  bool isolated = false;
  int flush_mb = 256;  // isolated: size of the memset before each call (L2 flush)
  int pause_ms = 2;    // isolated: idle time after each call
  // Isolated: time each call by the summed durations of its kernels as the CUDA profiling
  // interface (CUPTI) records them, not by events around it: the way profiler-based harnesses
  // time kernels (the launch gap and the events' own cost left out).
  bool kernel_time = false;
  bool cublas = true;      // also time cuBLASLt's block-scaled FP8 GEMM
  std::string json, csv;   // optional outputs
  uint64_t seed = 1;
  // When given, each shape is timed with each of these configs instead of the
  // library's own choice (cuBLASLt once per shape).
  std::vector<KernelConfig> configs;
  // Time the quantization kernels instead of the GEMMs: on [M, K] of every shape with
  // M >= 4096 (activations) and on 4096x7168 / 16384x7168, as bandwidth.
  bool quantize = false;
  // Time gemm_fp8_nt_wgrad on the shape file's "wgrad" shapes instead, in place
  // (D fp32 += A x B^T, C = D), against cuBLASLt's VEC128 x VEC128 FP8 GEMM with beta 1.
  bool wgrad = false;
  // Time gemm_fp8_nt_grouped_contiguous / _masked on the shape file's "m_grouped_contiguous"
  // and "m_grouped_masked" shapes instead (rows per expert drawn in [0.7, 1.3] x expected_m),
  // against a loop of cuBLASLt's block-scaled FP8 GEMM over the experts.
  bool grouped = false;
  // Dense shapes: call gemm_fp8_nt with GemmOptions::b_constant (B is never written between
  // calls here), so that small-M kernels load B before the previous call has finished.
  bool b_constant = false;
};

// "bm,bn,stages[,group_n[,multicast[,tma_store[,split_k]]]]" -> config; false if malformed.
bool parse_kernel_config(const std::string& text, KernelConfig* config);

// Times gemm_fp8_nt (or gemm_fp8_nt_wgrad, or the grouped GEMMs) and cuBLASLt on every shape
// of the set; returns the exit code.
int run_bench(const BenchOptions& options);

}  // namespace fp8gemm::cli
