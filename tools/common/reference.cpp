#include "common/reference.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include <fmt/format.h>

namespace fp8gemm::host {

std::vector<double> reference_rows(const Fp8Operand& a, const Fp8Operand& b, const std::vector<int64_t>& rows,
                                   int threads) {
  const int64_t n = b.rows, k = a.cols;
  // Dequantize B once (as doubles, row-major [n][k]).
  std::vector<double> bd(static_cast<size_t>(n * k));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) bd[r * k + c] = b.value(r, c);
  std::vector<double> out(rows.size() * static_cast<size_t>(n));
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto work = [&](size_t first, size_t step) {
    std::vector<double> ad(static_cast<size_t>(k));
    for (size_t i = first; i < rows.size(); i += step) {
      for (int64_t c = 0; c < k; ++c) ad[c] = a.value(rows[i], c);
      for (int64_t j = 0; j < n; ++j) {
        const double* bj = &bd[j * k];
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        int64_t c = 0;
        for (; c + 4 <= k; c += 4) {
          s0 += ad[c] * bj[c];
          s1 += ad[c + 1] * bj[c + 1];
          s2 += ad[c + 2] * bj[c + 2];
          s3 += ad[c + 3] * bj[c + 3];
        }
        for (; c < k; ++c) s0 += ad[c] * bj[c];
        out[i * n + j] = (s0 + s1) + (s2 + s3);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t, threads);
  work(0, threads);
  for (auto& t : pool) t.join();
  return out;
}

Comparison compare_bf16_rows(const uint16_t* d, int64_t ld, int64_t n, const std::vector<int64_t>& rows,
                             const std::vector<double>& ref) {
  Comparison c;
  double num = 0.0, den = 0.0, worst = -1.0;
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double got = bf16_to_float(d[rows[i] * ld + j]);
      const double want = ref[i * n + j];
      ++c.compared;
      if (!std::isfinite(got)) {
        ++c.nan_or_unwritten;
        continue;
      }
      const double e = got - want;
      num += e * e;
      den += want * want;
      if (std::fabs(e) > worst) {
        worst = std::fabs(e);
        c.worst_row = rows[i];
        c.worst_col = j;
        c.worst_got = got;
        c.worst_want = want;
      }
    }
  c.rel_error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return c;
}

std::string Comparison::describe() const {
  return fmt::format("rel_error={:.3e} compared={} nan/unwritten={} worst at ({}, {}): got {:.6g} want {:.6g}",
                     rel_error, compared, nan_or_unwritten, worst_row, worst_col, worst_got, worst_want);
}

}  // namespace fp8gemm::host
