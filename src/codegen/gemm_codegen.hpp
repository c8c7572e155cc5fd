#pragma once

#include <string>

#include "problem/problem.hpp"

namespace fp8gemm::detail {

// What the code generator produces for one kernel spec: a small translation unit that
// includes the embedded kernel headers, plus the NVRTC name expression of the kernel.
struct GeneratedKernel {
  std::string source;
  std::string name_expression;  // e.g. "fp8gemm_dev::gemm_1d2d_kernel<7168, 2048, ...>"
  std::string slug;
};

// Pure and deterministic: the same spec always gives byte-identical output.
GeneratedKernel generate_kernel(const KernelSpec& spec);

// The wgmma.m64nNk32 e4m3 wrapper for one N (part of generate_kernel's output).
std::string generate_wgmma_e4m3(int n);

}  // namespace fp8gemm::detail
