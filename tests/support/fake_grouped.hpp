#pragma once

// A valid m-grouped call on fake device addresses (never dereferenced): 4 experts, one
// 128-row segment each (masked: max_m = 128), N = 264 and K = 528 with tails. For tests of
// what the public entry points check before they touch the driver.

#include <cstdint>

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::test {

struct GroupedArgs {
  int64_t groups = 4, n = 264, k = 528, m = 4 * kGroupedSegmentRows;  // masked: max_m = m / groups = 128
  Fp8Matrix a{reinterpret_cast<void*>(0x100000000), m, k, k};
  Fp8Matrix b{reinterpret_cast<void*>(0x200000000), groups * n, k, k};
  Bf16Matrix d{reinterpret_cast<void*>(0x300000000), m, n, n};
  ScaleMatrix sa = per_token_scales(reinterpret_cast<const float*>(0x400000000), m, k);
  // Each expert's ceil(N/128) = 3 block rows, stacked.
  ScaleMatrix sb{reinterpret_cast<const float*>(0x500000000), groups * scale_blocks(n), scale_blocks(k),
                 scale_blocks(k), 1};
  const int32_t* index = reinterpret_cast<const int32_t*>(0x600000000);  // group_of_row or masked_m
  int64_t expected_m = 64;

  void set_m(int64_t rows) {
    m = a.rows = d.rows = rows;
    sa = per_token_scales(sa.data, rows, k);
  }
  void contiguous() const { gemm_fp8_nt_grouped_contiguous(a, sa, b, sb, d, index, groups); }
  void masked() const { gemm_fp8_nt_grouped_masked(a, sa, b, sb, d, index, groups, expected_m); }
};

}  // namespace fp8gemm::test
