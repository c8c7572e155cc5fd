#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/fp8_host.hpp"

namespace fp8gemm::host {

// fp64 reference of D = A x B^T on the dequantized operands, for the listed rows of A
// (all columns). Result is [rows.size()][b.rows], row-major. Uses `threads` threads.
std::vector<double> reference_rows(const Fp8Operand& a, const Fp8Operand& b, const std::vector<int64_t>& rows,
                                   int threads = 0);

struct Comparison {
  double rel_error = 0.0;  // ||D - ref||_F / ||ref||_F over the compared elements
  int64_t compared = 0;
  int64_t nan_or_unwritten = 0;  // NaN/Inf outputs (the poison pattern is a NaN)
  int64_t worst_row = -1, worst_col = -1;
  double worst_got = 0.0, worst_want = 0.0;
  std::string describe() const;
};

// Compares bf16 rows of D (row i of `rows` is D row rows[i], leading dimension ld)
// against reference_rows() output.
Comparison compare_bf16_rows(const uint16_t* d, int64_t ld, int64_t n, const std::vector<int64_t>& rows,
                             const std::vector<double>& ref);

}  // namespace fp8gemm::host
