#include <gtest/gtest.h>

#include <climits>

#include "codegen/gemm_codegen.hpp"
#include "common/random_problems.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "families/family.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "heuristics/heuristics.hpp"
#include "runtime/planner.hpp"

#include <algorithm>

using namespace fp8gemm::detail;

namespace {

void expect_clean_kernel(const KernelSpec& spec) {
  const CompiledKernel k = compile_kernel(generate_kernel(spec));
  ASSERT_GT(k.cubin.size(), 4u);
  EXPECT_EQ(k.cubin.substr(0, 4), std::string("\x7f" "ELF", 4)) << "not a cubin";
  EXPECT_NE(k.lowered_name.find(family(spec.kind).fp32_output ? "gemm_1d1d_kernel" : "gemm_1d2d_kernel"), std::string::npos)
      << k.lowered_name;
  ASSERT_TRUE(k.resources.parsed) << k.log;
  // The register cap at entry must be what setmaxnreg redistributes.
  const KernelLayout layout = kernel_layout(spec);
  EXPECT_EQ(k.resources.registers * layout.threads >= layout.producer_registers * 128 +
                                                      layout.math_registers * (layout.threads - 128),
            true)
      << k.resources.registers << " registers at entry";
  EXPECT_FALSE(k.resources.uses_local_memory())
      << spec.slug() << ": " << k.resources.stack_frame_bytes << " B stack, " << k.resources.spill_store_bytes
      << " B spill stores\n" << k.log;
  EXPECT_TRUE(k.resources.warnings.empty()) << spec.slug() << ":\n" << k.log;
  EXPECT_TRUE(k.resources.performance_notes.empty()) << spec.slug() << " (wgmma serialized?):\n" << k.log;
  std::printf("  %-44s %3d registers, %6zu-byte cubin, compiled in %.2f s\n", spec.slug().c_str(),
              k.resources.registers, k.cubin.size(), k.compile_seconds);
}

}  // namespace

