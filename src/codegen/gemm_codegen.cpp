#include "codegen/gemm_codegen.hpp"

#include "util/error.hpp"

namespace fp8gemm::detail {

GeneratedKernel generate_kernel(const KernelSpec& spec) {
  const std::string reason = spec_illegal_reason(spec);
  FP8GEMM_CHECK(reason.empty(), "generate_kernel({}): {}", spec.slug(), reason);
  return family(spec.kind).generate(spec);
}

}  // namespace fp8gemm::detail
