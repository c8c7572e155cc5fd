#pragma once

// bf16 -> e4m3 quantization with fp32 scales, in the layouts the GEMMs read. The rule itself
// (amax floor, scale and its inverse, plain or power-of-two, the e4m3 conversion with its
// rounding and saturation) is the public fp8gemm/device/quantize.cuh, which users include in
// their own fused kernels: these kernels take every rounding step from there, so that what
// a user's kernel writes and what quantize_per_token writes cannot diverge. What is here is
// only how the work is dealt out: loads, reductions across lanes, stores.

#include "fp8gemm/device/quantize.cuh"
#include "fp8gemm/ptx.cuh"

namespace fp8gemm_dev {

// The rule's amax floor, also as a constant of this namespace. Under -default-device a
// namespace-scope constant is a device variable of every cubin built from this file, so this
// one is part of the quantization kernels' cubins; it takes its value from the rule.
constexpr float kMinAmax = fp8gemm::device::min_amax();

using fp8gemm::device::abs_max_bf16x2;
using fp8gemm::device::bf16_bits_to_float;
using fp8gemm::device::e4m3x2_rn;
using fp8gemm::device::group_scale;
using fp8gemm::device::mul_rn;

__device__ __forceinline__ float warp_max(float v) { return fp8gemm::device::lanes_max<32>(v); }

// Max of S values at once over a group of kLanes lanes (kLanes = 16: each half-warp, 32:
// the warp; S a power of two <= kLanes), with S - 1 + log2(kLanes / S) shuffles instead of
// S log2(kLanes): on entry m[s] is this lane's partial max of value s; each step swaps
// half of the values still held with the partner lane and keeps the other half, so that
// on exit lane l of the group holds the group's max of value l / (kLanes / S) (returned;
// m is clobbered).
template <int kLanes, int S>
__device__ __forceinline__ float max_scatter(float (&m)[S], int lane_in_group) {
  static_assert((S & (S - 1)) == 0 && S <= kLanes, "S must be a power of two <= kLanes");
#pragma unroll
  for (int offset = kLanes / 2, held = S; offset > 0; offset >>= 1) {
    if (held > 1) {
      const bool upper = (lane_in_group & offset) != 0;
      held /= 2;
#pragma unroll
      for (int i = 0; i < S / 2; ++i) {
        if (i < held) {
          const float send = upper ? m[i] : m[i + held];
          const float keep = upper ? m[i + held] : m[i];
          m[i] = fmaxf(keep, __shfl_xor_sync(0xffffffffu, send, offset));
        }
      }
    } else {
      m[0] = fmaxf(m[0], __shfl_xor_sync(0xffffffffu, m[0], offset));
    }
  }
  return m[0];
}

// Eight bf16 values src[0 .. 7] as raw bits (value 2 i in the low half of bits[i], 2 i + 1
// in the high half); those at or past `valid` read as +0. All eight: one 16-byte load
// through the read-only path (aligned: x rows start 16-byte aligned, since x is and
// ldx % 8 == 0, and callers pass a column that is a multiple of 8); fewer: the tail,
// element by element, touching nothing past the last valid one.
__device__ __forceinline__ void load_bf16x8(const u16* src, int valid, u32 (&bits)[4]) {
  if (valid >= 8) {
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(bits[0]), "=r"(bits[1]), "=r"(bits[2]), "=r"(bits[3])
        : "l"(src));
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const u32 lo = 2 * i < valid ? static_cast<u32>(src[2 * i]) : 0u;
      const u32 hi = 2 * i + 1 < valid ? static_cast<u32>(src[2 * i + 1]) : 0u;
      bits[i] = lo | (hi << 16);
    }
  }
}

// The eight floats of load_bf16x8's bits (bf16 -> fp32 is exact: the bits move up).
__device__ __forceinline__ void unpack_bf16x8(const u32 (&bits)[4], float (&v)[8]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    v[2 * i] = bf16_bits_to_float(bits[i] & 0xffffu);
    v[2 * i + 1] = bf16_bits_to_float(bits[i] >> 16);
  }
}

// max |x| over the eight bf16 values of load_bf16x8's bits, as a float.
__device__ __forceinline__ float abs_max_bf16x8(const u32 (&bits)[4]) {
  const u32 m = abs_max_bf16x2(abs_max_bf16x2(bits[0], bits[1]), abs_max_bf16x2(bits[2], bits[3]));
  return fmaxf(bf16_bits_to_float(m & 0xffffu), bf16_bits_to_float(m >> 16));
}

