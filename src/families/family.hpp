#pragma once

// Kernel families: everything that one kind of kernel means, asked through one table, so
// that the generic layers (problem types, heuristics, code generation, planning, launch,
// tuning) never test the kind themselves. A new kind is a new entry here and its module.
//
//   gemm_1d2d.cpp    the bf16 forward GEMM: dense, m-grouped contiguous, m-grouped masked
//   gemm_1d1d.cpp    the fp32 weight gradient: dense, k-grouped
//   quantizers.cpp   the quantization and layout kernels (no tiles, no config)
//   gemm_source.cpp  the translation unit of a GEMM kernel (and its wgmma wrapper)

#include <cstdint>
#include <string>
#include <vector>

#include "problem/problem.hpp"

namespace fp8gemm::detail {

// What the code generator produces for one kernel spec: a small translation unit that
// includes the embedded kernel headers, plus the NVRTC name expression of the kernel.
struct GeneratedKernel {
  std::string source;
  std::string name_expression;  // e.g. "fp8gemm_dev::gemm_1d2d_kernel<7168, 2048, ...>"
  std::string slug;
};

struct Family {
  KernelKind kind;
  const char* name;  // the first part of a kernel's slug (and of its JSON "kind")

  // --- what the kernels of the family are
  bool gemm;            // a tiled GEMM with a KernelConfig; false: a quantizer (fixed launch)
  bool fp32_output;     // the weight-gradient kernel: D fp32 (= C + A B^T), 1x128 scales on A and B
  int m_grouping;       // the forward kernel's kGrouping: 0 dense, 1 contiguous, 2 masked
  bool k_at_run_time;   // K is a kernel argument (k-grouped): a spec's k is 0
  int n_multiple;       // D's rows start 16-byte aligned: N % 8 (bf16) or N % 4 (fp32); 0: no N
  int64_t max_k;        // the most K the kernel takes (128x128 B scales: kMaxK1D2D)

  // --- options a spec may carry (KernelSpec::option = 1)
  bool constant_b_option;  // B loaded before the dependency wait (dense forward)
  bool pow2_option;        // power-of-two scales (the quantizers)

  // --- groups: the problem's groups matter to the plan and to the cost model
  bool groups_in_plan;        // the plan (and its key) depends on the number of groups
  bool groups_in_cost_model;  // the cost model sees the groups: masked experts' B, k-grouped tiles per group
  bool rows_on_device;        // the row counts live on the device: the grid covers every SM

  // --- the heuristic
  KernelKind ranked_as;  // the kind whose configs are ranked (k-grouped: the dense weight gradient)
  bool wide_stripes_when_memory_bound;  // rasterize in stripes as wide as N where HBM bounds the time

  // Whether the heuristic ranks tiles of block_m rows for groups of group_m rows.
  bool (*ranks_block_m)(int block_m, int64_t group_m);
  // The family's own rules for a spec (block sizes, features); "" when it has none to object.
  // Called by spec_illegal_reason before the rules every GEMM shares.
  std::string (*spec_rules)(const KernelSpec& spec);
  // The kernel instance for a legal spec.
  GeneratedKernel (*generate)(const KernelSpec& spec);

  // The public GemmKind (fp8gemm.hpp) that names the family in a GemmShape (prewarm, tune,
  // kernel_name); -1: none (the quantizers).
  int gemm_kind = -1;
};

const Family& family(KernelKind kind);

// Every family, for lookups by name.
const Family* const* all_families(size_t* count);

// The family named `name` (a kernel's JSON "kind" or slug prefix), or nullptr.
const Family* family_named(const std::string& name);

// The family a GemmShape's kind (a GemmKind value) names, or nullptr.
const Family* family_of_gemm_kind(int gemm_kind);

// The wgmma.m64nNk32 e4m3 wrapper for one N (part of every GEMM kernel's source).
std::string generate_wgmma_e4m3(int n);
// One constant of a kernel's configuration struct (an enumerator `name = value`).
struct KernelConstant {
  const char* name;
  int64_t value;
};
// A GEMM kernel's translation unit: the kernel header, the wgmma wrapper of its tile width,
// and its configuration struct fp8gemm_gen::<slug> holding `config` (what the kernel
// template takes as Config).
std::string gemm_kernel_source(const std::string& slug, const char* header, int block_n,
                               const std::vector<KernelConstant>& config);
// The NVRTC name expression of `kernel` instantiated with the configuration struct of `slug`.
std::string gemm_kernel_name(const char* kernel, const std::string& slug);
// A GEMM kernel instance: `kernel` (in kernels/fp8gemm/<header>) with a configuration of the
// constants every GEMM kernel takes (kN, kK, kBlockM, kBlockN, kStages, kGroupN, then
// kProducerRegs, kMathRegs, kSmemBytes from its layout) and the family's `own`.
GeneratedKernel generate_gemm_kernel(const KernelSpec& spec, const char* kernel, const char* header,
                                     const std::vector<KernelConstant>& own);

// The families' entries (one module each).
extern const Family kGemm1D2DFamily, kGroupedContiguousFamily, kGroupedMaskedFamily;
extern const Family kGemm1D1DFamily, kKGroupedFamily;
extern const Family kQuantize1x128Family, kQuantize128x128Family, kQuantizeTransposedFamily, kTransposeFp8Family,
    kCopyScalesFamily;

}  // namespace fp8gemm::detail
