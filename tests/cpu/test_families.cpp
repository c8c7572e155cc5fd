// The kernel families' table (src/families): one entry per KernelKind, in its order, with
// unique names; the capabilities the generic layers ask are consistent with the kinds they
// describe; the quantizers' generated instances are the documented kernels.

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <string>

#include "codegen/gemm_codegen.hpp"
#include "families/family.hpp"
#include "fp8gemm/fp8gemm.hpp"

using namespace fp8gemm::detail;

namespace {

constexpr KernelKind kKinds[] = {KernelKind::Gemm1D2D,        KernelKind::Gemm1D1D,     KernelKind::Quantize1x128,
                                 KernelKind::Quantize128x128, KernelKind::QuantizeTransposed1x128,
                                 KernelKind::TransposeFp8,    KernelKind::CopyScales,   KernelKind::GroupedContiguous,
                                 KernelKind::GroupedMasked,   KernelKind::KGrouped};

TEST(Families, OneEntryPerKindWithAUniqueName) {
  size_t count = 0;
  const Family* const* families = all_families(&count);
  ASSERT_EQ(count, std::size(kKinds));
  std::set<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(families[i]->kind, kKinds[i]) << i;
    EXPECT_EQ(&family(kKinds[i]), families[i]) << families[i]->name;
    EXPECT_EQ(family_named(families[i]->name), families[i]) << families[i]->name;
    EXPECT_TRUE(names.insert(families[i]->name).second) << families[i]->name;
    EXPECT_STREQ(kind_name(kKinds[i]), families[i]->name);
  }
  EXPECT_EQ(family_named("gemm1d2d_x"), nullptr);
}

TEST(Families, CapabilitiesMatchTheKinds) {
  for (KernelKind kind : kKinds) {
    const Family& f = family(kind);
    SCOPED_TRACE(f.name);
    EXPECT_EQ(f.gemm, is_gemm(kind));
    // fp32 output: rows 16-byte aligned at N % 4 and K unbounded by B's 128x128 scales.
    if (f.gemm) EXPECT_EQ(f.n_multiple, f.fp32_output ? 4 : 8);
    if (f.gemm) EXPECT_EQ(f.max_k, f.fp32_output ? kMaxDimension : kMaxK1D2D);
    // Only the forward kernel is m-grouped; only the weight gradient takes K at run time.
    if (f.m_grouping != 0) EXPECT_FALSE(f.fp32_output);
    if (f.k_at_run_time) EXPECT_TRUE(f.fp32_output);
    // Grouped kinds: the rows (or columns) live on the device, so the grid covers the GPU.
    EXPECT_EQ(f.rows_on_device, f.m_grouping != 0 || f.k_at_run_time);
    // A family ranked as another is ranked as a GEMM of the same kernel.
    if (f.ranked_as != kind) EXPECT_EQ(family(f.ranked_as).fp32_output, f.fp32_output);
    // No tile is ranked for a quantizer; 192-row tiles for the dense GEMMs (forward and weight
    // gradient) and the k-grouped weight gradient, not over the m-grouped forward ones' experts.
    if (!f.gemm) EXPECT_FALSE(f.ranks_block_m(128, 4096));
    if (f.gemm) EXPECT_EQ(f.ranks_block_m(192, 4096), f.m_grouping == 0);
    EXPECT_EQ(f.constant_b_option, kind == KernelKind::Gemm1D2D);
  }
  // Masked 256-row tiles only for experts of at most 256 rows.
  EXPECT_TRUE(family(KernelKind::GroupedMasked).ranks_block_m(256, 256));
  EXPECT_FALSE(family(KernelKind::GroupedMasked).ranks_block_m(256, 257));
  EXPECT_TRUE(family(KernelKind::Gemm1D2D).ranks_block_m(256, 4096));
}

// Each public GemmKind names exactly one GEMM family (what prewarm, tune and kernel_name plan
// for a GemmShape); the quantizers are named by none.
TEST(Families, EachGemmKindNamesOneGemmFamily) {
  const std::pair<fp8gemm::GemmKind, KernelKind> kinds[] = {
      {fp8gemm::GemmKind::Forward, KernelKind::Gemm1D2D},
      {fp8gemm::GemmKind::WeightGradient, KernelKind::Gemm1D1D},
      {fp8gemm::GemmKind::GroupedContiguous, KernelKind::GroupedContiguous},
      {fp8gemm::GemmKind::GroupedMasked, KernelKind::GroupedMasked},
      {fp8gemm::GemmKind::KGroupedWeightGradient, KernelKind::KGrouped}};
  for (const auto& [gemm_kind, kind] : kinds) {
    const Family* f = family_of_gemm_kind(static_cast<int>(gemm_kind));
    ASSERT_NE(f, nullptr) << static_cast<int>(gemm_kind);
    EXPECT_EQ(f->kind, kind) << f->name;
  }
  size_t count = 0;
  const Family* const* families = all_families(&count);
  for (size_t i = 0; i < count; ++i) EXPECT_EQ(families[i]->gemm_kind >= 0, families[i]->gemm) << families[i]->name;
  EXPECT_EQ(family_of_gemm_kind(-1), nullptr);
  EXPECT_EQ(family_of_gemm_kind(5), nullptr);
}

TEST(Families, QuantizerInstances) {
  const struct {
    KernelKind kind;
    int option;
    const char* name;
  } cases[] = {{KernelKind::Quantize1x128, 0, "fp8gemm_dev::quantize_1x128_kernel<false>"},
               {KernelKind::Quantize1x128, 1, "fp8gemm_dev::quantize_1x128_kernel<true>"},
               {KernelKind::Quantize128x128, 1, "fp8gemm_dev::quantize_128x128_kernel<true>"},
               {KernelKind::QuantizeTransposed1x128, 0, "fp8gemm_dev::quantize_transposed_1x128_kernel<false>"},
               {KernelKind::TransposeFp8, 0, "fp8gemm_dev::transpose_fp8_kernel"},
               {KernelKind::CopyScales, 0, "fp8gemm_dev::copy_scales_kernel"}};
  for (const auto& c : cases) {
    KernelSpec spec;
    spec.kind = c.kind;
    spec.option = c.option;
    const GeneratedKernel g = generate_kernel(spec);
    EXPECT_EQ(g.name_expression, c.name);
    EXPECT_EQ(g.source, "// fp8gemm generated kernel " + spec.slug() + "\n#include \"fp8gemm/quantize.cuh\"\n");
  }
}

}  // namespace
