#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fp8gemm/fp8gemm.hpp"
#include "codegen/embedded_kernels.hpp"
#include "codegen/gemm_codegen.hpp"
#include "compiler/nvrtc_compiler.hpp"

using namespace fp8gemm::detail;

namespace {
KernelSpec spec(int n, int k, int bm, int bn, int stages) {
  return KernelSpec{KernelKind::Gemm1D2D, n, k, KernelConfig{bm, bn, stages, 8}};
}

// The value of constant `name` in a generated kernel's configuration struct, or -1.
int64_t config_constant(const GeneratedKernel& g, const std::string& name) {
  const std::string key = "    " + name + " = ";
  const size_t at = g.source.find(key);
  return at == std::string::npos ? -1 : std::stoll(g.source.substr(at + key.size()));
}

// A generated kernel instantiates `kernel` with its configuration struct fp8gemm_gen::<slug>,
// whose named constants hold `values` (in the kernel template's documented order).
void expect_kernel(const GeneratedKernel& g, const char* kernel, const std::vector<int64_t>& values) {
  EXPECT_EQ(g.name_expression, std::string("fp8gemm_dev::") + kernel + "<fp8gemm_gen::" + g.slug + ">");
  EXPECT_NE(g.source.find("struct " + g.slug + " {"), std::string::npos) << g.source;
  static const std::vector<std::string> k1d2d = {"kN", "kK", "kBlockM", "kBlockN", "kStages", "kGroupN", "kMulticast",
                                                 "kSplitK", "kTmaStore", "kGrouping", "kProducerRegs", "kMathRegs",
                                                 "kEarlyB"};
  static const std::vector<std::string> k1d1d = {"kN", "kK", "kBlockM", "kBlockN", "kStages", "kGroupN", "kKGrouped",
                                                 "kProducerRegs", "kMathRegs"};
  const std::vector<std::string>& names = std::string(kernel) == "gemm_1d2d_kernel" ? k1d2d : k1d1d;
  ASSERT_EQ(names.size(), values.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(config_constant(g, names[i]), values[i]) << names[i];
}
}  // namespace

TEST(Codegen, Deterministic) {
  const GeneratedKernel a = generate_kernel(spec(7168, 2048, 128, 112, 5));
  const GeneratedKernel b = generate_kernel(spec(7168, 2048, 128, 112, 5));
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.name_expression, b.name_expression);
  EXPECT_EQ(a.slug, b.slug);
}

TEST(Codegen, NamedFieldsGolden) {
  const GeneratedKernel g = generate_kernel(spec(7168, 2048, 128, 112, 5));
  expect_kernel(g, "gemm_1d2d_kernel", {7168, 2048, 128, 112, 5, 8, 0, 1, 0, 0, 40, 232, 0});
  EXPECT_EQ(g.slug, "gemm1d2d_n7168_k2048_bm128_bn112_s5_g8");
  EXPECT_NE(g.source.find("#include \"fp8gemm/gemm_1d2d.cuh\""), std::string::npos);
  EXPECT_NE(g.source.find("struct WgmmaE4M3<112>"), std::string::npos);
  const GeneratedKernel one_wg = generate_kernel(spec(576, 7168, 64, 32, 8));
  expect_kernel(one_wg, "gemm_1d2d_kernel", {576, 7168, 64, 32, 8, 8, 0, 1, 0, 0, 56, 248, 0});
}

TEST(Codegen, DifferentSpecsDiffer) {
  const GeneratedKernel a = generate_kernel(spec(7168, 2048, 128, 112, 5));
  EXPECT_NE(a.name_expression, generate_kernel(spec(7168, 2048, 128, 128, 5)).name_expression);
  EXPECT_NE(a.name_expression, generate_kernel(spec(7168, 2064, 128, 112, 5)).name_expression);
  EXPECT_NE(a.name_expression, generate_kernel(spec(7168, 2048, 128, 112, 4)).name_expression);
}

TEST(Codegen, WgmmaWrapperOperands) {
  const std::string w = generate_wgmma_e4m3(16);
  EXPECT_NE(w.find("wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1;"),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("setp.ne.b32 p, %10, 0;"), std::string::npos) << w;
  EXPECT_NE(w.find("\"+f\"(d[7])"), std::string::npos);
  EXPECT_EQ(w.find("d[8]"), std::string::npos);
}