// Real sm_90a compiles of the GEMM kernels (no GPU needed): the shapes and tile sizes at
// the edges of the config space, of both kernels. Among them: three scale blocks per tile
// with overlapping output slabs (128x176); masked 256-row tiles (K loops for 2, 1 or 0
// active waves per warpgroup); the weight gradient's 192-row tiles (three math warpgroups,
// one wgmma buffer each) and k-grouped tiles; the explicit configs of
// GpuWgrad.ExplicitConfigsCoverEveryTile and ThreeMathWarpgroupsLongK (N 4100 / 2052).
TEST(Nvrtc, GemmKernelCompilesWithoutLocalMemory) {
  for (const KernelSpec& s : {
           KernelSpec{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{128, 128, 5, 8}},
           KernelSpec{KernelKind::Gemm1D2D, 7168, 7184, KernelConfig{128, 112, 6, 8}},
           KernelSpec{KernelKind::Gemm1D2D, 2112, 7168, KernelConfig{128, 96, 6, 16}},
           KernelSpec{KernelKind::Gemm1D2D, 576, 7168, KernelConfig{64, 16, 8, 8}},
           KernelSpec{KernelKind::Gemm1D2D, 4096, 16384, KernelConfig{64, 128, 8, 8}},
           KernelSpec{KernelKind::Gemm1D2D, 4096, 16384, KernelConfig{64, 80, 8, 8}},
           KernelSpec{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{256, 128, 3, 8, 1, 1}},
           KernelSpec{KernelKind::Gemm1D2D, 7168, 16384, KernelConfig{256, 128, 4, 8, 0, 0}},
           KernelSpec{KernelKind::Gemm1D2D, 32768, 512, KernelConfig{128, 128, 5, 8, 0, 1}},
           KernelSpec{KernelKind::Gemm1D2D, 4096, 7168, KernelConfig{64, 64, 8, 8, 0, 0, 2}},
           KernelSpec{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{128, 128, 4, 8, 0, 1, 2}},
           KernelSpec{KernelKind::Gemm1D2D, 7168, 16384, KernelConfig{192, 128, 5, 8, 0, 0, 1}},
           KernelSpec{KernelKind::Gemm1D2D, 2112, 7168, KernelConfig{192, 128, 4, 8, 0, 1}},
           KernelSpec{KernelKind::Gemm1D2D, 2112, 7168, KernelConfig{128, 192, 4, 8, 2}},
           KernelSpec{KernelKind::Gemm1D2D, 7168, 16384, KernelConfig{64, 160, 7, 8, 0}},
           KernelSpec{KernelKind::Gemm1D2D, 2112, 7168, KernelConfig{128, 176, 4, 8, 0, 1}},
           KernelSpec{KernelKind::Gemm1D2D, 576, 7168, KernelConfig{128, 144, 5, 8, 0, 1}},
           KernelSpec{KernelKind::GroupedMasked, 6144, 7168, KernelConfig{256, 128, 3, 8, 0, 1}},
           KernelSpec{KernelKind::Gemm1D1D, 4096, 7168, KernelConfig{192, 128, 3, 8}},
           KernelSpec{KernelKind::Gemm1D1D, 4100, 1040, KernelConfig{192, 96, 4, 8}},
           KernelSpec{KernelKind::Gemm1D1D, 4096, 16384, KernelConfig{128, 128, 4, 8}},
           KernelSpec{KernelKind::KGrouped, 7168, 0, KernelConfig{192, 96, 4, 8}},
           KernelSpec{KernelKind::KGrouped, 7168, 0, KernelConfig{128, 128, 4, 8}},
           KernelSpec{KernelKind::KGrouped, 2048, 0, KernelConfig{128, 144, 4, 8}},
           KernelSpec{KernelKind::KGrouped, 7168, 0, KernelConfig{128, 160, 3, 8}},
           KernelSpec{KernelKind::KGrouped, 2048, 0, KernelConfig{128, 192, 3, 8}},
       })
    expect_clean_kernel(s);
  for (const KernelConfig& c : {KernelConfig{64, 128, 6, 8, 0, 0}, KernelConfig{128, 16, 6, 8, 0, 0},
                                KernelConfig{128, 192, 3, 8, 0, 0}, KernelConfig{192, 128, 3, 8, 0, 0},
                                KernelConfig{192, 64, 5, 16, 0, 0}, KernelConfig{192, 80, 4, 8, 0, 0},
                                KernelConfig{128, 144, 4, 8, 0, 0}, KernelConfig{64, 192, 5, 8, 0, 0},
                                KernelConfig{128, 152, 4, 8, 0, 0}, KernelConfig{128, 136, 4, 8, 0, 0},
                                KernelConfig{192, 120, 3, 8, 0, 0}, KernelConfig{64, 40, 6, 8, 0, 0}})
    expect_clean_kernel(KernelSpec{KernelKind::Gemm1D1D, 4100, 1040, c});
  expect_clean_kernel(KernelSpec{KernelKind::KGrouped, 264, 0, KernelConfig{128, 152, 4, 8}});
  expect_clean_kernel(KernelSpec{KernelKind::Gemm1D1D, 2052, 7200, KernelConfig{192, 128, 3, 8, 0, 0}});
}

// The widest N the library takes, with tiles that cross scale blocks at run-time offsets
// (144, 176 and 192 columns; forward and grouped): the promotion's compile-time choice of
// instances looks at the distinct offsets only (it once walked every N block, and NVRTC
// gave up near N = 2^28: "excessive constexpr function call complexity").
TEST(Nvrtc, WidestNCompiles) {
  const int64_t n = fp8gemm::kMaxDimension;  // 2147482624, a multiple of 8
  for (const KernelSpec& s : {KernelSpec{KernelKind::Gemm1D2D, n, 128, KernelConfig{64, 192, 6, 8, 0, 1}},
                              KernelSpec{KernelKind::Gemm1D2D, n, 1048576, KernelConfig{64, 144, 3, 8, 1}},
                              KernelSpec{KernelKind::Gemm1D2D, n, 7168, KernelConfig{128, 176, 4, 8, 0, 1}},
                              KernelSpec{KernelKind::GroupedMasked, n, 4096, KernelConfig{64, 192, 6, 8, 0, 1}}}) {
    const CompiledKernel k = compile_kernel(generate_kernel(s));
    EXPECT_EQ(k.cubin.substr(0, 4), std::string("\x7f" "ELF", 4)) << s.slug() << "\n" << k.log;
  }
}

