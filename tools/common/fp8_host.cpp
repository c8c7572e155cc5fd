#include "common/fp8_host.hpp"

#include <cmath>
#include <cstring>

namespace fp8gemm::host {

float e4m3_to_float(uint8_t v) {
  const int sign = v >> 7, exp = (v >> 3) & 15, man = v & 7;
  if (exp == 15 && man == 7) return std::nanf("");
  float r = exp == 0 ? std::ldexp(float(man) / 8.0f, -6) : std::ldexp(1.0f + float(man) / 8.0f, exp - 7);
  return sign ? -r : r;
}

uint8_t float_to_e4m3(float x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  float a = std::fabs(x);
  if (a >= 448.0f) return sign | 0x7e;
  // Nearest representable by search over the 127 finite magnitudes (host helper; speed
  // does not matter). Ties go to the even mantissa.
  uint8_t best = 0;
  float best_err = a;
  for (uint8_t c = 1; c < 0x7f; ++c) {
    const float err = std::fabs(e4m3_to_float(c) - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return sign | best;
}

uint16_t float_to_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (std::isnan(x)) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

float bf16_to_float(uint16_t v) {
  const uint32_t u = uint32_t(v) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

float Fp8Operand::scale(int64_t row, int64_t col) const {
  if (per_token) return scales[(col / 128) * scale_stride + row];
  return scales[(row / 128) * ((cols + 127) / 128) + col / 128];
}

Fp8Operand random_operand(int64_t rows, int64_t cols, int64_t ld, bool per_token, uint64_t seed) {
  SplitMix64 rng(seed);
  Fp8Operand op;
  op.rows = rows;
  op.cols = cols;
  op.ld = ld;
  op.per_token = per_token;
  op.data.assign(static_cast<size_t>(rows * ld), 0x7f);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* row = &op.data[static_cast<size_t>(r * ld)];
    for (int64_t c = 0; c < cols; c += 4) {
      uint64_t bits = rng.next();
      for (int64_t e = c; e < c + 4 && e < cols; ++e, bits >>= 16) {
        // Exponent field 4..10 (2^-3 .. 2^3), any mantissa, either sign; 1/16 zeros.
        const unsigned exponent = 4 + unsigned(bits & 0xff) % 7;
        const unsigned mantissa = (bits >> 8) & 7;
        const unsigned sign = (bits >> 11) & 1;
        row[e] = ((bits >> 12) & 15) == 0 ? 0 : uint8_t((sign << 7) | (exponent << 3) | mantissa);
      }
    }
  }
  const int64_t kb = (cols + 127) / 128;
  auto random_scale = [&rng] { return float(std::exp2(rng.uniform() * 6.0 - 3.0)); };
  if (per_token) {
    op.scale_stride = (rows + 3) / 4 * 4;
    op.scales.assign(static_cast<size_t>(kb * op.scale_stride), std::nanf(""));
    for (int64_t j = 0; j < kb; ++j)
      for (int64_t r = 0; r < rows; ++r) op.scales[j * op.scale_stride + r] = random_scale();
  } else {
    const int64_t rb = (rows + 127) / 128;
    op.scale_stride = kb;
    op.scales.resize(static_cast<size_t>(rb * kb));
    for (float& s : op.scales) s = random_scale();
  }
  return op;
}

}  // namespace fp8gemm::host
