#include <gtest/gtest.h>

#include "fp8gemm/fp8gemm.hpp"
#include "codegen/embedded_kernels.hpp"
#include "codegen/gemm_codegen.hpp"

using namespace fp8gemm::detail;

namespace {
KernelSpec spec(int n, int k, int bm, int bn, int stages) {
  return KernelSpec{KernelKind::Gemm1D2D, n, k, KernelConfig{bm, bn, stages, 8}};
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
  EXPECT_EQ(g.name_expression, "fp8gemm_dev::gemm_1d2d_kernel<7168, 2048, 128, 112, 5, 8, 0, 1, 0, 40, 232>");
  EXPECT_EQ(g.slug, "gemm1d2d_n7168_k2048_bm128_bn112_s5_g8");
  EXPECT_NE(g.source.find("#include \"fp8gemm/gemm_1d2d.cuh\""), std::string::npos);
  EXPECT_NE(g.source.find("struct WgmmaE4M3<112>"), std::string::npos);
  const GeneratedKernel one_wg = generate_kernel(spec(576, 7168, 64, 32, 8));
  EXPECT_EQ(one_wg.name_expression, "fp8gemm_dev::gemm_1d2d_kernel<576, 7168, 64, 32, 8, 8, 0, 1, 0, 56, 248>");
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
  EXPECT_THROW(generate_kernel(spec(7168, 2048, 128, 176, 4)), fp8gemm::Error);
}

TEST(Codegen, EmbeddedHeadersPresentAndToolkitFree) {
  ASSERT_EQ(embedded_header_count(), 2);
  EXPECT_EQ(std::string(embedded_headers_digest()).size(), 64u);
  for (int i = 0; i < embedded_header_count(); ++i) {
    const std::string text = embedded_headers()[i].source;
    EXPECT_GT(text.size(), 1000u) << embedded_headers()[i].name;
    for (const char* forbidden : {"cuda_fp8.h", "cuda_bf16.h", "<cuda.h>", "cuda_runtime", "<cstdint>"})
      EXPECT_EQ(text.find(forbidden), std::string::npos) << embedded_headers()[i].name << " includes " << forbidden;
  }
}
