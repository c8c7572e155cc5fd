#include "codegen/gemm_codegen.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace fp8gemm::detail {

std::string generate_wgmma_e4m3(int n) {
  FP8GEMM_CHECK(n >= 8 && n <= 256 && n % 8 == 0, "wgmma N={}", n);
  const int regs = n / 2;
  std::string list;
  for (int i = 0; i < regs; ++i) list += fmt::format("{}%{}", i ? ", " : "", i);
  std::string outputs;
  for (int i = 0; i < regs; ++i) outputs += fmt::format("{}\"+f\"(d[{}])", i ? ", " : "", i);
  return fmt::format(
      "template <>\n"
      "struct WgmmaE4M3<{n}> {{\n"
      "  __device__ __forceinline__ static void mma(float (&d)[{regs}], u64 desc_a, u64 desc_b,\n"
      "                                             int scale_d) {{\n"
      "    asm volatile(\n"
      "        \"{{\\n .reg .pred p;\\n setp.ne.b32 p, %{sd}, 0;\\n\"\n"
      "        \" wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e4m3 {{{list}}}, %{da}, %{db}, p, 1, 1;\\n}}\\n\"\n"
      "        : {outputs}\n"
      "        : \"l\"(desc_a), \"l\"(desc_b), \"r\"(scale_d));\n"
      "  }}\n"
      "}};\n",
      fmt::arg("n", n), fmt::arg("regs", regs), fmt::arg("list", list), fmt::arg("outputs", outputs),
      fmt::arg("da", regs), fmt::arg("db", regs + 1), fmt::arg("sd", regs + 2));
}

GeneratedKernel generate_kernel(const KernelSpec& spec) {
  const std::string reason = spec_illegal_reason(spec);
  FP8GEMM_CHECK(reason.empty(), "generate_kernel({}): {}", spec.slug(), reason);
  if (!is_gemm(spec.kind)) {
    GeneratedKernel g;
    g.slug = spec.slug();
    switch (spec.kind) {
      case KernelKind::TransposeFp8: g.name_expression = "fp8gemm_dev::transpose_fp8_kernel"; break;
      case KernelKind::CopyScales: g.name_expression = "fp8gemm_dev::copy_scales_kernel"; break;
      default: {
        const char* kernel = spec.kind == KernelKind::Quantize1x128     ? "quantize_1x128_kernel"
                             : spec.kind == KernelKind::Quantize128x128 ? "quantize_128x128_kernel"
                                                                         : "quantize_transposed_1x128_kernel";
        g.name_expression = fmt::format("fp8gemm_dev::{}<{}>", kernel, spec.option == 1 ? "true" : "false");
      }
    }
    g.source = fmt::format("// fp8gemm generated kernel {}\n#include \"fp8gemm/quantize.cuh\"\n", g.slug);
    return g;
  }
  const KernelLayout layout = kernel_layout(spec);
  const KernelConfig& c = spec.config;
  GeneratedKernel g;
  g.slug = spec.slug();
  const bool wgrad = is_1d1d(spec.kind);
  if (wgrad)
    g.name_expression = fmt::format("fp8gemm_dev::gemm_1d1d_kernel<{}, {}, {}, {}, {}, {}, {}, {}, {}>", spec.n,
                                    spec.k, c.block_m, c.block_n, c.stages, c.group_n,
                                    spec.kind == KernelKind::KGrouped ? 1 : 0, layout.producer_registers,
                                    layout.math_registers);
  else
    g.name_expression =
        fmt::format("fp8gemm_dev::gemm_1d2d_kernel<{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}>", spec.n,
                    spec.k, c.block_m, c.block_n, c.stages, c.group_n, c.multicast, c.split_k, c.tma_store,
                    grouping(spec.kind), layout.producer_registers, layout.math_registers,
                    spec.option == 1 ? kConstantBStages : 0);
  g.source = fmt::format(
      "// fp8gemm generated kernel {slug}\n"
      "#include \"fp8gemm/{header}\"\n"
      "\n"
      "namespace fp8gemm_dev {{\n"
      "{wgmma}"
      "}}  // namespace fp8gemm_dev\n",
      fmt::arg("slug", g.slug), fmt::arg("header", wgrad ? "gemm_1d1d.cuh" : "gemm_1d2d.cuh"),
      fmt::arg("wgmma", generate_wgmma_e4m3(c.block_n)));
  return g;
}

}  // namespace fp8gemm::detail
