#pragma once

// Host stand-in for the kernels' fp8gemm/ptx.cuh, so that kernels/fp8gemm/schedule.cuh (pure
// integer logic over kernel arguments and group data) compiles into the CPU tests
// (test_tile_schedule.cpp): the few helpers it uses, as plain C++, and the grid size the
// walks read. Only that test's source sees this directory.

#include <cstdint>

#define __device__
#define __forceinline__ inline

namespace fp8gemm_dev {

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

inline int imin(int a, int b) { return a < b ? a : b; }
inline int imax(int a, int b) { return a > b ? a : b; }
inline int ldg_s32(const int* p) { return *p; }

}  // namespace fp8gemm_dev

// The launch's grid as a kernel sees it (set by the test before it walks).
struct HostDim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline HostDim3 gridDim;
