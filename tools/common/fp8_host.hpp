#pragma once

#include <cstdint>
#include <vector>

namespace fp8gemm::host {

// e4m3 ("fn": no infinities, 0x7f / 0xff are NaN, max 448) to float.
float e4m3_to_float(uint8_t v);
// Float to e4m3, round to nearest even, saturating at +-448 (NaN stays NaN).
uint8_t float_to_e4m3(float x);

uint16_t float_to_bf16(float x);  // round to nearest even
float bf16_to_float(uint16_t v);
constexpr uint16_t kBf16Poison = 0xffff;  // a NaN pattern no kernel writes

// A quantized operand as the GEMM reads it: e4m3 rows with leading dimension `ld`,
// and fp32 scales in the layouts of fp8gemm.hpp.
struct Fp8Operand {
  int64_t rows = 0, cols = 0, ld = 0;
  std::vector<uint8_t> data;  // rows * ld bytes, padding bytes set to 0x7f (NaN) to catch reads
  std::vector<float> scales;  // per-token: [ceil(cols/128)][scale_stride]; per-block: [ceil(rows/128)][ceil(cols/128)]
  int64_t scale_stride = 0;
  bool per_token = true;

  float scale(int64_t row, int64_t col) const;
  double value(int64_t row, int64_t col) const { return double(e4m3_to_float(data[row * ld + col])) * scale(row, col); }
};

// Random e4m3 values with magnitudes in [2^-3, 2^3] and ~1/16 exact zeros (never NaN),
// random positive scales spanning 2^-3 .. 2^3 so that every scale matters. Padding
// (columns past `cols`, scale slots past `rows`) holds NaN so that a kernel reading it
// shows up in the result. Deterministic for a seed.
Fp8Operand random_operand(int64_t rows, int64_t cols, int64_t ld, bool per_token, uint64_t seed);

// A small, fast, seedable generator (SplitMix64).
struct SplitMix64 {
  uint64_t state;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

}  // namespace fp8gemm::host
