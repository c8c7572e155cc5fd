#pragma once

#include <cuda.h>

#include "problem/problem.hpp"

namespace fp8gemm::detail {

// The launch of a GEMM kernel: its grid, block, shared memory, the cluster dimension when
// it uses clusters, and (with `programmatic`) programmatic stream serialization: it may be
// scheduled while the previous kernel in the stream still runs, and waits for it
// (griddepcontrol.wait) before touching global memory. `attrs` holds the attributes.
CUlaunchConfig gemm_launch_config(const KernelLayout& layout, unsigned grid, CUstream stream,
                                  CUlaunchAttribute (&attrs)[2], bool programmatic = true);

}  // namespace fp8gemm::detail
