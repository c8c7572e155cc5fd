#include "common/quantize_host.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fp8gemm::host {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

}  // namespace

uint8_t float_to_e4m3_rn(float x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const float a = std::fabs(x);
  if (a >= 448.0f) return sign | 0x7e;  // saturate (inf included)
  // Quantum of the binade of a (subnormals share the quantum 2^-9 of exponent -6).
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): the binade's exponent is e - 1
  const int binade = a == 0.0f ? -6 : std::max(e - 1, -6);
  const float quantum = std::ldexp(1.0f, binade - 3);
  const float n = std::nearbyint(a / quantum);  // exact division by a power of two; ties to even
  int code_exp, man;
  if (binade == -6 && n < 8.0f) {  // subnormal (or zero)
    code_exp = 0;
    man = static_cast<int>(n);
  } else if (n >= 16.0f) {  // rounded up into the next binade
    code_exp = binade + 1 + 7;
    man = 0;
  } else {
    code_exp = binade + 7;
    man = static_cast<int>(n) - 8;
  }
  return sign | static_cast<uint8_t>((code_exp << 3) | man);
}

GroupScale group_scale(float amax, bool pow2_scales) {
  const float a = std::max(amax, kMinAmax);
  GroupScale g;
  if (!pow2_scales) {
    g.scale = a / 448.0f;
    g.inv = 448.0f / a;
    return g;
  }
  // Smallest power of two >= a / 448: drop the mantissa, and go one binade up if it was
  // not zero. (a / 448 >= 2.2e-7 is a normal float.)
  uint32_t u = bits_of(a / 448.0f);
  const bool exact = (u & 0x7fffffu) == 0;
  u &= 0xff800000u;
  if (!exact) u += 0x00800000u;
  g.scale = float_of(u);
  g.inv = 1.0f / g.scale;  // exact for a power of two
  return g;
}

namespace {

// x quantized in groups of group_rows x 128 elements, each with the scale of its amax: per
// token (groups of one row; scales M-major with a stride of whole 4-row units) or per block
// (128 x 128; scales row-major, one per block).
Fp8Operand quantize_groups_ref(const Bf16Host& x, bool per_token, bool pow2_scales) {
  const int64_t group_rows = per_token ? 1 : 128;
  Fp8Operand q;
  q.rows = x.rows;
  q.cols = x.cols;
  q.ld = round_up(std::max<int64_t>(x.cols, 1), 16);
  q.per_token = per_token;
  const int64_t rb = (x.rows + group_rows - 1) / group_rows, kb = (x.cols + 127) / 128;
  q.scale_stride = per_token ? round_up(std::max<int64_t>(x.rows, 1), 4) : kb;
  q.data.assign(size_t(x.rows * q.ld), 0);
  q.scales.assign(size_t(per_token ? kb * q.scale_stride : rb * kb), 0.0f);
  for (int64_t i = 0; i < rb; ++i)
    for (int64_t j = 0; j < kb; ++j) {
      const int64_t r0 = i * group_rows, r1 = std::min(x.rows, r0 + group_rows);
      const int64_t c0 = j * 128, c1 = std::min(x.cols, c0 + 128);
      float amax = 0.0f;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(x.at(r, c)));
      const GroupScale g = group_scale(amax, pow2_scales);
      q.scales[size_t(per_token ? j * q.scale_stride + i : i * kb + j)] = g.scale;
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t c = c0; c < c1; ++c) q.data[size_t(r * q.ld + c)] = float_to_e4m3_rn(x.at(r, c) * g.inv);
    }
  return q;
}

}  // namespace

Fp8Operand quantize_per_token_ref(const Bf16Host& x, bool pow2_scales) {
  return quantize_groups_ref(x, /*per_token=*/true, pow2_scales);
}

Fp8Operand quantize_per_block_ref(const Bf16Host& x, bool pow2_scales) {
  return quantize_groups_ref(x, /*per_token=*/false, pow2_scales);
}

Bf16Host padded_bf16(int64_t rows, int64_t cols, float fill) {
  Bf16Host x;
  x.rows = rows;
  x.cols = cols;
  x.ld = (cols + 7) / 8 * 8 + 8;
  x.data.assign(size_t(rows * x.ld), float_to_bf16(fill));
  return x;
}

Fp8Operand quantize_transposed_per_token_ref(const Bf16Host& x, bool pow2_scales) {
  Bf16Host t;
  t.rows = x.cols;
  t.cols = x.rows;
  t.ld = x.rows;
  t.data.resize(size_t(t.rows * t.ld));
  for (int64_t r = 0; r < x.rows; ++r)
    for (int64_t c = 0; c < x.cols; ++c) t.data[size_t(c * t.ld + r)] = x.data[size_t(r * x.ld + c)];
  return quantize_per_token_ref(t, pow2_scales);
}

}  // namespace fp8gemm::host