// Four values v[first .. first + 3] times inv as e4m3 bytes, the first in the lowest byte.
template <int N>
__device__ __forceinline__ u32 e4m3x4_rn(const float (&v)[N], int first, float inv) {
  return e4m3x2_rn(mul_rn(v[first], inv), mul_rn(v[first + 1], inv)) |
         (e4m3x2_rn(mul_rn(v[first + 2], inv), mul_rn(v[first + 3], inv)) << 16);
}

// Quantizes four consecutive values (x * inv) and stores them at dst; `valid` of them
// exist (4: one 4-byte store, aligned since rows are 16-byte aligned and the column is a
// multiple of 4; fewer: the tail, byte by byte).
__device__ __forceinline__ void store_e4m3x4(unsigned char* dst, const float (&v)[4], float inv, int valid) {
  const u32 packed = e4m3x4_rn(v, 0, inv);
  if (valid >= 4) {
    *reinterpret_cast<u32*>(dst) = packed;
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < valid) dst[e] = static_cast<unsigned char>(packed >> (8 * e));
  }
}

// store_e4m3x4 for eight values: one 8-byte store when all exist (aligned: 16-byte row
// starts, column a multiple of 8), else the `valid` first bytes one by one.
__device__ __forceinline__ void store_e4m3x8(unsigned char* dst, const float (&v)[8], float inv, int valid) {
  const u32 lo = e4m3x4_rn(v, 0, inv), hi = e4m3x4_rn(v, 4, inv);
  if (valid >= 8) {
    *reinterpret_cast<u64*>(dst) = static_cast<u64>(lo) | (static_cast<u64>(hi) << 32);
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (e < valid) dst[e] = static_cast<unsigned char>((e < 4 ? lo : hi) >> (8 * (e % 4)));
  }
}

// Per-token (1x128 groups along a row). Work is dealt in batches of kBatchRows = 2 kItemSteps
// consecutive rows x one 128-column group: half-warp h takes rows h, h + 2, ..., lane
// l % 16 columns 128 group + 8 (l % 16) .. + 7 of each, so that a thread has kItemSteps
// independent 16-byte loads in flight (all issued before any is used). The amaxes of a
// half-warp's kItemSteps groups are reduced together (max_scatter); each lane then computes
// the scale of one of them and the others receive its inverse by shuffle, and the batch's
// kBatchRows scales (consecutive in the GEMM's M-major layout) are stored by one
// instruction (32 bytes: one sector). Batch b is (row block b / groups, group b % groups);
// the host launches one warp per batch (up to a cap past which warps loop, grid-stride),
// so that the CTAs in flight read one contiguous stretch of x. At most 64 registers, for
// 4 CTAs per SM. Scales go to sf[row * sf_row_stride + group * sf_col_stride].
constexpr int kItemSteps = 4;
constexpr int kBatchRows = 2 * kItemSteps;

