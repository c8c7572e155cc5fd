#include <fmt/format.h>

#include "families/family.hpp"
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

std::string gemm_kernel_source(const std::string& slug, const char* header, int block_n,
                               const std::vector<KernelConstant>& config) {
  // Enumerators rather than static data members: constants that are never emitted into the
  // cubin as variables (the code is that of the constants alone).
  std::string fields;
  for (const KernelConstant& c : config) fields += fmt::format("    {} = {},\n", c.name, c.value);
  return fmt::format(
      "// fp8gemm generated kernel {slug}\n"
      "#include \"fp8gemm/{header}\"\n"
      "\n"
      "namespace fp8gemm_dev {{\n"
      "{wgmma}"
      "}}  // namespace fp8gemm_dev\n"
      "\n"
      "namespace fp8gemm_gen {{\n"
      "// The kernel's configuration (the kernel template's Config).\n"
      "struct {slug} {{\n"
      "  enum : int {{\n"
      "{fields}"
      "  }};\n"
      "}};\n"
      "}}  // namespace fp8gemm_gen\n",
      fmt::arg("slug", slug), fmt::arg("header", header), fmt::arg("wgmma", generate_wgmma_e4m3(block_n)),
      fmt::arg("fields", fields));
}

std::string gemm_kernel_name(const char* kernel, const std::string& slug) {
  return fmt::format("fp8gemm_dev::{}<fp8gemm_gen::{}>", kernel, slug);
}

GeneratedKernel generate_gemm_kernel(const KernelSpec& spec, const char* kernel, const char* header,
                                     const std::vector<KernelConstant>& own) {
  const KernelLayout layout = kernel_layout(spec);
  const KernelConfig& c = spec.config;
  std::vector<KernelConstant> config = {{"kN", spec.n},          {"kK", spec.k},          {"kBlockM", c.block_m},
                                        {"kBlockN", c.block_n},  {"kStages", c.stages},   {"kGroupN", c.group_n}};
  config.insert(config.end(), own.begin(), own.end());
  config.push_back({"kProducerRegs", layout.producer_registers});
  config.push_back({"kMathRegs", layout.math_registers});
  config.push_back({"kSmemBytes", layout.smem_bytes});
  GeneratedKernel g;
  g.slug = spec.slug();
  g.name_expression = gemm_kernel_name(kernel, g.slug);
  g.source = gemm_kernel_source(g.slug, header, c.block_n, config);
  return g;
}

}  // namespace fp8gemm::detail
