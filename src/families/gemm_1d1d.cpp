// The weight-gradient family (kernels/fp8gemm/gemm_1d1d.cuh): D fp32 = C + A x B^T with 1x128
// scales on both operands, dense or k-grouped (each group over its own columns; K at run time).

#include <fmt/format.h>

#include "families/family.hpp"
#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::detail {

namespace {

// 192 rows fit the rows of some shapes better (dense: 576x4096x7168, one wave of 129 tiles of
// 192x96, 40 us against 46 for 128x160; 24576x4096x1536 4 % faster). k-grouped tiles of 192
// rows measured 4-12 % slower than 128x128 while the 128-column one spilled (2026-11-30); since
// the tile walk became a schedule object they compile without local memory, and 192x128 runs
// at 128x192's rate per FLOP (the planner's k-grouped gap for three math warpgroups,
// src/heuristics), so the padding decides between them.
bool every_height(int, int64_t) { return true; }

std::string common_rules(const KernelSpec& spec) {
  const KernelConfig& c = spec.config;
  if (c.block_m != 64 && c.block_m != 128 && c.block_m != 192)
    return fmt::format("block_m={} must be 64, 128 or 192 (weight gradient)", c.block_m);
  if (c.block_n > 192) return fmt::format("block_n={} must be at most 192 (weight gradient)", c.block_n);
  return "";
}

std::string features(const KernelConfig& c) {
  if (c.multicast != 0 || c.tma_store != 0 || c.split_k != 1)
    return "the weight-gradient kernel has no multicast, TMA-store epilogue or split-K";
  return "";
}

// Both forms take tiles up to 192 columns. (The k-grouped kernel was held to 128 while its
// group walk's registers made wider one-buffer tiles spill; since the walk became a schedule
// object, schedule.cuh, it compiles without local memory at 144, 160 and 192 columns too,
// and the NVRTC CPU test keeps it so.)
std::string rules(const KernelSpec& spec) {
  const std::string why = common_rules(spec);
  return why.empty() ? features(spec.config) : why;
}

GeneratedKernel generate(const KernelSpec& spec) {
  return generate_gemm_kernel(spec, "gemm_1d1d_kernel", "gemm_1d1d.cuh",
                              {{"kKGrouped", family(spec.kind).k_at_run_time ? 1 : 0}});
}

}  // namespace

const Family kGemm1D1DFamily{
    KernelKind::Gemm1D1D, "gemm1d1d",
    /*gemm=*/true, /*fp32_output=*/true, /*m_grouping=*/0, /*k_at_run_time=*/false, /*n_multiple=*/4, kMaxDimension,
    /*constant_b_option=*/false, /*pow2_option=*/false,
    /*groups_in_plan=*/false, /*groups_in_cost_model=*/false, /*rows_on_device=*/false,
    KernelKind::Gemm1D1D, /*wide_stripes_when_memory_bound=*/true, every_height, rules, generate,
    static_cast<int>(GemmKind::WeightGradient)};

const Family kKGroupedFamily{
    KernelKind::KGrouped, "gemm1d1d_kg",
    /*gemm=*/true, /*fp32_output=*/true, /*m_grouping=*/0, /*k_at_run_time=*/true, /*n_multiple=*/4, kMaxDimension,
    /*constant_b_option=*/false, /*pow2_option=*/false,
    /*groups_in_plan=*/true, /*groups_in_cost_model=*/true, /*rows_on_device=*/true,
    KernelKind::Gemm1D1D, /*wide_stripes_when_memory_bound=*/false, every_height, rules, generate,
    static_cast<int>(GemmKind::KGroupedWeightGradient)};

}  // namespace fp8gemm::detail