TEST(Codegen, IllegalSpecIsAnInternalError) {
  EXPECT_THROW(generate_kernel(spec(7168, 2048, 128, 208, 4)), fp8gemm::Error);
}

TEST(Codegen, EmbeddedHeadersPresentAndToolkitFree) {
  // ptx.cuh, epilogue.cuh, pipeline.cuh, producer.cuh, promotion.cuh, schedule.cuh, gemm_1d2d.cuh,
  // gemm_1d1d.cuh, quantize.cuh and the public fp8gemm/device/quantize.cuh, each whole (none is tiny)
  ASSERT_EQ(embedded_header_count(), 10);
  EXPECT_EQ(std::string(embedded_headers_digest()).size(), 64u);
  for (int i = 0; i < embedded_header_count(); ++i) {
    const std::string text = embedded_headers()[i].source;
    EXPECT_GT(text.size(), 400u) << embedded_headers()[i].name;
    for (const char* forbidden : {"cuda_fp8.h", "cuda_bf16.h", "<cuda.h>", "cuda_runtime", "<cstdint>"})
      EXPECT_EQ(text.find(forbidden), std::string::npos) << embedded_headers()[i].name << " includes " << forbidden;
  }
}

// Quantization kernels: one per kind and scale rounding, no N/K/config baked in; they
// compile with NVRTC to kernels without local memory.
TEST(Codegen, QuantizationKernels) {
  for (KernelKind kind : {KernelKind::Quantize1x128, KernelKind::Quantize128x128, KernelKind::QuantizeTransposed1x128})
    for (int pow2 : {0, 1}) {
      KernelSpec s;
      s.kind = kind;
      s.option = pow2;
      EXPECT_EQ(spec_illegal_reason(s), "");
      const GeneratedKernel g = generate_kernel(s);
      EXPECT_NE(g.source.find("fp8gemm/quantize.cuh"), std::string::npos);
      EXPECT_NE(g.name_expression.find(pow2 ? "<true>" : "<false>"), std::string::npos) << g.name_expression;
      EXPECT_EQ(spec_from_json(spec_to_json(s)), s);
      const CompiledKernel k = compile_kernel(g);
      EXPECT_FALSE(k.cubin.empty());
      EXPECT_FALSE(k.resources.slow_path()) << g.slug << ":\n" << k.log;
    }
  for (KernelKind kind : {KernelKind::TransposeFp8, KernelKind::CopyScales}) {
    KernelSpec s;
    s.kind = kind;
    EXPECT_EQ(spec_illegal_reason(s), "");
    const CompiledKernel k = compile_kernel(generate_kernel(s));
    EXPECT_FALSE(k.resources.slow_path()) << s.slug() << ":\n" << k.log;
    s.option = 1;
    EXPECT_NE(spec_illegal_reason(s), "");
  }
  KernelSpec bad;
  bad.kind = KernelKind::Quantize1x128;
  bad.n = 128;
  EXPECT_NE(spec_illegal_reason(bad), "");
  bad.n = 0;
  bad.option = 2;
  EXPECT_NE(spec_illegal_reason(bad), "");
  KernelSpec gemm{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{128, 128, 5, 8}};
  gemm.option = 2;
  EXPECT_NE(spec_illegal_reason(gemm), "");
  KernelSpec grouped{KernelKind::GroupedMasked, 7168, 2048, KernelConfig{128, 128, 5, 8}};
  grouped.option = 1;
  EXPECT_NE(spec_illegal_reason(grouped), "");  // constant B is dense-only
}

