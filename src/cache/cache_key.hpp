#pragma once

#include <string>
#include <vector>

#include "codegen/gemm_codegen.hpp"

namespace fp8gemm::detail {

// Everything that changes the compiled binary. Two kernels share a cache entry only if
// every field is equal.
struct CacheKeyInputs {
  std::string source;           // the generated translation unit
  std::string name_expression;  // which instantiation is compiled
  std::string headers_digest;   // SHA-256 over the embedded kernel headers
  std::string nvrtc_version;
  std::vector<std::string> options;  // NVRTC options (they name the target arch)
  std::string library_version;
};

// The inputs for a generated kernel in this build and process.
CacheKeyInputs cache_key_inputs(const GeneratedKernel& kernel);

// Hex SHA-256 over an unambiguous (length-prefixed) encoding of the inputs.
std::string cache_key(const CacheKeyInputs& inputs);

// The cache key of a spec's kernel in this build (generates its source; compiles nothing).
std::string kernel_cache_key(const KernelSpec& spec);

}  // namespace fp8gemm::detail