template <bool kPow2>
__global__ void __launch_bounds__(256, 4)
    quantize_1x128_kernel(const u16* __restrict__ x, long long ldx, unsigned char* __restrict__ q, long long ldq,
                          float* __restrict__ sf, long long sf_row_stride, long long sf_col_stride, int rows,
                          int cols) {
  constexpr int kLanesPerItem = 16 / kItemSteps;  // lanes of a half-warp that end up with the same group's amax
  const int lane = threadIdx.x % 32, half = lane / 16, sub = lane % 16;
  const int groups = (cols + 127) / 128;
  const long long batches = static_cast<long long>((rows + kBatchRows - 1) / kBatchRows) * groups;
  // (block, group) of batch b, walked from one batch of this warp to its next without dividing.
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  const int stride_blocks = static_cast<int>(warps / groups), stride_groups = static_cast<int>(warps % groups);
  long long b = static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  int block = static_cast<int>(b / groups), group = static_cast<int>(b - static_cast<long long>(block) * groups);
  const int mine = sub / kLanesPerItem;  // the step whose scale this lane computes
  for (; b < batches; b += warps) {
    const int r0 = block * kBatchRows + half;  // this lane's rows: r0 + 2 s
    const int c0 = group * 128 + 8 * sub;
    const int valid = imin(cols - c0, 8);  // <= 0: past the row's end
    u32 bits[kItemSteps][4];
#pragma unroll
    for (int s = 0; s < kItemSteps; ++s)
      load_bf16x8(x + static_cast<long long>(r0 + 2 * s) * ldx + c0, r0 + 2 * s < rows ? valid : 0, bits[s]);
    float amax[kItemSteps];
#pragma unroll
    for (int s = 0; s < kItemSteps; ++s) amax[s] = abs_max_bf16x8(bits[s]);
    float scale, inv;
    group_scale<kPow2>(max_scatter<16>(amax, sub), scale, inv);
#pragma unroll
    for (int s = 0; s < kItemSteps; ++s) {
      const float inv_s = __shfl_sync(0xffffffffu, inv, 16 * half + kLanesPerItem * s);
      float v[8];
      unpack_bf16x8(bits[s], v);
      store_e4m3x8(q + static_cast<long long>(r0 + 2 * s) * ldq + c0, v, inv_s, r0 + 2 * s < rows ? valid : 0);
    }
    const int row = r0 + 2 * mine;
    if (sub % kLanesPerItem == 0 && row < rows)
      sf[static_cast<long long>(row) * sf_row_stride + static_cast<long long>(group) * sf_col_stride] = scale;
    block += stride_blocks;
    group += stride_groups;
    if (group >= groups) group -= groups, ++block;
  }
}

// Per-block (128x128 groups). One CTA of 256 threads per block: half-warp h = threadIdx.x / 16
// holds rows h, h + 16, ..., h + 112 of the block, lane l % 16 columns 8 (l % 16) .. + 7 of
// each, so the block is read with eight independent 16-byte loads per thread, kept in
// registers (as bf16 bits) while its amax is reduced, then quantized and stored 8 bytes
// at a time. Scales go to sf[block_row * sf_row_stride + block_col * sf_col_stride].
template <bool kPow2>
__global__ void __launch_bounds__(256) quantize_128x128_kernel(const u16* __restrict__ x, long long ldx,
                                                               unsigned char* __restrict__ q, long long ldq,
                                                               float* __restrict__ sf, long long sf_row_stride,
                                                               long long sf_col_stride, int rows, int cols) {
  __shared__ float warp_amax[8];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int block_cols = (cols + 127) / 128;
  const int block_row = blockIdx.x / block_cols, block_col = blockIdx.x % block_cols;
  const int c0 = block_col * 128 + 8 * (lane % 16);
  const int valid = imin(cols - c0, 8);  // <= 0: this lane's columns are past the end
  const int r0 = block_row * 128 + threadIdx.x / 16;
  u32 bits[8][4];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = r0 + 16 * i;
    load_bf16x8(x + static_cast<long long>(row) * ldx + c0, row < rows ? valid : 0, bits[i]);
  }
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i) amax = fmaxf(amax, abs_max_bf16x8(bits[i]));
  amax = warp_max(amax);
  if (lane == 0) warp_amax[warp] = amax;
  __syncthreads();
  amax = warp_amax[0];
#pragma unroll
  for (int w = 1; w < 8; ++w) amax = fmaxf(amax, warp_amax[w]);
  float scale, inv;
  group_scale<kPow2>(amax, scale, inv);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = r0 + 16 * i;
    if (row >= rows) continue;
    float v[8];
    unpack_bf16x8(bits[i], v);
    store_e4m3x8(q + static_cast<long long>(row) * ldq + c0, v, inv, valid);
  }
  if (threadIdx.x == 0)
    sf[static_cast<long long>(block_row) * sf_row_stride + static_cast<long long>(block_col) * sf_col_stride] = scale;
}

__device__ __forceinline__ void st_shared_v4(u32 addr, const u32 (&v)[4]) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
               : "memory");
}

__device__ __forceinline__ void ld_shared_v4(u32 addr, u32 (&v)[4]) {
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3])
               : "r"(addr)
               : "memory");
}