// The constant-B variant (GemmOptions::b_constant): option 1 of a dense 1D2D kernel, its own
// name and cache entry, chosen for M <= 128 in one M block, no multicast, and kernels that hold
// an SM alone; it compiles without local memory, split-K and the TMA-store epilogue included.
TEST(Codegen, ConstantBKernels) {
  const KernelSpec plain{KernelKind::Gemm1D2D, 32768, 512, KernelConfig{64, 128, 8, 8}};
  const KernelSpec cb = constant_b_spec(plain, 1);
  EXPECT_EQ(cb.option, 1);
  EXPECT_EQ(spec_illegal_reason(cb), "");
  EXPECT_EQ(cb.slug(), "gemm1d2d_n32768_k512_bm64_bn128_s8_g8_cb");
  EXPECT_EQ(spec_from_json(spec_to_json(cb)), cb);
  EXPECT_EQ(spec_from_json(spec_to_json(plain)), plain);
  EXPECT_EQ(constant_b_spec(cb, 1), cb);
  expect_kernel(generate_kernel(cb), "gemm_1d2d_kernel", {32768, 512, 64, 128, 8, 8, 0, 1, 0, 0, 56, 248, 2});
  EXPECT_EQ(constant_b_spec(plain, 64).option, 1);
  EXPECT_EQ(constant_b_spec(plain, 65), plain);  // two M blocks share each B tile: the plain kernel
  const KernelSpec tall{KernelKind::Gemm1D2D, 24576, 1536, KernelConfig{128, 192, 4, 8, 0, 1}};
  EXPECT_EQ(constant_b_spec(tall, 128).option, 1);
  EXPECT_EQ(constant_b_spec(tall, 129), tall);  // large M: the plain kernel
  // Small enough for two CTAs per SM (64x16 tiles, 8 stages): measured slower, not used.
  const KernelSpec small{KernelKind::Gemm1D2D, 576, 7168, KernelConfig{64, 16, 8, 8, 0, 0, 2}};
  EXPECT_EQ(constant_b_spec(small, 1), small);
  // Not for the grouped or weight-gradient kinds.
  const KernelSpec masked{KernelKind::GroupedMasked, 4096, 7168, KernelConfig{64, 128, 8, 8}};
  EXPECT_EQ(constant_b_spec(masked, 1), masked);
  const KernelSpec wgrad{KernelKind::Gemm1D1D, 4096, 7168, KernelConfig{128, 128, 4, 8}};
  EXPECT_EQ(constant_b_spec(wgrad, 1), wgrad);
  // Nor with multicast (not measured).
  const KernelSpec pairs{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{64, 128, 8, 8, 2, 1, 1}};
  EXPECT_EQ(constant_b_spec(pairs, 64), pairs);
  for (const KernelSpec& s : {cb, constant_b_spec(KernelSpec{KernelKind::Gemm1D2D, 7168, 16384,
                                                              KernelConfig{64, 112, 8, 8, 0, 0, 2}}, 1),
                              constant_b_spec(KernelSpec{KernelKind::Gemm1D2D, 24576, 1536,
                                                         KernelConfig{128, 192, 4, 8, 0, 1}}, 128)}) {
    ASSERT_EQ(s.option, 1) << s.slug();
    const CompiledKernel k = compile_kernel(generate_kernel(s));
    EXPECT_FALSE(k.resources.slow_path()) << s.slug() << ":\n" << k.log;
  }
}

// The weight-gradient kernel: its own template, legal configs only without multicast,
// tma_store selector or split-K; compiles without local memory. Its fp32 slabs (64 KiB
// for 128 x 128) leave room for 4 stages, not 5.
TEST(Codegen, WeightGradientKernel) {
  KernelSpec s{KernelKind::Gemm1D1D, 4096, 7168, KernelConfig{128, 128, 5, 8}};
  EXPECT_NE(spec_illegal_reason(s), "");
  s.config.stages = 4;
  EXPECT_EQ(spec_illegal_reason(s), "");
  EXPECT_EQ(kernel_layout(s).d_tile_bytes, 2 * 8 * 4096);
  const GeneratedKernel g = generate_kernel(s);
  EXPECT_EQ(g.slug, "gemm1d1d_n4096_k7168_bm128_bn128_s4_g8");
  EXPECT_NE(g.source.find("fp8gemm/gemm_1d1d.cuh"), std::string::npos);
  expect_kernel(g, "gemm_1d1d_kernel", {4096, 7168, 128, 128, 4, 8, 0, 56, 224});
  EXPECT_EQ(spec_from_json(spec_to_json(s)), s);
  const CompiledKernel k = compile_kernel(g);
  EXPECT_FALSE(k.resources.slow_path()) << k.log;
  // Wider tiles (one wgmma buffer) up to 192 columns, also without local memory.
  for (int block_n : {144, 192}) {
    KernelSpec wide{KernelKind::Gemm1D1D, 4096, 16384, KernelConfig{128, block_n, 3, 8}};
    ASSERT_EQ(spec_illegal_reason(wide), "") << wide.slug();
    const CompiledKernel w = compile_kernel(generate_kernel(wide));
    EXPECT_FALSE(w.resources.slow_path()) << wide.slug() << " " << w.log;
    EXPECT_LE(w.resources.spill_store_bytes, 0) << wide.slug();
  }
  for (KernelConfig bad : {KernelConfig{256, 128, 3, 8}, KernelConfig{128, 208, 3, 8}, KernelConfig{128, 128, 4, 8, 1},
                           KernelConfig{128, 128, 4, 8, 0, 1}, KernelConfig{128, 128, 4, 8, 0, 0, 2}}) {
    s.config = bad;
    EXPECT_NE(spec_illegal_reason(s), "") << s.slug();
  }
}

