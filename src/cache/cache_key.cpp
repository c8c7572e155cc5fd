#include "cache/cache_key.hpp"

#include "codegen/embedded_kernels.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "fp8gemm/version.hpp"
#include "util/sha256.hpp"

namespace fp8gemm::detail {
namespace {

void field(Sha256& h, const char* name, const std::string& value) {
  h.update(name);
  const std::string length = ":" + std::to_string(value.size()) + ":";
  h.update(length);
  h.update(value);
}

}  // namespace

CacheKeyInputs cache_key_inputs(const GeneratedKernel& kernel) {
  CacheKeyInputs in;
  in.source = kernel.source;
  in.name_expression = kernel.name_expression;
  in.headers_digest = embedded_headers_digest();
  in.nvrtc_version = nvrtc_version();
  in.options = compile_options();
  in.library_version = FP8GEMM_VERSION_STRING;
  return in;
}

std::string cache_key(const CacheKeyInputs& in) {
  Sha256 h;
  field(h, "format", "fp8gemm-kernel-key-1");
  field(h, "source", in.source);
  field(h, "name", in.name_expression);
  field(h, "headers", in.headers_digest);
  field(h, "nvrtc", in.nvrtc_version);
  field(h, "options", std::to_string(in.options.size()));
  for (const std::string& o : in.options) field(h, "option", o);
  field(h, "library", in.library_version);
  return Sha256::hex(h.finish());
}

std::string kernel_cache_key(const KernelSpec& spec) { return cache_key(cache_key_inputs(generate_kernel(spec))); }

}  // namespace fp8gemm::detail
