#pragma once

// The GEMM kernels' pipeline: a ring of kStages shared-memory stages that the TMA producer
// fills and the math warpgroups drain, each stage guarded by a "full" barrier (its loads
// have landed) and an "empty" one (every reader is done with it).

#include "fp8gemm/ptx.cuh"

namespace fp8gemm_dev {

// The position in the ring of pipeline stages; the phase flips at every wrap.
template <int kStages>
struct StageCursor {
  int stage = 0;
  u32 phase = 0;
  __device__ __forceinline__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

}  // namespace fp8gemm_dev
