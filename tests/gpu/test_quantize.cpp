// Quantization kernels on an sm_90 GPU (per-token, per-block, transposed per-token):
// bit-exact against the host reference (same fp8 bytes, same scales) on random data with
// zero rows, huge values and partial groups, both scale roundings; nothing written outside q and the scales; the result feeds
// gemm_fp8_nt directly.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/quantize_host.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

class GpuQuantize : public Sm90Test {};

// `huge`: a few +-3e38 values (rows 5, 16, ...), which the quantizers must survive; off
// where the quantized operands feed a GEMM (their products overflow bf16).
host::Bf16Host make_input(int64_t rows, int64_t cols, uint64_t seed, bool huge = true) {
  host::Bf16Host x = host::padded_bf16(rows, cols);  // a sub-matrix view: padding must not matter
  host::SplitMix64 rng(seed);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double v = (rng.uniform() * 2 - 1) * std::ldexp(1.0, int(rng.next() % 24) - 12);
      if (r % 7 == 3) v = 0.0;                              // zero rows
      if (huge && r % 11 == 5 && c % 97 == 1) v = 3.0e38 * (c % 2 ? 1 : -1);  // huge values
      x.data[size_t(r * x.ld + c)] = host::float_to_bf16(float(v));
    }
  return x;
}

struct Outputs {
  DeviceBuffer q, scales;
  int64_t ldq;
};

enum class Mode { PerToken, PerBlock, Transposed };

// Runs one quantizer and compares bytes and scales with the reference; also checks that
// the bytes around each q row and past the scales stay as they were.
void run_and_compare(Mode mode, int64_t x_rows, int64_t x_cols, bool pow2) {
  SCOPED_TRACE(testing::Message() << int(mode) << " " << x_rows << "x" << x_cols << (pow2 ? " pow2" : ""));
  const bool per_block = mode == Mode::PerBlock;
  const host::Bf16Host x = make_input(x_rows, x_cols, uint64_t(x_rows * 131 + x_cols));
  const host::Fp8Operand ref = mode == Mode::PerBlock   ? host::quantize_per_block_ref(x, pow2)
                               : mode == Mode::PerToken ? host::quantize_per_token_ref(x, pow2)
                                                        : host::quantize_transposed_per_token_ref(x, pow2);
  const int64_t rows = ref.rows, cols = ref.cols;  // of q
  const DeviceBuffer dx = upload_vector(x.data);
  const int64_t ldq = ref.ld + 16;  // a wider q to catch writes past a row
  DeviceBuffer dq(size_t(rows * ldq));
  DeviceBuffer ds((ref.scales.size() + 64) * 4);
  check(cudaMemset(dq.get(), 0x5a, size_t(rows * ldq)), "poison q");
  check(cudaMemset(ds.get(), 0xff, (ref.scales.size() + 64) * 4), "poison scales");
  const Bf16Input in{dx.get(), x_rows, x_cols, x.ld};
  const Fp8Output out{dq.get(), rows, cols, ldq};
  const QuantizeOptions options{pow2};
  if (mode == Mode::PerBlock)
    quantize_per_block(in, out, block_scale_output(ds.get<float>(), rows, cols), options);
  else if (mode == Mode::PerToken)
    quantize_per_token(in, out, per_token_scale_output(ds.get<float>(), rows, cols), options);
  else
    quantize_transposed_per_token(in, out, per_token_scale_output(ds.get<float>(), rows, cols), options);
  check(cudaDeviceSynchronize(), "quantize");
  std::vector<uint8_t> q(size_t(rows * ldq));
  std::vector<float> s(ref.scales.size() + 64);
  check(cudaMemcpy(q.data(), dq.get(), q.size(), cudaMemcpyDeviceToHost), "download q");
  check(cudaMemcpy(s.data(), ds.get(), s.size() * 4, cudaMemcpyDeviceToHost), "download scales");
  int64_t byte_mismatches = 0, untouched_breaks = 0, scale_mismatches = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < ldq; ++c) {
      const uint8_t got = q[size_t(r * ldq + c)];
      if (c < cols) byte_mismatches += got != ref.data[size_t(r * ref.ld + c)];
      else untouched_breaks += got != 0x5a;
    }
  // Per-token scale slots between rows and the stride are padding: not compared.
  const int64_t kb = (cols + 127) / 128;
  for (int64_t j = 0; j < (per_block ? (rows + 127) / 128 : kb); ++j)
    for (int64_t i = 0; i < (per_block ? kb : rows); ++i) {
      const size_t at = per_block ? size_t(j * kb + i) : size_t(j * ref.scale_stride + i);
      uint32_t a, b;
      std::memcpy(&a, &s[at], 4);
      std::memcpy(&b, &ref.scales[at], 4);
      scale_mismatches += a != b;
    }
  for (size_t i = ref.scales.size(); i < s.size(); ++i) {
    uint32_t a;
    std::memcpy(&a, &s[i], 4);
    untouched_breaks += a != 0xffffffffu;
  }
  EXPECT_EQ(byte_mismatches, 0);
  EXPECT_EQ(scale_mismatches, 0);
  EXPECT_EQ(untouched_breaks, 0) << "wrote outside q or the scales";
}

}  // namespace

