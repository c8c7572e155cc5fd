// Calls with an explicit KernelConfig (the gemm_fp8_nt, gemm_fp8_nt_wgrad and grouped
// overloads): the config checked and turned into the kernel spec, and its plan in the call's
// runtime. Every error here is Error(InvalidArgument) naming the function and the config.
#pragma once

#include <cstdint>

#include "fp8gemm/fp8gemm.hpp"
#include "problem/problem.hpp"
#include "runtime/device_runtime.hpp"

namespace fp8gemm::detail {

// The spec a call with an explicit config runs: the kind's kernel for N and K with exactly
// `config` (tma_store -1: the forward kernels' default for the tile width, no TMA-store
// epilogue for the weight gradients; the k-grouped kernel takes K at run time, so its spec
// has k 0). Shapes that validate have N and K the kernels take, so what is left to reject is
// the config. (With N or K 0 the call does nothing, and of the config only tma_store's range
// is checked: the rules are the kernel's for N and K.)
KernelSpec explicit_spec(KernelKind kind, int64_t n, int64_t k, const fp8gemm::KernelConfig& config, const char* fn);

// The plan of an explicit spec in the call's runtime for `m` rows (the planned rows for the
// grouped kinds, as their planned calls use): rejects a config whose shared memory exceeds
// what the device allows.
const LaunchPlan& explicit_plan(DeviceRuntime& runtime, int64_t m, const KernelSpec& spec, const char* fn);

}  // namespace fp8gemm::detail
