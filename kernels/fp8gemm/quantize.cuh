#pragma once

// bf16 -> e4m3 quantization with fp32 scales, in the layouts the GEMMs read. The rule,
// per group (128 consecutive values of a row, or a 128x128 block), bit for bit:
//   amax  = max(max |x|, kMinAmax)
//   scale = amax / 448, or the smallest power of two >= amax / 448 (kPow2)
//   inv   = 448 / amax, or 1 / scale (kPow2, exact)
//   q     = e4m3(x * inv), round to nearest even, saturating at +-448
// Every operation is spelled in PTX with its rounding so that the compiler cannot
// contract or reorder it (a host reference computes the same bytes).

#include "fp8gemm/ptx.cuh"

namespace fp8gemm_dev {

constexpr float kMinAmax = 1e-4f;

__device__ __forceinline__ float div_rn(float a, float b) {
  float r;
  asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ float mul_rn(float a, float b) {
  float r;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

__device__ __forceinline__ float bf16_bits_to_float(u32 bits16) { return __uint_as_float(bits16 << 16); }

// Two floats to two e4m3 bytes (lo in the low byte).
__device__ __forceinline__ u32 pack_e4m3x2(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

template <bool kPow2>
__device__ __forceinline__ void group_scale(float amax, float& scale, float& inv) {
  const float a = fmaxf(amax, kMinAmax);
  if constexpr (!kPow2) {
    scale = div_rn(a, 448.0f);
    inv = div_rn(448.0f, a);
  } else {
    u32 u = __float_as_uint(div_rn(a, 448.0f));
    const bool exact = (u & 0x7fffffu) == 0;
    u &= 0xff800000u;
    if (!exact) u += 0x00800000u;
    scale = __uint_as_float(u);
    inv = div_rn(1.0f, scale);
  }
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Quantizes four consecutive values (x * inv) and stores them at dst; `valid` of them
// exist (4: one 4-byte store, aligned since rows are 16-byte aligned and the column is a
// multiple of 4; fewer: the tail, byte by byte).
__device__ __forceinline__ void store_e4m3x4(unsigned char* dst, const float (&v)[4], float inv, int valid) {
  const u32 packed = pack_e4m3x2(mul_rn(v[0], inv), mul_rn(v[1], inv)) |
                     (pack_e4m3x2(mul_rn(v[2], inv), mul_rn(v[3], inv)) << 16);
  if (valid >= 4) {
    *reinterpret_cast<u32*>(dst) = packed;
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < valid) dst[e] = static_cast<unsigned char>(packed >> (8 * e));
  }
}

// Per-token (1x128 groups along a row). One warp per (row, group): lane l holds
// columns 128 j + 4 l .. + 3. Scales go to sf[row * sf_row_stride + group * sf_col_stride].
template <bool kPow2>
__global__ void __launch_bounds__(256) quantize_1x128_kernel(const u16* __restrict__ x, long long ldx,
                                                             unsigned char* __restrict__ q, long long ldq,
                                                             float* __restrict__ sf, long long sf_row_stride,
                                                             long long sf_col_stride, int rows, int cols) {
  const int lane = threadIdx.x % 32;
  const int groups = (cols + 127) / 128;
  const long long items = static_cast<long long>(rows) * groups;
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  for (long long item = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; item < items;
       item += warps) {
    const int row = static_cast<int>(item / groups);
    const int group = static_cast<int>(item - static_cast<long long>(row) * groups);
    const int c0 = group * 128 + 4 * lane;
    const u16* src = x + static_cast<long long>(row) * ldx + c0;
    float v[4];
    if (c0 + 4 <= cols) {
      // 8-byte aligned: ldx % 8 == 0 and 16-byte aligned rows.
      const u64 bits = *reinterpret_cast<const u64*>(src);
#pragma unroll
      for (int e = 0; e < 4; ++e) v[e] = bf16_bits_to_float(static_cast<u32>(bits >> (16 * e)) & 0xffffu);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) v[e] = c0 + e < cols ? bf16_bits_to_float(src[e]) : 0.0f;
    }
    float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
    amax = warp_max(amax);
    float scale, inv;
    group_scale<kPow2>(amax, scale, inv);
    store_e4m3x4(q + static_cast<long long>(row) * ldq + c0, v, inv, cols - c0);
    if (lane == 0) sf[static_cast<long long>(row) * sf_row_stride + static_cast<long long>(group) * sf_col_stride] = scale;
  }
}

// Per-block (128x128 groups). One CTA of 256 threads per block: thread t holds columns
// 4 (t % 32) .. + 3 of rows t / 32, t / 32 + 8, ..., so the block is read once, kept in
// registers while its amax is reduced, then quantized. Scales go to
// sf[block_row * sf_row_stride + block_col * sf_col_stride].
template <bool kPow2>
__global__ void __launch_bounds__(256) quantize_128x128_kernel(const u16* __restrict__ x, long long ldx,
                                                               unsigned char* __restrict__ q, long long ldq,
                                                               float* __restrict__ sf, long long sf_row_stride,
                                                               long long sf_col_stride, int rows, int cols) {
  __shared__ float warp_amax[8];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int block_cols = (cols + 127) / 128;
  const int block_row = blockIdx.x / block_cols, block_col = blockIdx.x % block_cols;
  const int c0 = block_col * 128 + 4 * lane;
  float v[16][4];
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int row = block_row * 128 + warp + 8 * i;
    const u16* src = x + static_cast<long long>(row) * ldx + c0;
    if (row < rows && c0 + 4 <= cols) {
      const u64 bits = *reinterpret_cast<const u64*>(src);
#pragma unroll
      for (int e = 0; e < 4; ++e) v[i][e] = bf16_bits_to_float(static_cast<u32>(bits >> (16 * e)) & 0xffffu);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) v[i][e] = row < rows && c0 + e < cols ? bf16_bits_to_float(src[e]) : 0.0f;
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) amax = fmaxf(amax, fabsf(v[i][e]));
  }
  amax = warp_max(amax);
  if (lane == 0) warp_amax[warp] = amax;
  __syncthreads();
  amax = warp_amax[0];
#pragma unroll
  for (int w = 1; w < 8; ++w) amax = fmaxf(amax, warp_amax[w]);
  float scale, inv;
  group_scale<kPow2>(amax, scale, inv);
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int row = block_row * 128 + warp + 8 * i;
    if (row >= rows) continue;
    store_e4m3x4(q + static_cast<long long>(row) * ldq + c0, v[i], inv, cols - c0);
  }
  if (threadIdx.x == 0)
    sf[static_cast<long long>(block_row) * sf_row_stride + static_cast<long long>(block_col) * sf_col_stride] = scale;
}