TEST_F(GpuQuantize, BitExactAgainstTheHostReference) {
  for (Mode mode : {Mode::PerToken, Mode::PerBlock, Mode::Transposed})
    for (bool pow2 : {false, true})
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 128}, {3, 8}, {129, 300}, {256, 7168}, {700, 2056}})
        run_and_compare(mode, rows, cols, pow2);
}

// What the quantizers write is what gemm_fp8_nt reads: quantize A per token and B per
// block, multiply, and compare with the fp64 GEMM of the dequantized operands.
TEST_F(GpuQuantize, OutputsFeedTheGemm) {
  const int64_t m = 200, n = 264, k = 528;  // K tail of 16 (the GEMM needs K % 16 == 0)
  const host::Bf16Host xa = make_input(m, k, 5, false), xb = make_input(n, k, 6, false);
  const host::Fp8Operand ra = host::quantize_per_token_ref(xa, false), rb = host::quantize_per_block_ref(xb, false);
  const DeviceBuffer da = upload_vector(xa.data), db = upload_vector(xb.data);
  DeviceBuffer qa(size_t(m * ra.ld)), qb(size_t(n * rb.ld)), sa(ra.scales.size() * 4), sb(rb.scales.size() * 4);
  quantize_per_token({da.get(), m, k, xa.ld}, {qa.get(), m, k, ra.ld}, per_token_scale_output(sa.get<float>(), m, k));
  quantize_per_block({db.get(), n, k, xb.ld}, {qb.get(), n, k, rb.ld}, block_scale_output(sb.get<float>(), n, k));
  GuardedOutput out = make_output(m, n, n);
  gemm_fp8_nt({qa.get(), m, k, ra.ld}, per_token_scales(sa.get<float>(), m, k), {qb.get(), n, k, rb.ld},
              block_scales(sb.get<float>(), n, k), {out.d(), m, n, out.ld});
  check(cudaDeviceSynchronize(), "gemm");
  const DeviceOperand a = upload(ra), b = upload(rb);
  DeviceBuffer ref(size_t(m * n) * 8);
  reference_gemm(a, b, ref.get<double>());
  const DeviceComparison r = compare(out, ref.get<double>());
  EXPECT_LT(r.rel_error, 1e-2) << r.describe();
  EXPECT_EQ(r.non_finite, 0u) << r.describe();
}

// The exact transpose moves bytes and the scale grid together, and convert_scales puts
// K-major per-token scales into the layout the GEMM reads.
TEST_F(GpuQuantize, TransposeAndScaleConversion) {
  for (auto [n, k] : {std::pair<int64_t, int64_t>{300, 2064}, {64, 64}, {7168, 2048}, {8, 16}}) {
    SCOPED_TRACE(testing::Message() << n << "x" << k);
    const host::Fp8Operand w = host::random_operand(n, k, k, false, uint64_t(n + k));
    const DeviceOperand dw = upload(w);
    const int64_t ldt = (n + 15) / 16 * 16, nb = (n + 127) / 128, kb = (k + 127) / 128;
    DeviceBuffer wt(size_t(k * ldt)), wts(size_t(kb * nb) * 4);
    transpose_fp8_block_scaled({dw.data.get(), n, k, k}, block_scales(dw.scales.get<float>(), n, k),
                               {wt.get(), k, n, ldt}, block_scale_output(wts.get<float>(), k, n));
    check(cudaDeviceSynchronize(), "transpose");
    std::vector<uint8_t> t(size_t(k * ldt));
    std::vector<float> ts(size_t(kb * nb));
    check(cudaMemcpy(t.data(), wt.get(), t.size(), cudaMemcpyDeviceToHost), "download");
    check(cudaMemcpy(ts.data(), wts.get(), ts.size() * 4, cudaMemcpyDeviceToHost), "download scales");
    int64_t wrong = 0;
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) wrong += t[size_t(r * ldt + c)] != w.data[size_t(c * w.ld + r)];
    for (int64_t j = 0; j < kb; ++j)
      for (int64_t i = 0; i < nb; ++i) wrong += ts[size_t(j * nb + i)] != w.scales[size_t(i * kb + j)];
    EXPECT_EQ(wrong, 0);
  }
  // K-major [M][ceil(K/128)] -> M-major with the padded stride.
  const int64_t m = 129, k = 520, kb = (k + 127) / 128, stride = per_token_scale_stride(m);
  std::vector<float> k_major(size_t(m * kb));
  for (size_t i = 0; i < k_major.size(); ++i) k_major[i] = float(i) + 0.5f;
  DeviceBuffer in(k_major.size() * 4), out(size_t(kb * stride) * 4);
  check(cudaMemcpy(in.get(), k_major.data(), k_major.size() * 4, cudaMemcpyHostToDevice), "upload");
  convert_scales(ScaleMatrix{in.get<float>(), m, kb, kb, 1}, per_token_scale_output(out.get<float>(), m, k));
  check(cudaDeviceSynchronize(), "convert");
  std::vector<float> got(size_t(kb * stride));
  check(cudaMemcpy(got.data(), out.get(), got.size() * 4, cudaMemcpyDeviceToHost), "download");
  int64_t wrong = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < kb; ++j) wrong += got[size_t(j * stride + r)] != k_major[size_t(r * kb + j)];
  EXPECT_EQ(wrong, 0);
}