// What the library runs for the DeepSeek-V3 dense set: the planner's choice (the
// heuristic's ranking, skipping candidates that spill) compiles without local memory.
TEST(Nvrtc, PlannedKernelsForTheDenseSetCompileClean) {
  const int64_t nks[][2] = {{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}};
  testing::internal::CaptureStderr();
  DiskCache memory_only("");
  testing::internal::GetCapturedStderr();
  KernelStore store(memory_only);
  std::vector<KernelSpec> seen;
  for (const auto& nk : nks)
    for (int64_t m : {1, 128, 4096}) {
      const PlannedKernel p = plan_kernel(GemmProblem{KernelKind::Gemm1D2D, m, nk[0], nk[1]}, DeviceTraits{}, store);
      EXPECT_FALSE(p.binary->resources.slow_path()) << p.spec.slug();
      if (std::find(seen.begin(), seen.end(), p.spec) == seen.end()) {
        seen.push_back(p.spec);
        expect_clean_kernel(p.spec);
      }
    }
}

// Problems off the shape sets, of every kind (tools/common/random_problems.hpp, seed 1: the
// first 25 problems of `fp8gemm_plan_sweep`): the planner's kernel compiles and takes no slow
// path. (The tool's 600 problems with 4 candidates each: docs/PERFORMANCE.md, "JIT cost".)
TEST(Nvrtc, PlannedKernelsForRandomShapesTakeNoSlowPath) {
  testing::internal::CaptureStderr();
  DiskCache memory_only("");
  testing::internal::GetCapturedStderr();
  KernelStore store(memory_only);
  fp8gemm::host::RandomProblems draw(1);
  for (int i = 0; i < 25; ++i) {
    const GemmProblem p = draw.next();
    SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(p.kind) << " m " << p.m << " n " << p.n << " k "
                                    << p.k << " groups " << p.groups);
    const PlannedKernel planned = plan_kernel(p, DeviceTraits{}, store);
    ASSERT_TRUE(planned.binary != nullptr);
    EXPECT_EQ(planned.binary->cubin.substr(0, 4), std::string("\x7f" "ELF", 4));
    EXPECT_FALSE(planned.binary->resources.slow_path())
        << planned.spec.slug() << ": " << planned.binary->resources.slow_path_reason();
    EXPECT_EQ(planned.compiled_and_skipped, 0) << planned.spec.slug();
    std::printf("  m %-7lld n %-6lld k %-6lld groups %-3lld %s\n", static_cast<long long>(p.m),
                static_cast<long long>(p.n), static_cast<long long>(p.k), static_cast<long long>(p.groups),
                planned.spec.slug().c_str());
  }
}

// What the planner picks for the DeepSeek-V3 weight-gradient shapes takes no slow path.
TEST(Nvrtc, WeightGradientKernelsCompileClean) {
  testing::internal::CaptureStderr();
  DiskCache memory_only("");
  testing::internal::GetCapturedStderr();
  KernelStore store(memory_only);
  for (auto [m, k] : {std::pair<int64_t, int64_t>{2112, 7168}, {576, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}}) {
    const PlannedKernel p = plan_kernel(GemmProblem{KernelKind::Gemm1D1D, m, 4096, k}, DeviceTraits{}, store);
    EXPECT_FALSE(p.binary->resources.slow_path()) << p.spec.slug();
  }
}

// A tuning database's winner is used as planned, but never a constant-B variant: that one runs
// only for calls that promise constant B (a hand-edited database could name one).
TEST(Nvrtc, TunedConstantBVariantIsIgnored) {
  testing::internal::CaptureStderr();
  DiskCache memory_only("");
  testing::internal::GetCapturedStderr();
  KernelStore store(memory_only);
  KernelSpec tuned{KernelKind::Gemm1D2D, 32768, 512, KernelConfig{64, 128, 8, 8}};
  PlanOptions options;
  options.tuned = &tuned;
  EXPECT_EQ(plan_kernel(GemmProblem{KernelKind::Gemm1D2D, 1, 32768, 512}, DeviceTraits{}, store, options).spec, tuned);
  tuned.option = 1;
  EXPECT_EQ(plan_kernel(GemmProblem{KernelKind::Gemm1D2D, 1, 32768, 512}, DeviceTraits{}, store, options).spec.option,
            0);
}

