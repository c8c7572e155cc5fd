#pragma once

// The sizes of a grouped problem as `fp8gemm bench` lays it out: each expert's rows
// (m-grouped) or each group's K (k-grouped), listed by the shape file or drawn as
// DeepGEMM's benchmark draws them, and where each one starts in A (and D). Pure host logic.

#include <cstdint>
#include <vector>

#include "common/fp8_host.hpp"
#include "common/shape_file.hpp"
#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::host {

// An m-grouped problem: the shape file's rows, or int(expected_m x U[0.7, 1.3]) per expert
// (seeded by `seed` and the shape; masked: clamped to max_m). Contiguous: the experts' segments
// in order, each padded to kGroupedSegmentRows; masked: max_m rows per expert.
struct GroupedLayout {
  std::vector<int64_t> rows;    // real rows of each expert
  std::vector<int64_t> offset;  // first row of each expert in A and D
  int64_t a_rows = 0;           // rows of A and D
  int64_t real_rows = 0;        // sum of rows
  GemmShape plan;               // the shape the library plans (and prewarm compiles) for it
};
GroupedLayout grouped_layout(const GroupedShape& g, uint64_t seed);

// A k-grouped problem: the shape file's K values, or expected_k x U[0.7, 1.3] rounded up to
// 128 per group (seeded); each group's columns start on a 128-column boundary.
struct KGroupedLayout {
  std::vector<int32_t> ks;     // K_g of each group
  std::vector<int64_t> start;  // first column of each group in A and B
  int64_t columns = 0;         // columns of A and B: sum of k_grouped_columns(K_g)
  int64_t real_k = 0;          // sum of K_g (what FLOPs count)
};
// Draws from `rng` (which the bench goes on to use for its other data).
KGroupedLayout k_grouped_layout(const KGroupedShape& g, SplitMix64* rng);

}  // namespace fp8gemm::host
