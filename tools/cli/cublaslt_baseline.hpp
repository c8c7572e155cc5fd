#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

namespace fp8gemm::cli {

// cuBLASLt's block-scaled FP8 GEMM (Hopper, cuBLAS >= 12.9) as the benchmark's baseline, in
// the two forms fp8gemm has (see Form). A [M,K] and B [N,K] are e4m3, K-major.
// libcublasLt.so is opened at run time; the library never uses it.
class CublasLtGemm {
 public:
  enum class Form {
    // gemm_fp8_nt: D [M,N] bf16 = A x B^T, VEC128 scales on the activations (A) and
    // BLK128x128 scales on the weights (B); beta 0.
    Forward,
    // gemm_fp8_nt_wgrad with C = D: D [M,N] fp32 += A x B^T, VEC128 scales on both operands;
    // C and D are the same fp32 buffer, beta 1 (accumulates in place).
    WeightGradient,
  };

  // nullptr and the reason if libcublasLt cannot be loaded.
  static std::unique_ptr<CublasLtGemm> open(std::string* why);
  ~CublasLtGemm();

  // Configures the problem. M must be a multiple of 4 (cuBLASLt's rule). Scales:
  //   Forward:        sfa M-major [ceil(K/128)][M]; sfb [ceil(N/128)][round_up(ceil(K/128), 4)].
  //   WeightGradient: sfa M-major [ceil(K/128)][M]; sfb N-major [ceil(K/128)][N] (VEC128 is
  //                   outer-dimension-major with no padding: the column stride is the row count).
  // Returns false and why if cuBLASLt offers no algorithm.
  // The scale pointers of one set of inputs must be known before cuBLASLt picks an algorithm.
  bool prepare(Form form, int64_t m, int64_t n, int64_t k, const float* sfa, const float* sfb, std::string* why);
  // Runs on `stream`; the heuristic's algorithm `algo` (0 .. algorithms() - 1). d is bf16
  // (Forward) or fp32, read and written (WeightGradient).
  void run(const void* a, const float* sfa, const void* b, const float* sfb, void* d, int algo,
           cudaStream_t stream);
  int algorithms() const;

  // Several problems at once (the grouped bench's loop of per-expert GEMMs): prepare() keeps
  // only the problem it configures (index 0), reset() drops all; add_problem() configures one more next to those
  // and returns its index, or -1 and why. run_problem() runs problem `problem` like run().
  // ld: the row length of A and B in bytes when they are column ranges of wider matrices
  // (the k-grouped bench's per-group calls); 0 = K.
  int add_problem(Form form, int64_t m, int64_t n, int64_t k, const float* sfa, const float* sfb, std::string* why,
                  int64_t ld = 0);
  void run_problem(int problem, const void* a, const float* sfa, const void* b, const float* sfb, void* d, int algo,
                   cudaStream_t stream);
  int algorithms(int problem) const;
  void reset();
  std::string version() const;

 private:
  struct Impl;
  explicit CublasLtGemm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fp8gemm::cli
