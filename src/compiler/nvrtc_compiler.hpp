#pragma once

#include <string>
#include <vector>

#include "codegen/gemm_codegen.hpp"
#include "compiler/resource_report.hpp"

namespace fp8gemm::detail {

// The only user of NVRTC. Compiles generated source against the embedded kernel
// headers, from memory, for sm_90a, straight to a cubin.

struct CompiledKernel {
  std::string cubin;
  std::string lowered_name;  // the kernel's mangled name, for cuModuleGetFunction
  std::string log;           // NVRTC + ptxas output
  ResourceUsage resources;
  double compile_seconds = 0.0;
};

// The options every kernel is compiled with; part of the cache key.
const std::vector<std::string>& compile_options();

// "13.0" for the NVRTC this process loaded; part of the cache key.
std::string nvrtc_version();

// Throws Error(CompileFailed) with the compile log if NVRTC rejects the source.
CompiledKernel compile_kernel(const GeneratedKernel& kernel);

}  // namespace fp8gemm::detail
