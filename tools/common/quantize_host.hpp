#pragma once

// The reference quantizers: bf16 -> e4m3 with fp32 scales, defined bit for bit so that
// device quantization kernels can be compared exactly (same scales, same bytes).
//
// The rule, per group of values (128 consecutive values of a row, or a 128x128 block):
//   amax  = max |x| over the group (bf16 values as floats), at least kMinAmax
//           (an all-zero group gets a tiny scale instead of a division by zero)
//   scale = amax / 448 (fp32 division, round to nearest even), or with power-of-two
//           scales the smallest power of two >= amax / 448
//   inv   = 448 / amax (fp32 division), or 1 / scale for power-of-two scales (exact)
//   q     = e4m3(x * inv): fp32 multiply, then round to nearest even with saturation at
//           +-448 (cvt.rn.satfinite.e4m3x2.f32); NaN stays NaN
// Dequantized value: e4m3_to_float(q) * scale.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/fp8_host.hpp"

namespace fp8gemm::host {

constexpr float kMinAmax = 1e-4f;

// float -> e4m3 with the rounding above, by bit arithmetic (float_to_e4m3 is the slow
// reference by exhaustive search; the two agree on every input, see the tests).
uint8_t float_to_e4m3_rn(float x);

// The scale and its inverse for a group with the given amax (already >= 0).
struct GroupScale {
  float scale = 1.0f;
  float inv = 1.0f;
};
GroupScale group_scale(float amax, bool pow2_scales);

// A bf16 matrix on the host: element (r, c) at data[r * ld + c].
struct Bf16Host {
  int64_t rows = 0, cols = 0, ld = 0;
  std::vector<uint16_t> data;
  float at(int64_t r, int64_t c) const { return bf16_to_float(data[size_t(r * ld + c)]); }
};

// A [rows, cols] view with 8 to 15 elements of padding after each row (ld a multiple of 8),
// every element `fill` (12345: padding a quantizer must not read into its result).
Bf16Host padded_bf16(int64_t rows, int64_t cols, float fill = 12345.0f);

// Per-token (1x128 along columns): q [rows, cols] with ld = cols rounded up to 16, scales
// M-major [ceil(cols/128)][stride = rows rounded up to 4] (the GEMM's A layout).
Fp8Operand quantize_per_token_ref(const Bf16Host& x, bool pow2_scales);

// Per-block (128x128): q [rows, cols], scales [ceil(rows/128)][ceil(cols/128)] row-major
// (the GEMM's B layout).
Fp8Operand quantize_per_block_ref(const Bf16Host& x, bool pow2_scales);

// Transpose + per-token: x [T, H] -> x^T [H, T] quantized with 1x128 groups along T
// (what the weight gradient's operands need), scales in the per-token layout of x^T.
Fp8Operand quantize_transposed_per_token_ref(const Bf16Host& x, bool pow2_scales);

}  // namespace fp8gemm::host
