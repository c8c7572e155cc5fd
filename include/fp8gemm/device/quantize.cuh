#pragma once

// fp8gemm's quantization rule as inline device functions, for fusing quantization into your
// own CUDA kernels (RMSNorm + quantize, activation + quantize, ...): what they produce is, byte
// for byte, what fp8gemm::quantize_per_token / quantize_per_block write for the same values, in
// the layouts the library's GEMMs read. The library's own quantization kernels are built from
// these same functions, so the two cannot drift apart.
//
// Self-contained: no toolkit header is included, so this compiles with nvcc (any .cu file) and
// with NVRTC (pass the include directory of the installed library, e.g. -I<prefix>/include);
// the device functions need sm_89 or newer (e4m3 conversion in PTX), the GEMMs sm_90a. The
// layout helpers at the top are constexpr and also compile as plain host C++.
//
// The rule, per group (128 consecutive values of a row: per-token; or a 128x128 block):
//   amax  = max(max |x|, min_amax())    NaNs ignored as fmaxf does; an all-zero group gets 1e-4
//   scale = amax / 448                  fp32 division, round to nearest even; or, with kPow2,
//                                       the smallest power of two >= amax / 448
//   inv   = 448 / amax                  or 1 / scale with kPow2 (exact)
//   q     = e4m3(x * inv)               fp32 multiply (round to nearest even), then round to
//                                       nearest even, saturating at +-448; NaN stays NaN
// A value is dequantized as e4m3 value * scale. Every rounding step is inline PTX with its
// rounding spelled out (no .ftz), so nothing depends on -use_fast_math, -ftz or contraction;
// the one plain operation, fmaxf, is exact and order-free (any reduction order gives the
// same amax), and it can meet denormals only below min_amax(), where they no longer matter.
//
// Inputs: bf16 values as floats (bf16 -> fp32 is exact: __bfloat162float, or
// bf16_bits_to_float on the raw bits), or plain fp32 values. quantize_per_token reads bf16, so
// a fused kernel reproduces "compute in fp32, store bf16, quantize_per_token" exactly when it
// passes round_to_bf16(value); fp32 values passed as they are get the same rule applied to
// them (a little more accurate, but not the bytes of the unfused bf16 path).
//
// Outputs and the layouts the GEMMs read (D = A x B^T, both operands [rows, K], K-major):
//   e4m3 bytes: row-major with K contiguous, byte (r, c) at q[r * ld + c]; ld % 16 == 0 and q
//     16-byte aligned (e4m3_index, e4m3_ld). Bytes past the last column are never read; the
//     library's quantizers do not write them.
//   per-token scales (1x128 groups along K): A of gemm_fp8_nt and of the m-grouped GEMMs, A
//     and B of the weight-gradient GEMMs. Column-major ("M-major"), logical [rows, ceil(K/128)],
//     each column padded to per_token_scale_stride(rows) = rows rounded up to 4 floats:
//     the scale of (row r, group g) is at sf[g * per_token_scale_stride(rows) + r]
//     (per_token_scale_index), the buffer holds per_token_scale_count(rows, K) floats and
//     its padding slots are never read. This is fp8gemm::per_token_scales(sf, rows, K).
//   per-block scales (128x128 groups): B of gemm_fp8_nt and of the m-grouped GEMMs. Row-major
//     [ceil(N/128), ceil(K/128)]: block (i, j) at sf[i * ceil(K/128) + j] (block_scale_index).
//     This is fp8gemm::block_scales(sf, N, K).
//   The weight-gradient GEMMs want x^T quantized per token along the tokens: group g of
//   row h of x^T is x[128 g .. 128 g + 127][h], with per-token scales of x^T's rows.

