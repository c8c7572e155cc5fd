#pragma once

#include <string>
#include <vector>

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::host {

// A grouped GEMM problem of a shape set: `groups` experts of [n, k] weights, about
// `expected_m` rows each.
struct GroupedShape {
  GemmKind kind = GemmKind::GroupedContiguous;  // or GroupedMasked
  int64_t groups = 0;
  int64_t expected_m = 0;
  int64_t max_m = 0;  // GroupedMasked: rows per expert in A and D (0 for contiguous)
  int64_t n = 0;
  int64_t k = 0;
  // The rows of each expert, when the file lists them ("rows"); empty: the bench draws them
  // (int(expected_m x U[0.7, 1.3]) each, seeded). expected_m stays the planning hint either way.
  std::vector<int64_t> rows;
};

// Rows an expert's segment takes in a contiguous problem's A and D: its rows padded to
// kGroupedSegmentRows.
constexpr int64_t grouped_segment_rows(int64_t rows) {
  return (rows + kGroupedSegmentRows - 1) / kGroupedSegmentRows * kGroupedSegmentRows;
}

// The GemmShape a grouped shape is planned (prewarmed, tuned) with: GroupedContiguous: m =
// groups x round_up(expected_m, kGroupedSegmentRows), every expert at expected_m rows with its
// segment padded (a run's total varies with the actual rows per expert); GroupedMasked: m =
// groups x expected_m (as GemmKind documents). Both with `groups` = the experts.
GemmShape prewarm_shape(const GroupedShape& shape);

// A k-grouped weight-gradient problem of a shape set: `groups` groups of D [m, n] fp32, each
// over about expected_k columns.
struct KGroupedShape {
  int64_t groups = 0;
  int64_t m = 0;
  int64_t n = 0;
  int64_t expected_k = 0;
  // The K of each group, when the file lists them ("ks"; any K >= 0, each group's columns
  // padded to 128 with zeros); empty: the bench draws them (whole 128-column blocks).
  std::vector<int64_t> ks;
};

// The GemmShape it is planned (prewarmed, tuned) with: every group at expected_k columns, A's K the
// sum of the groups' padded widths.
GemmShape prewarm_shape(const KGroupedShape& shape);

struct ShapeFile {
  std::vector<GemmShape> dense;       // every (m, n, k) of the "dense" section
  std::vector<GemmShape> wgrad;       // the "wgrad" section (kind WeightGradient)
  std::vector<GroupedShape> grouped;  // "m_grouped_contiguous", then "m_grouped_masked"
  std::vector<KGroupedShape> k_grouped;  // "k_grouped"
};

// Reads a shape set (shapes/deepseek-v3.json format):
//   {"dense": {"m": [1, 128], "nk": [[2112, 7168], ...]}}  -> every m with every (n, k)
//   {"dense": {"mnk": [[m, n, k], ...]}}                    -> listed triples
//   {"wgrad": {"mnk": [[m, n, k], ...]}}                    -> weight-gradient triples
//   {"m_grouped_contiguous": {"groups_expected_m": [[g, m], ...], "nk": [[n, k], ...]}}
//   {"m_grouped_masked": {"max_m": 4096, "groups_expected_m": [[g, m], ...], "nk": [[n, k], ...]}}
//                                                           -> every (g, m) with every (n, k)
//   {"k_grouped": {"groups_m_n_expected_k": [[g, m, n, k], ...]}} -> k-grouped weight gradients
// The grouped sections may list the sizes instead of leaving them to the bench's draw: "rows"
// (m-grouped) holds one list per [g, m] entry with the g experts' rows (0 to max_m when masked),
// "ks" (k-grouped) one list per entry with the g groups' K; a listed problem is the same for
// every [n, k] (as a reference run that drew once per [g, m] was).
// Strict: one JSON document, no key twice, no unknown section or key (every section may hold
// "about"), sizes that are integers in [1, kMaxDimension], tuples of exactly their length;
// at most 16 MiB, nested at most 16 levels, list products of at most 2^20 shapes.
// Throws std::runtime_error naming the file, the section, the index and the rule.
ShapeFile read_shape_file(const std::string& path);

}  // namespace fp8gemm::host
