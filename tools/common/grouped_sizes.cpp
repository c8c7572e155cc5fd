#include "common/grouped_sizes.hpp"

#include <algorithm>

namespace fp8gemm::host {

GroupedLayout grouped_layout(const GroupedShape& g, uint64_t seed) {
  const bool masked = g.kind == GemmKind::GroupedMasked;
  SplitMix64 rng(seed + uint64_t(g.groups * 1009 + g.expected_m * 131 + g.n * 7 + g.k) + (masked ? 17u : 0u));
  GroupedLayout l;
  for (int64_t e = 0; e < g.groups; ++e) {
    int64_t rows = static_cast<int64_t>(double(g.expected_m) * (0.7 + 0.6 * rng.uniform()));
    if (!g.rows.empty()) rows = g.rows[size_t(e)];  // (the draw above keeps the generator's sequence)
    if (masked) rows = std::min(rows, g.max_m);
    l.rows.push_back(rows);
    l.offset.push_back(masked ? e * g.max_m : l.a_rows);
    if (!masked) l.a_rows += grouped_segment_rows(rows);
    l.real_rows += rows;
  }
  if (masked) l.a_rows = g.groups * g.max_m;
  l.plan = GemmShape{masked ? g.groups * g.expected_m : l.a_rows, g.n, g.k, g.kind, g.groups};
  return l;
}

KGroupedLayout k_grouped_layout(const KGroupedShape& g, SplitMix64* rng) {
  KGroupedLayout l;
  for (int64_t e = 0; e < g.groups; ++e) {
    int64_t kg = k_grouped_columns(int64_t(double(g.expected_k) * (0.7 + 0.6 * rng->uniform())));
    if (!g.ks.empty()) kg = g.ks[size_t(e)];  // (the draw above keeps the generator's sequence)
    l.ks.push_back(int32_t(kg));
    l.start.push_back(l.columns);
    l.columns += k_grouped_columns(kg);
    l.real_k += kg;
  }
  return l;
}

}  // namespace fp8gemm::host
