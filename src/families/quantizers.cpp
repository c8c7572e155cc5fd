// The quantization and layout kernels (kernels/fp8gemm/quantize.cuh): no tiles, no config, a
// fixed launch; the three quantizers take option 1 (power-of-two scales).

#include <fmt/format.h>

#include "families/family.hpp"

namespace fp8gemm::detail {

namespace {

bool no_tiles(int, int64_t) { return false; }
std::string no_rules(const KernelSpec&) { return ""; }

GeneratedKernel instance(const KernelSpec& spec, const std::string& name_expression) {
  GeneratedKernel g;
  g.slug = spec.slug();
  g.name_expression = name_expression;
  g.source = fmt::format("// fp8gemm generated kernel {}\n#include \"fp8gemm/quantize.cuh\"\n", g.slug);
  return g;
}

std::string pow2_argument(const KernelSpec& spec) { return spec.option == 1 ? "true" : "false"; }

GeneratedKernel quantize_1x128(const KernelSpec& spec) {
  return instance(spec, fmt::format("fp8gemm_dev::quantize_1x128_kernel<{}>", pow2_argument(spec)));
}
GeneratedKernel quantize_128x128(const KernelSpec& spec) {
  return instance(spec, fmt::format("fp8gemm_dev::quantize_128x128_kernel<{}>", pow2_argument(spec)));
}
GeneratedKernel quantize_transposed(const KernelSpec& spec) {
  return instance(spec, fmt::format("fp8gemm_dev::quantize_transposed_1x128_kernel<{}>", pow2_argument(spec)));
}
GeneratedKernel transpose_fp8(const KernelSpec& spec) { return instance(spec, "fp8gemm_dev::transpose_fp8_kernel"); }
GeneratedKernel copy_scales(const KernelSpec& spec) { return instance(spec, "fp8gemm_dev::copy_scales_kernel"); }

constexpr Family quantizer(KernelKind kind, const char* name, bool pow2, GeneratedKernel (*generate)(const KernelSpec&)) {
  return Family{kind, name,
                /*gemm=*/false, /*fp32_output=*/false, /*m_grouping=*/0, /*k_at_run_time=*/false, /*n_multiple=*/0,
                /*max_k=*/0, /*constant_b_option=*/false, pow2,
                /*groups_in_plan=*/false, /*groups_in_cost_model=*/false, /*rows_on_device=*/false,
                kind, /*wide_stripes_when_memory_bound=*/false, no_tiles, no_rules, generate, /*gemm_kind=*/-1};
}

}  // namespace

const Family kQuantize1x128Family = quantizer(KernelKind::Quantize1x128, "quant1x128", true, quantize_1x128);
const Family kQuantize128x128Family = quantizer(KernelKind::Quantize128x128, "quant128x128", true, quantize_128x128);
const Family kQuantizeTransposedFamily =
    quantizer(KernelKind::QuantizeTransposed1x128, "quantT1x128", true, quantize_transposed);
const Family kTransposeFp8Family = quantizer(KernelKind::TransposeFp8, "transpose_fp8", false, transpose_fp8);
const Family kCopyScalesFamily = quantizer(KernelKind::CopyScales, "copy_scales", false, copy_scales);

}  // namespace fp8gemm::detail