// The kernels check at compile time that the host's shared-memory layout (kernel_layout,
// handed over as the configuration's kSmemBytes) is the one they use.
TEST(Nvrtc, KernelsRejectAHostLayoutThatIsNotTheirs) {
  for (const KernelSpec& s : {KernelSpec{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{128, 128, 5, 8}},
                              KernelSpec{KernelKind::Gemm1D1D, 4096, 7168, KernelConfig{128, 128, 4, 8}}}) {
    GeneratedKernel g = generate_kernel(s);
    const std::string key = "    kSmemBytes = " + std::to_string(kernel_layout(s).smem_bytes) + ",";
    const size_t at = g.source.find(key);
    ASSERT_NE(at, std::string::npos) << g.source;
    g.source.replace(at, key.size(), "    kSmemBytes = " + std::to_string(kernel_layout(s).smem_bytes + 8) + ",");
    try {
      compile_kernel(g);
      ADD_FAILURE() << s.slug() << ": compiled with a layout 8 bytes off";
    } catch (const fp8gemm::Error& e) {
      EXPECT_EQ(e.code(), fp8gemm::ErrorCode::CompileFailed);
      EXPECT_NE(std::string(e.what()).find("shared-memory layout"), std::string::npos) << e.what();
    }
  }
}

TEST(Nvrtc, CompileErrorCarriesTheLog) {
  GeneratedKernel broken = generate_kernel(KernelSpec{KernelKind::Gemm1D2D, 256, 256, KernelConfig{64, 16, 2, 8}});
  broken.source += "\nthis_is_not_cuda fp8gemm_broken_line;\n";
  try {
    compile_kernel(broken);
    FAIL() << "expected a compile error";
  } catch (const fp8gemm::Error& e) {
    EXPECT_EQ(e.code(), fp8gemm::ErrorCode::CompileFailed);
    const std::string what = e.what();
    EXPECT_NE(what.find("this_is_not_cuda"), std::string::npos) << what;
    EXPECT_NE(what.find("Compile log"), std::string::npos) << what;
  }
}

TEST(Nvrtc, ResourceReportParsing) {
  const ResourceUsage r = parse_resource_report(
      "ptxas info    : Compiling entry function '_Z1kv' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z1kv\n"
      "    8 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 384 bytes cmem[0]\n"
      "ptxas warning : setmaxnreg ignored; unable to determine register count at entry\n"
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized\n");
  EXPECT_TRUE(r.parsed);
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.stack_frame_bytes, 8);
  EXPECT_EQ(r.spill_store_bytes, 12);
  EXPECT_EQ(r.spill_load_bytes, 16);
  EXPECT_TRUE(r.uses_local_memory());
  EXPECT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.performance_notes.size(), 1u);
  EXPECT_TRUE(r.slow_path());
  EXPECT_STREQ(r.slow_path_reason(), "local memory");
  const ResourceUsage serialized = parse_resource_report(
      "ptxas info    : Used 168 registers, used 1 barriers\n"
      "ptxas info    : (C7520) Potential Performance Loss: wgmma.mma_async instructions are serialized\n");
  EXPECT_TRUE(serialized.slow_path());
  EXPECT_STREQ(serialized.slow_path_reason(), "wgmma serialized");
  const ResourceUsage clean = parse_resource_report("ptxas info    : Used 168 registers, used 1 barriers\n");
  EXPECT_FALSE(clean.slow_path());
  EXPECT_STREQ(clean.slow_path_reason(), "");
  // Counts past int saturate (they overflowed, summed over a log's functions).
  const ResourceUsage huge = parse_resource_report(
      "    99966666666 bytes stack frame, 2147483647 bytes spill stores, 0 bytes spill loads\n"
      "    2147483647 bytes stack frame, 2147483647 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 99999999999999999999 registers\n");
  EXPECT_EQ(huge.stack_frame_bytes, INT_MAX);
  EXPECT_EQ(huge.spill_store_bytes, INT_MAX);
  EXPECT_EQ(huge.registers, INT_MAX);
}

// At the K limit of the kernels with 128x128 B scales (README "Limits") the heuristic's
// choices compile cleanly: the tile's B scales for 8192 K blocks fill most of shared memory.
TEST(Nvrtc, KernelsAtTheKLimitCompileClean) {
  for (int64_t m : {int64_t(1), int64_t(4096)}) {
    const std::vector<RankedConfig> ranked = rank_configs({KernelKind::Gemm1D2D, m, 4096, kMaxK1D2D}, DeviceTraits{});
    ASSERT_FALSE(ranked.empty());
    expect_clean_kernel(ranked.front().spec);
  }
}