// Transpose + per-token: x [T, H] -> q [H, T] with 1x128 groups along T (a token block of
// one hidden column), what the weight gradient's operands need. One CTA per 128 tokens x
// kTransposeHidden hidden columns. The tile is read with 16-byte loads (kTransposeHidden / 8
// threads per token row, all of a thread's loads issued before use) into shared memory as
// bf16, in 16-byte chunks (8 hidden columns) whose position within the token's row is
// swizzled (chunk j of token r at j ^ ((r / 4) % 8)) so that both the row-wise stores and
// the column-wise reads below are free of bank conflicts. Warp w then owns chunks
// kChunksPerWarp w .. + kChunksPerWarp - 1 and lane l tokens 4 l .. 4 l + 3: per chunk the
// amaxes of its 8 hidden columns over the 128 tokens are reduced together (max_scatter,
// lane l ending with column l / 4), and each output row segment is written 4 bytes per lane
// (128 contiguous bytes). Scales go to sf[h * sf_row_stride + token_block * sf_col_stride].
constexpr int kTransposeHidden = 64;

template <bool kPow2>
__global__ void __launch_bounds__(256) quantize_transposed_1x128_kernel(
    const u16* __restrict__ x, long long ldx, unsigned char* __restrict__ q, long long ldq, float* __restrict__ sf,
    long long sf_row_stride, long long sf_col_stride, int tokens, int hidden) {
  constexpr int kChunks = kTransposeHidden / 8;          // 16-byte chunks per token row
  constexpr int kRowsPerPass = 256 / kChunks;            // token rows loaded per pass of the CTA
  constexpr int kChunksPerWarp = kChunks / 8;
  static_assert(kTransposeHidden % 64 == 0 && kTransposeHidden <= 256, "8 warps x whole 16-byte chunks");
  __shared__ __align__(16) u32 tile[128 * kChunks * 4];  // [token][chunk (swizzled)][4 words]
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int token_blocks = (tokens + 127) / 128;
  const int t0 = (blockIdx.x % token_blocks) * 128, h0 = (blockIdx.x / token_blocks) * kTransposeHidden;
  const u32 tile_base = smem_addr(tile);
  {
    const int chunk = threadIdx.x % kChunks, h = h0 + 8 * chunk;
    const int valid = imin(hidden - h, 8);  // <= 0: past the last column
    u32 bits[128 / kRowsPerPass][4];
#pragma unroll
    for (int i = 0; i < 128 / kRowsPerPass; ++i) {
      const int r = threadIdx.x / kChunks + kRowsPerPass * i, t = t0 + r;
      load_bf16x8(x + static_cast<long long>(t) * ldx + h, t < tokens ? valid : 0, bits[i]);
    }
#pragma unroll
    for (int i = 0; i < 128 / kRowsPerPass; ++i) {
      const int r = threadIdx.x / kChunks + kRowsPerPass * i;
      st_shared_v4(tile_base + 16 * (kChunks * r + (chunk ^ ((r / 4) % 8))), bits[i]);
    }
  }
  __syncthreads();
  const int t = t0 + 4 * lane;
#pragma unroll
  for (int j = 0; j < kChunksPerWarp; ++j) {
    const int chunk = kChunksPerWarp * warp + j, hc = h0 + 8 * chunk;
    if (hc >= hidden) break;  // uniform across the warp; no barrier follows
    u32 bits[4][4];           // token 4 lane + k, hidden columns hc .. hc + 7
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int r = 4 * lane + k;  // (r / 4) % 8 == lane % 8
      ld_shared_v4(tile_base + 16 * (kChunks * r + (chunk ^ (lane % 8))), bits[k]);
    }
    float amax[8];  // of column hc + e over this lane's four tokens
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const u32 m = abs_max_bf16x2(abs_max_bf16x2(bits[0][p], bits[1][p]), abs_max_bf16x2(bits[2][p], bits[3][p]));
      amax[2 * p] = bf16_bits_to_float(m & 0xffffu);
      amax[2 * p + 1] = bf16_bits_to_float(m >> 16);
    }
    float scale, inv;
    group_scale<kPow2>(max_scatter<32>(amax, lane), scale, inv);  // column hc + lane / 4
    if (lane % 4 == 0 && hc + lane / 4 < hidden)
      sf[static_cast<long long>(hc + lane / 4) * sf_row_stride + static_cast<long long>(t0 / 128) * sf_col_stride] =
          scale;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const float inv_e = __shfl_sync(0xffffffffu, inv, 4 * e);
      if (hc + e >= hidden) break;  // uniform across the warp
      float v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = bf16_bits_to_float((bits[k][e / 2] >> (16 * (e % 2))) & 0xffffu);
      store_e4m3x4(q + static_cast<long long>(hc + e) * ldq + t, v, inv_e, tokens - t);
    }
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