// Transpose + per-token: x [T, H] -> q [H, T] with 1x128 groups along T (a token block of
// one hidden column), what the weight gradient's operands need. One CTA per 128 tokens x
// 32 hidden columns: the tile is read coalesced along H into shared memory, each warp then
// owns 4 hidden columns, reduces their amax over the 128 tokens and writes 4 output rows of
// 128 bytes. Scales go to sf[h * sf_row_stride + token_block * sf_col_stride].
template <bool kPow2>
__global__ void __launch_bounds__(256) quantize_transposed_1x128_kernel(
    const u16* __restrict__ x, long long ldx, unsigned char* __restrict__ q, long long ldq, float* __restrict__ sf,
    long long sf_row_stride, long long sf_col_stride, int tokens, int hidden) {
  __shared__ float tile[128][33];  // [token][hidden], padded against bank conflicts
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int token_blocks = (tokens + 127) / 128;
  const int t0 = (blockIdx.x % token_blocks) * 128, h0 = (blockIdx.x / token_blocks) * 32;
#pragma unroll 4
  for (int i = 0; i < 16; ++i) {
    const int idx = i * 256 + threadIdx.x, r = idx / 32, c = idx % 32;
    const int t = t0 + r, h = h0 + c;
    tile[r][c] = t < tokens && h < hidden ? bf16_bits_to_float(x[static_cast<long long>(t) * ldx + h]) : 0.0f;
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int c = 4 * warp + j, h = h0 + c;
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = tile[4 * lane + e][c];
    float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
    amax = warp_max(amax);
    if (h >= hidden) continue;  // uniform across the warp
    float scale, inv;
    group_scale<kPow2>(amax, scale, inv);
    const int t = t0 + 4 * lane;
    store_e4m3x4(q + static_cast<long long>(h) * ldq + t, v, inv, tokens - t);
    if (lane == 0)
      sf[static_cast<long long>(h) * sf_row_stride + static_cast<long long>(t0 / 128) * sf_col_stride] = scale;
  }
}

// Byte transpose of an e4m3 matrix: w [rows, cols] -> wt [cols, rows], exact. One CTA per
// 64x64 tile through shared memory; 4-byte loads and stores where the tile is whole.
__global__ void __launch_bounds__(256) transpose_fp8_kernel(const unsigned char* __restrict__ w, long long ldw,
                                                            unsigned char* __restrict__ wt, long long ldwt, int rows,
                                                            int cols) {
  __shared__ unsigned char tile[64][68];  // [row][col], padded
  const int col_tiles = (cols + 63) / 64;
  const int r0 = (blockIdx.x / col_tiles) * 64, c0 = (blockIdx.x % col_tiles) * 64;
  const int quad = threadIdx.x % 16, line = threadIdx.x / 16;  // 16 quads of 4 bytes, 16 lines
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = line + 16 * i, c = 4 * quad;
    const unsigned char* src = w + static_cast<long long>(r0 + r) * ldw + c0 + c;
    if (r0 + r < rows && c0 + c + 4 <= cols) {
      const u32 v = *reinterpret_cast<const u32*>(src);  // ldw % 16 == 0, c % 4 == 0
#pragma unroll
      for (int e = 0; e < 4; ++e) tile[r][c + e] = static_cast<unsigned char>(v >> (8 * e));
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) tile[r][c + e] = r0 + r < rows && c0 + c + e < cols ? src[e] : 0;
    }
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int out_row = line + 16 * i, out_col = 4 * quad;  // wt row = input column, wt column = input row
    if (c0 + out_row >= cols) continue;
    u32 v = 0;
#pragma unroll
    for (int e = 0; e < 4; ++e) v |= static_cast<u32>(tile[out_col + e][out_row]) << (8 * e);
    unsigned char* dst = wt + static_cast<long long>(c0 + out_row) * ldwt + r0 + out_col;
    if (r0 + out_col + 4 <= rows) {
      *reinterpret_cast<u32*>(dst) = v;  // ldwt % 16 == 0
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (r0 + out_col + e < rows) dst[e] = static_cast<unsigned char>(v >> (8 * e));
    }
  }
}

// out(r, c) = in(r, c) for a [rows, cols] matrix of fp32 scales, any strides on both
// sides (a transpose is a copy from a view with swapped strides).
__global__ void __launch_bounds__(256) copy_scales_kernel(const float* __restrict__ in, long long in_row_stride,
                                                          long long in_col_stride, float* __restrict__ out,
                                                          long long out_row_stride, long long out_col_stride,
                                                          int rows, int cols) {
  const long long total = static_cast<long long>(rows) * cols;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / cols, c = i - r * cols;
    out[r * out_row_stride + c * out_col_stride] = in[r * in_row_stride + c * in_col_stride];
  }
}

}  // namespace fp8gemm_dev
