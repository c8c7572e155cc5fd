#pragma once

// Promotion in the forward GEMM kernel: the tensor cores accumulate each 128-deep K block
// into a temporary, which the math threads add into fp32 registers times the block's
// scales. With 128x128 B scales a tile may span two or three B scale blocks along N: the
// helpers pick, at compile time where they can, which scale each 8-column chunk takes.

#include "fp8gemm/ptx.cuh"

namespace fp8gemm_dev {

// acc += part x scale, per 8-column chunk of the wgmma fragment: chunks below kFirst
// take the first B scale block's products (s_first0 for row r, s_first1 for row r + 8),
// the next 16 chunks (128 columns) the second's, any after those the third's. kFirst is
// a compile-time constant, so no per-chunk selects.
template <int kFirst, int kChunks>
__device__ __forceinline__ void promote(float (&acc)[kChunks * 4], const float (&part)[kChunks * 4], float s_first0,
                                        float s_first1, float s_second0, float s_second1, float s_third0,
                                        float s_third1) {
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    const float t0 = i < kFirst ? s_first0 : i < kFirst + 16 ? s_second0 : s_third0;
    const float t1 = i < kFirst ? s_first1 : i < kFirst + 16 ? s_second1 : s_third1;
    acc[4 * i + 0] += t0 * part[4 * i + 0];
    acc[4 * i + 1] += t0 * part[4 * i + 1];
    acc[4 * i + 2] += t1 * part[4 * i + 2];
    acc[4 * i + 3] += t1 * part[4 * i + 3];
  }
}

// The N blocks whose offsets in their 128-column scale block are all the distinct ones:
// nb * kBlockN % 128 repeats every 128 / gcd(kBlockN, 128) blocks, so the first that many
// (or all blocks, if fewer). (A loop over every N block ran past the compiler's constant-
// evaluation budget near N = 2^28 with 192-column tiles.)
template <int kN, int kBlockN>
constexpr int distinct_n_blocks() {
  int a = kBlockN, b = 128;
  while (b != 0) {
    const int r = a % b;
    a = b;
    b = r;
  }
  const int period = 128 / a;
  const int blocks = kN / kBlockN + (kN % kBlockN != 0);
  return blocks < period ? blocks : period;
}

// Whether some N block of a kN-wide matrix in tiles of kBlockN columns crosses a
// 128-column scale boundary after `first` 8-column chunks.
template <int kN, int kBlockN>
constexpr bool split_reachable(int first) {
  for (int nb = 0; nb < distinct_n_blocks<kN, kBlockN>(); ++nb) {
    const int split = 128 - nb * kBlockN % 128;
    if (split < kBlockN && split / 8 == first) return true;
  }
  return false;
}

// Whether some N block of a kN-wide matrix in tiles of kBlockN columns lies inside one
// 128-column scale block.
template <int kN, int kBlockN>
constexpr bool unsplit_reachable() {
  for (int nb = 0; nb < distinct_n_blocks<kN, kBlockN>(); ++nb)
    if (128 - nb * kBlockN % 128 >= kBlockN) return true;
  return false;
}

// Whether a split at some multiple of kStep from `first` on (below kChunks) is reachable.
template <int kN, int kChunks, int kStep>
constexpr bool split_reachable_from(int first) {
  for (int f = first; f < kChunks; f += kStep)
    if (split_reachable<kN, kChunks * 8>(f)) return true;
  return false;
}

// Picks the promote<> instance for a run-time `first` (uniform across the CTA): the
// candidates are the multiples of kStep, the chunk granularity at which a tile can
// cross a 128-column scale boundary, that some N block of a kN-wide B reaches, and the
// unsplit tile where one is reachable. The last reachable candidate takes every `first`
// left without a test (a tile past N, computed only as a multicast partner and never
// stored, may take another instance than its own): e.g. 192-column tiles, which always
// cross a boundary (after 64 or 128 columns), compile two instances, not three.
template <int kN, int kChunks, int kStep, int kFirst = kStep>
__device__ __forceinline__ void promote_dispatch(int first, float (&acc)[kChunks * 4], const float (&part)[kChunks * 4],
                                                 float s_first0, float s_first1, float s_second0, float s_second1,
                                                 float s_third0, float s_third1) {
  if constexpr (kFirst >= kChunks) {
    promote<kChunks, kChunks>(acc, part, s_first0, s_first1, s_second0, s_second1, s_third0, s_third1);
  } else if constexpr (!split_reachable<kN, kChunks * 8>(kFirst)) {
    promote_dispatch<kN, kChunks, kStep, kFirst + kStep>(first, acc, part, s_first0, s_first1, s_second0, s_second1,
                                                         s_third0, s_third1);
  } else if constexpr (!split_reachable_from<kN, kChunks, kStep>(kFirst + kStep) &&
                       !unsplit_reachable<kN, kChunks * 8>()) {
    promote<kFirst, kChunks>(acc, part, s_first0, s_first1, s_second0, s_second1, s_third0, s_third1);
  } else {
    if (first == kFirst)
      promote<kFirst, kChunks>(acc, part, s_first0, s_first1, s_second0, s_second1, s_third0, s_third1);
    else
      promote_dispatch<kN, kChunks, kStep, kFirst + kStep>(first, acc, part, s_first0, s_first1, s_second0, s_second1,
                                                           s_third0, s_third1);
  }
}

}  // namespace fp8gemm_dev