// The k-grouped weight gradient: the 1D1D kernel with kKGrouped, K at run time (the spec's k
// is 0 and the name has no K), the same layout as the dense kernel; compiles without local
// memory.
TEST(Codegen, KGroupedKernel) {
  KernelSpec s{KernelKind::KGrouped, 7168, 0, KernelConfig{128, 128, 4, 8}};
  EXPECT_EQ(spec_illegal_reason(s), "");
  KernelSpec with_k = s;
  with_k.k = 4096;
  EXPECT_NE(spec_illegal_reason(with_k), "");  // K is a run-time value
  KernelSpec dense = s;
  dense.kind = KernelKind::Gemm1D1D;
  dense.k = 4096;
  EXPECT_EQ(kernel_layout(s).smem_bytes, kernel_layout(dense).smem_bytes);
  const GeneratedKernel g = generate_kernel(s);
  EXPECT_EQ(g.slug, "gemm1d1d_kg_n7168_bm128_bn128_s4_g8");
  expect_kernel(g, "gemm_1d1d_kernel", {7168, 0, 128, 128, 4, 8, 1, 56, 224});
  EXPECT_EQ(spec_from_json(spec_to_json(s)), s);
  const CompiledKernel k = compile_kernel(g);
  EXPECT_FALSE(k.resources.slow_path()) << k.log;
  for (KernelConfig bad : {KernelConfig{256, 128, 3, 8}, KernelConfig{128, 128, 4, 8, 1}}) {
    s.config = bad;
    EXPECT_NE(spec_illegal_reason(s), "") << s.slug();
  }
}

// The grouped kernels: gemm_1d2d_kernel with kGrouping 1 (contiguous) or 2 (masked), their
// own names in the cache, legal only with 64/128-row tiles and no clusters. Both compile
// without local memory.
TEST(Codegen, GroupedKernels) {
  KernelSpec gc{KernelKind::GroupedContiguous, 4096, 7168, KernelConfig{128, 128, 5, 8, 0, 1, 1}};
  EXPECT_EQ(spec_illegal_reason(gc), "");
  EXPECT_EQ(gc.slug(), "gemm1d2d_gc_n4096_k7168_bm128_bn128_s5_g8_ts");
  EXPECT_EQ(spec_from_json(spec_to_json(gc)), gc);
  const GeneratedKernel g = generate_kernel(gc);
  expect_kernel(g, "gemm_1d2d_kernel", {4096, 7168, 128, 128, 5, 8, 0, 1, 1, 1, 40, 232, 0});
  const CompiledKernel k = compile_kernel(g);
  EXPECT_FALSE(k.resources.slow_path()) << k.log;

  KernelSpec gm{KernelKind::GroupedMasked, 4096, 7168, KernelConfig{64, 128, 8, 8, 0, 0, 1}};
  EXPECT_EQ(spec_illegal_reason(gm), "");
  EXPECT_EQ(spec_from_json(spec_to_json(gm)), gm);
  const GeneratedKernel h = generate_kernel(gm);
  expect_kernel(h, "gemm_1d2d_kernel", {4096, 7168, 64, 128, 8, 8, 0, 1, 0, 2, 56, 248, 0});
  const CompiledKernel km = compile_kernel(h);
  EXPECT_FALSE(km.resources.slow_path()) << km.log;

  for (KernelConfig bad : {KernelConfig{256, 128, 3, 8, 0, 1, 1}, KernelConfig{128, 128, 4, 8, 1, 1, 1},
                           KernelConfig{64, 64, 8, 8, 0, 0, 2}}) {
    gc.config = bad;
    EXPECT_NE(spec_illegal_reason(gc), "") << gc.slug();
  }
  gm.config.tma_store = 1;  // waves that reach past masked_m are stored directly
  EXPECT_EQ(spec_illegal_reason(gm), "");
}