namespace fp8gemm {
namespace device {

#ifndef FP8GEMM_DEVICE_HOST_DEVICE
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FP8GEMM_DEVICE_HOST_DEVICE __host__ __device__
#else
#define FP8GEMM_DEVICE_HOST_DEVICE
#endif
#endif

// The constants are an enumerator and functions, not variables: under NVRTC's -default-device
// every namespace-scope variable becomes a device variable of each module that includes this.
enum : int { kGroupSize = 128 };  // values per group along a row, and rows of a 128x128 block

// Largest finite e4m3 value.
FP8GEMM_DEVICE_HOST_DEVICE constexpr float e4m3_max() { return 448.0f; }

// The amax floor: an all-zero group gets the scale 1e-4 / 448 rather than a division by zero.
FP8GEMM_DEVICE_HOST_DEVICE constexpr float min_amax() { return 1e-4f; }

// ---------------------------------------------------------------------------
// Layouts (element counts and offsets; the same arithmetic as fp8gemm.hpp's helpers)
// ---------------------------------------------------------------------------

// 128-wide groups covering k values (the last may be partial); without overflow for any k.
FP8GEMM_DEVICE_HOST_DEVICE constexpr long long scale_blocks(long long k) {
  return k > 0 ? k / 128 + (k % 128 != 0) : (k + 127) / 128;
}

// Column stride of per-token scales for m rows: m rounded up to 4 floats, so that each column
// starts 16-byte aligned (what the GEMM's scale loads need); without overflow for any m (the
// largest long long where the multiple of 4 is past it).
FP8GEMM_DEVICE_HOST_DEVICE constexpr long long per_token_scale_stride(long long m) {
  return m <= 0x7fffffffffffffffLL - 3 ? (m + 3) / 4 * 4 : 0x7fffffffffffffffLL;
}

// Where the scale of row `row`, group `group` (columns 128 group ..) of an [m, k] operand goes.
FP8GEMM_DEVICE_HOST_DEVICE constexpr long long per_token_scale_index(long long row, long long group, long long m) {
  return group * per_token_scale_stride(m) + row;
}

// Floats of the per-token scale buffer of an [m, k] operand (padding included).
FP8GEMM_DEVICE_HOST_DEVICE constexpr long long per_token_scale_count(long long m, long long k) {
  return scale_blocks(k) * per_token_scale_stride(m);
}

// Where the scale of block (block_row, block_col) (rows 128 block_row .., columns 128
// block_col ..) of an [n, k] operand goes.
FP8GEMM_DEVICE_HOST_DEVICE constexpr long long block_scale_index(long long block_row, long long block_col,
                                                                 long long k) {
  return block_row * scale_blocks(k) + block_col;
}

// Floats of the per-block scale buffer of an [n, k] operand.
FP8GEMM_DEVICE_HOST_DEVICE constexpr long long block_scale_count(long long n, long long k) {
  return scale_blocks(n) * scale_blocks(k);
}

// The smallest leading dimension (bytes) the GEMMs accept for rows of k e4m3 values.
FP8GEMM_DEVICE_HOST_DEVICE constexpr long long e4m3_ld(long long k) { return (k + 15) / 16 * 16; }

// Where the e4m3 byte of (row, col) goes in a matrix with leading dimension ld.
FP8GEMM_DEVICE_HOST_DEVICE constexpr long long e4m3_index(long long row, long long col, long long ld) {
  return row * ld + col;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

// ---------------------------------------------------------------------------
// The rule
// ---------------------------------------------------------------------------

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

// The float of a bf16 given as its bits (in the low 16 bits of bits16): exact, the bits move up.
__device__ __forceinline__ float bf16_bits_to_float(unsigned int bits16) { return __uint_as_float(bits16 << 16); }

// x rounded to the nearest bf16 (ties to even), as a float: what storing x as bf16 and
// reading it back gives, so quantizing round_to_bf16(x) reproduces the unfused bf16 path.
__device__ __forceinline__ float round_to_bf16(float x) {
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return bf16_bits_to_float(r);
}

// |x| by clearing the sign bit (exact for every input, NaN included).
__device__ __forceinline__ float abs_f32(float x) { return __uint_as_float(__float_as_uint(x) & 0x7fffffffu); }

// max(|a|, |b|) of bf16 pairs, elementwise, exact (no rounding in a max). A NaN is ignored
// when the other operand is not NaN, as fmaxf does, so the amax of a group is the same as
// over its values as floats.
__device__ __forceinline__ unsigned int abs_max_bf16x2(unsigned int a, unsigned int b) {
  unsigned int r;
  asm("max.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a & 0x7fff7fffu), "r"(b & 0x7fff7fffu));
  return r;
}

// The scale of a group with the given amax (max |x| over the group, >= 0 or NaN) and the
// factor inv its values are multiplied by before the conversion.
template <bool kPow2>
__device__ __forceinline__ void group_scale(float amax, float& scale, float& inv) {
  const float a = fmaxf(amax, min_amax());
  if constexpr (!kPow2) {
    scale = div_rn(a, e4m3_max());
    inv = div_rn(e4m3_max(), a);
  } else {
    // Smallest power of two >= a / 448: drop the mantissa, and go one binade up if it was not
    // zero (a / 448 >= 2.2e-7 is a normal float, so this is exact).
    unsigned int u = __float_as_uint(div_rn(a, e4m3_max()));
    const bool exact = (u & 0x7fffffu) == 0;
    u &= 0xff800000u;
    if (!exact) u += 0x00800000u;
    scale = __uint_as_float(u);
    inv = div_rn(1.0f, scale);
  }
}

// Two floats, already multiplied by inv, to two e4m3 bytes (lo in the low byte): round to
// nearest even, saturating at +-448, NaN to NaN.
__device__ __forceinline__ unsigned int e4m3x2_rn(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

// One value of a group with the given inv to its e4m3 byte.
__device__ __forceinline__ unsigned char quantize_e4m3(float x, float inv) {
  return static_cast<unsigned char>(e4m3x2_rn(mul_rn(x, inv), 0.0f));
}

// Two values to two e4m3 bytes (lo in the low byte).
__device__ __forceinline__ unsigned int quantize_e4m3x2(float lo, float hi, float inv) {
  return e4m3x2_rn(mul_rn(lo, inv), mul_rn(hi, inv));
}

// Four consecutive values to four e4m3 bytes, v[0] in the low byte: the word to store as it
// is (little-endian, so the bytes land in column order).
__device__ __forceinline__ unsigned int quantize_e4m3x4(const float (&v)[4], float inv) {
  return quantize_e4m3x2(v[0], v[1], inv) | (quantize_e4m3x2(v[2], v[3], inv) << 16);
}

// Max of v over each aligned run of kLanes lanes (1, 2, 4, ..., 32) by xor shuffles; every
// lane of a run gets the run's max. All 32 lanes of the warp must call it together.
template <int kLanes>
__device__ __forceinline__ float lanes_max(float v) {
  static_assert(kLanes >= 1 && kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "kLanes: a power of two <= 32");
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// ---------------------------------------------------------------------------
// One 128-value group held by kLanes lanes of a warp
// ---------------------------------------------------------------------------
// Thread mapping: a group is held by kLanes consecutive lanes starting at a multiple of kLanes
// (lane / kLanes picks the group within the warp, 32 / kLanes groups per call); lane j = lane
// % kLanes of it holds the group's values kValues j .. kValues j + kValues - 1 (kValues = 128 /
// kLanes) in v[0 ..], i.e. columns 128 g + kValues j + i of its row. kLanes = 16 is the
// mapping of the library's per-token kernel (8 values per lane: one 16-byte bf16 load); 32
// suits a warp walking a row (4 values per lane), 1 a thread per group (128 values in
// registers).
// All 32 lanes of the warp must call it together (it shuffles with the full mask), so keep
// the call out of divergent code: lanes with nothing to quantize pass zeros and drop the
// result. Values past the end of a row (a partial last group) must be passed as 0 (they
// cannot raise the amax); do not store their bytes.
// Returns the group's scale (every lane of the group gets it; store it once, e.g. from lane
// j == 0, at per_token_scale_index(row, g, rows)); q[i] holds the e4m3 bytes of v[4 i ..
// 4 i + 3], v[4 i] in the low byte, so storing q as it is at &out[e4m3_index(row, 128 g +
// kValues j, ld)] puts every byte in place (with kValues = 8: one 8-byte store, aligned since
// ld % 16 == 0).
template <int kLanes, bool kPow2 = false>
__device__ __forceinline__ float quantize_group(const float (&v)[kGroupSize / kLanes],
                                                unsigned int (&q)[kGroupSize / kLanes / 4]) {
  constexpr int kValues = kGroupSize / kLanes;
  static_assert(kValues % 4 == 0, "kLanes: 1, 2, 4, 8, 16 or 32");
  float amax = abs_f32(v[0]);
#pragma unroll
  for (int i = 1; i < kValues; ++i) amax = fmaxf(amax, abs_f32(v[i]));
  float scale, inv;
  group_scale<kPow2>(lanes_max<kLanes>(amax), scale, inv);
#pragma unroll
  for (int i = 0; i < kValues / 4; ++i) {
    const float w[4] = {v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]};
    q[i] = quantize_e4m3x4(w, inv);
  }
  return scale;
}

// Per-block (128x128) groups: reduce max |x| over the block in any order (lanes_max within
// warps, then across warps through shared memory), call group_scale once, and convert every
// value with quantize_e4m3x4 (or x2 / single) with that inv; the scale goes to
// block_scale_index(row / 128, col / 128, k).

#endif  // __CUDACC__ || __CUDACC_RTC__

}  // namespace device
}  // namespace fp8gemm
