// The forward GEMM family (kernels/fp8gemm/gemm_1d2d.cuh): D bf16 = A (1x128 scales) x B^T
// (128x128 scales), dense or over m-grouped experts (contiguous segments, masked rows).

#include <fmt/format.h>

#include "families/family.hpp"
#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::detail {

namespace {

// Dense: every tile height, 192 rows (three math warpgroups) included: one row or a few past a
// multiple of 256 they measured the best or within 3 % of it (docs/PERFORMANCE.md, log 52).
bool dense_ranks(int, int64_t) { return true; }

// Contiguous: not 192 rows (segments are 128-row aligned; the rules allow 64 and 128).
bool contiguous_ranks(int block_m, int64_t) { return block_m != 192; }

// Masked 256-row tiles only where one tile holds a whole expert (its B then read by one
// tile instead of two): 32 x 192 rows measured 0-12 % faster than 128-row tiles, 6 x 1024
// rows up to 30 % slower (docs/PERFORMANCE.md, grouped log entry 6).
bool masked_ranks(int block_m, int64_t group_m) { return block_m != 192 && !(block_m == 256 && group_m > 256); }

std::string dense_rules(const KernelSpec&) { return ""; }

// A tile never mixes experts: contiguous segments are 128-row aligned. Contiguous tiles may
// run in CTA pairs sharing B (two M blocks; where they lie in two experts each CTA loads its
// own B).
std::string contiguous_rules(const KernelSpec& spec) {
  const KernelConfig& c = spec.config;
  if (c.block_m != 64 && c.block_m != 128)
    return fmt::format("block_m={} must be 64 or 128 (contiguous grouped)", c.block_m);
  if (c.multicast == 1 || c.split_k != 1)
    return "the contiguous grouped kernel pairs CTAs only on B (multicast 0 or 2) and has no split-K";
  return "";
}

// A masked tile lies inside its expert's max_m rows or ends past them (rows past masked_m
// are computed, never stored), so masked problems may also take 256-row tiles. Tiles of up
// to 128 rows may run in CTA pairs sharing B (two M blocks of one expert; a partner block
// past masked_m stores nothing).
std::string masked_rules(const KernelSpec& spec) {
  const KernelConfig& c = spec.config;
  if (c.block_m != 64 && c.block_m != 128 && c.block_m != 256)
    return fmt::format("block_m={} must be 64, 128 or 256 (masked grouped)", c.block_m);
  if (c.multicast == 1 || c.split_k != 1 || (c.multicast == 2 && c.block_m == 256))
    return "the masked grouped kernel pairs CTAs only on B (multicast 0 or 2, tiles of up to 128 rows) and has "
           "no split-K";
  return "";
}

GeneratedKernel generate(const KernelSpec& spec) {
  return generate_gemm_kernel(spec, "gemm_1d2d_kernel", "gemm_1d2d.cuh",
                              {{"kMulticast", spec.config.multicast},
                               {"kSplitK", spec.config.split_k},
                               {"kTmaStore", spec.config.tma_store},
                               {"kGrouping", family(spec.kind).m_grouping},
                               {"kEarlyB", spec.option == 1 ? kConstantBStages : 0},
                               {"kStripesAlongM", kernel_layout(spec).stripes_along_m ? 1 : 0}});
}

}  // namespace

const Family kGemm1D2DFamily{
    KernelKind::Gemm1D2D, "gemm1d2d",
    /*gemm=*/true, /*fp32_output=*/false, /*m_grouping=*/0, /*k_at_run_time=*/false, /*n_multiple=*/8, kMaxK1D2D,
    /*constant_b_option=*/true, /*pow2_option=*/false,
    /*groups_in_plan=*/false, /*groups_in_cost_model=*/false, /*rows_on_device=*/false,
    KernelKind::Gemm1D2D, /*wide_stripes_when_memory_bound=*/false, dense_ranks, dense_rules, generate,
    static_cast<int>(GemmKind::Forward)};

const Family kGroupedContiguousFamily{
    KernelKind::GroupedContiguous, "gemm1d2d_gc",
    /*gemm=*/true, /*fp32_output=*/false, /*m_grouping=*/1, /*k_at_run_time=*/false, /*n_multiple=*/8, kMaxK1D2D,
    /*constant_b_option=*/false, /*pow2_option=*/false,
    /*groups_in_plan=*/false, /*groups_in_cost_model=*/false, /*rows_on_device=*/true,
    KernelKind::GroupedContiguous, /*wide_stripes_when_memory_bound=*/false, contiguous_ranks, contiguous_rules, generate,
    static_cast<int>(GemmKind::GroupedContiguous)};

const Family kGroupedMaskedFamily{
    KernelKind::GroupedMasked, "gemm1d2d_gm",
    /*gemm=*/true, /*fp32_output=*/false, /*m_grouping=*/2, /*k_at_run_time=*/false, /*n_multiple=*/8, kMaxK1D2D,
    /*constant_b_option=*/false, /*pow2_option=*/false,
    /*groups_in_plan=*/true, /*groups_in_cost_model=*/true, /*rows_on_device=*/true,
    KernelKind::GroupedMasked, /*wide_stripes_when_memory_bound=*/false, masked_ranks, masked_rules, generate,
    static_cast<int>(GemmKind::GroupedMasked)};

}  // namespace fp8gemm::detail
