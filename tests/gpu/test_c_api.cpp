// The C API (fp8gemm.h) on an sm_90 GPU: each GEMM and quantizer called through it writes
// the same bits as the C++ call on the same inputs (dense bf16 with and without options and
// with a given config, the fp32 weight gradient, m-grouped contiguous and masked, k-grouped),
// and the C call reports success with an empty message.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/fp8_host.hpp"
#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

class GpuCApi : public Sm90Test {};

void expect_success(fp8gemm_status_t status) {
  EXPECT_EQ(status, FP8GEMM_SUCCESS) << fp8gemm_status_string(status) << ": " << fp8gemm_last_error_message();
  EXPECT_STREQ(fp8gemm_last_error_message(), "");
}

// Two device buffers of the same size and the same initial bytes: one for the C++ call, one
// for the C call.
struct OutputPair {
  DeviceBuffer cpp, c;
  explicit OutputPair(const std::vector<uint8_t>& init) : cpp(init.size()), c(init.size()) {
    check(cudaMemcpy(cpp.get(), init.data(), init.size(), cudaMemcpyHostToDevice), "init C++ output");
    check(cudaMemcpy(c.get(), init.data(), init.size(), cudaMemcpyHostToDevice), "init C output");
    check(cudaDeviceSynchronize(), "init outputs");
  }
  explicit OutputPair(size_t bytes) : OutputPair(std::vector<uint8_t>(bytes, 0xff)) {}
};

// The whole buffers (outputs, padding and whatever a call left alone) are the same bytes.
void expect_identical(const OutputPair& out, const char* what) {
  check(cudaDeviceSynchronize(), what);
  std::vector<uint8_t> cpp(out.cpp.bytes()), c(out.c.bytes());
  check(cudaMemcpy(cpp.data(), out.cpp.get(), cpp.size(), cudaMemcpyDeviceToHost), "download C++ output");
  check(cudaMemcpy(c.data(), out.c.get(), c.size(), cudaMemcpyDeviceToHost), "download C output");
  size_t differing = 0;
  for (size_t i = 0; i < cpp.size(); ++i) differing += cpp[i] != c[i];
  EXPECT_EQ(differing, 0u) << what << ": " << differing << " of " << cpp.size() << " bytes differ";
}

// Random fp32 values, as bytes, for C and in-place accumulation.
std::vector<uint8_t> random_floats(size_t count, uint64_t seed) {
  host::SplitMix64 rng(seed);
  std::vector<float> values(count);
  for (float& v : values) v = float(rng.uniform() * 200 - 100);
  std::vector<uint8_t> bytes(count * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The C descriptors of the C++ ones (the same fields in the same order).
fp8gemm_fp8_matrix_t c_of(const Fp8Matrix& m) { return {m.data, m.rows, m.cols, m.ld}; }
fp8gemm_bf16_matrix_t c_of(const Bf16Matrix& m) { return {m.data, m.rows, m.cols, m.ld}; }
fp8gemm_fp32_matrix_t c_of(const Fp32Matrix& m) { return {m.data, m.rows, m.cols, m.ld}; }
fp8gemm_scale_matrix_t c_of(const ScaleMatrix& s) { return {s.data, s.rows, s.cols, s.row_stride, s.col_stride}; }

// A and B of a call on the device, with their C++ and C descriptors: A per-token scaled; B
// per-block (the forward GEMMs; experts stacked: block scales of [G * N, K] when N % 128 == 0)
// or per-token (the weight gradients), as its host operand says.
struct CallOperands {
  DeviceOperand a, b;
  Fp8Matrix fa, fb;
  ScaleMatrix sa, sb;
  fp8gemm_fp8_matrix_t ca, cb;
  fp8gemm_scale_matrix_t csa, csb;

  CallOperands(host::Fp8Operand host_a, host::Fp8Operand host_b)
      : a(upload(std::move(host_a))), b(upload(std::move(host_b))) {
    const int64_t k = a.host.cols;
    fa = {a.data.get(), a.host.rows, k, a.host.ld};
    fb = {b.data.get(), b.host.rows, k, b.host.ld};
    sa = per_token_scales(a.scales.get<float>(), a.host.rows, k);
    sb = b.host.per_token ? per_token_scales(b.scales.get<float>(), b.host.rows, k)
                          : block_scales(b.scales.get<float>(), b.host.rows, k);
    ca = c_of(fa);
    cb = c_of(fb);
    csa = c_of(sa);
    csb = c_of(sb);
  }
  // Random operands: A [a_rows, K], B [b_rows, K].
  CallOperands(int64_t a_rows, int64_t b_rows, int64_t k, bool b_per_token, uint64_t seed)
      : CallOperands(host::random_operand(a_rows, k, k, true, seed),
                     host::random_operand(b_rows, k, k, b_per_token, seed + 1)) {}
};

}  // namespace

// A dense problem with tails in M, N and K.
TEST_F(GpuCApi, DenseBf16IsBitIdentical) {
  struct {
    int64_t m = 300, n = 264;
  } p;
  const CallOperands x(p.m, p.n, 1040, false, 101);
  const fp8gemm_fp8_matrix_t a = x.ca, b = x.cb;
  const fp8gemm_scale_matrix_t sa = x.csa, sb = x.csb;
  const int64_t ld = p.n + 8;  // row padding that neither call may write
  {
    OutputPair out(size_t(p.m * ld) * 2);
    const Bf16Matrix d_cpp{out.cpp.get(), p.m, p.n, ld};
    const fp8gemm_bf16_matrix_t d_c = c_of(Bf16Matrix{out.c.get(), p.m, p.n, ld});
    gemm_fp8_nt(x.fa, x.sa, x.fb, x.sb, d_cpp);
    expect_success(fp8gemm_gemm_fp8_nt(&a, &sa, &b, &sb, &d_c, nullptr));
    expect_identical(out, "gemm_fp8_nt");
  }
  {
    OutputPair out(size_t(p.m * ld) * 2);
    const fp8gemm_bf16_matrix_t d_c = c_of(Bf16Matrix{out.c.get(), p.m, p.n, ld});
    gemm_fp8_nt(x.fa, x.sa, x.fb, x.sb, {out.cpp.get(), p.m, p.n, ld}, GemmOptions{true});
    fp8gemm_gemm_options_t options = fp8gemm_default_gemm_options();
    options.b_constant = 1;
    expect_success(fp8gemm_gemm_fp8_nt_with_options(&a, &sa, &b, &sb, &d_c, &options, nullptr));
    expect_identical(out, "gemm_fp8_nt with b_constant");
  }
  {
    OutputPair out(size_t(p.m * ld) * 2);
    const fp8gemm_bf16_matrix_t d_c = c_of(Bf16Matrix{out.c.get(), p.m, p.n, ld});
    // A config of the sweep's families, every field but the defaulted epilogue and split set.
    const KernelConfig config{128, 144, 5, 4, 1};
    gemm_fp8_nt(x.fa, x.sa, x.fb, x.sb, {out.cpp.get(), p.m, p.n, ld}, config);
    fp8gemm_kernel_config_t c_config = fp8gemm_default_kernel_config();
    c_config.block_m = 128;
    c_config.block_n = 144;
    c_config.stages = 5;
    c_config.group_n = 4;
    c_config.multicast = 1;
    expect_success(fp8gemm_gemm_fp8_nt_with_config(&a, &sa, &b, &sb, &d_c, &c_config, nullptr));
    expect_identical(out, "gemm_fp8_nt with a config");
  }
}

TEST_F(GpuCApi, WeightGradientFp32IsBitIdentical) {
  const int64_t m = 300, n = 264, ld = n + 4;
  const CallOperands x(m, n, 1040, true, 303);
  const std::vector<uint8_t> c_values = random_floats(size_t(m * ld), 505);
  const DeviceBuffer c_buffer(c_values.size());
  check(cudaMemcpy(c_buffer.get(), c_values.data(), c_values.size(), cudaMemcpyHostToDevice), "upload C");
  const Fp32Matrix c{c_buffer.get<float>(), m, n, ld};
  const fp8gemm_fp32_matrix_t cc = c_of(c);
  for (int mode = 0; mode < 3; ++mode) {  // no C, a separate C, in place
    SCOPED_TRACE(mode);
    OutputPair out(mode == 2 ? c_values : std::vector<uint8_t>(c_values.size(), 0xff));
    const Fp32Matrix d_cpp{out.cpp.get<float>(), m, n, ld};
    const fp8gemm_fp32_matrix_t d_c = c_of(Fp32Matrix{out.c.get<float>(), m, n, ld});
    gemm_fp8_nt_wgrad(x.fa, x.sa, x.fb, x.sb, d_cpp, mode == 0 ? nullptr : mode == 1 ? &c : &d_cpp);
    expect_success(fp8gemm_gemm_fp8_nt_wgrad(&x.ca, &x.csa, &x.cb, &x.csb, &d_c,
                                             mode == 0 ? nullptr : mode == 1 ? &cc : &d_c, nullptr));
    expect_identical(out, "gemm_fp8_nt_wgrad");
  }
}

TEST_F(GpuCApi, GroupedContiguousIsBitIdentical) {
  // Experts of 200, 0, 256 and 100 rows, each segment padded to 128 rows (-1 in group_of_row).
  const int64_t groups = 4, n = 256, k = 528;
  const std::vector<int64_t> rows = {200, 0, 256, 100};
  std::vector<int32_t> group_of_row;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t r = rows[size_t(g)];
    const int64_t padded = (r + kGroupedSegmentRows - 1) / kGroupedSegmentRows * kGroupedSegmentRows;
    group_of_row.insert(group_of_row.end(), size_t(r), int32_t(g));
    group_of_row.insert(group_of_row.end(), size_t(padded - r), -1);
  }
  const int64_t m = int64_t(group_of_row.size());
  const CallOperands x(m, groups * n, k, false, 606);
  const DeviceBuffer index = upload_ints(group_of_row);
  OutputPair out(size_t(m * n) * 2);
  const fp8gemm_bf16_matrix_t d_c = c_of(Bf16Matrix{out.c.get(), m, n, n});
  gemm_fp8_nt_grouped_contiguous(x.fa, x.sa, x.fb, x.sb, {out.cpp.get(), m, n, n}, index.get<int32_t>(), groups);
  expect_success(fp8gemm_gemm_fp8_nt_grouped_contiguous(&x.ca, &x.csa, &x.cb, &x.csb, &d_c, index.get<int32_t>(),
                                                        groups, nullptr));
  expect_identical(out, "gemm_fp8_nt_grouped_contiguous");
}

TEST_F(GpuCApi, GroupedMaskedIsBitIdentical) {
  // max_m = 128 rows per expert, of which 128, 0, 37 and 100 are used (the rest stay poison).
  const int64_t groups = 4, max_m = 128, m = groups * max_m, n = 256, k = 528, expected_m = 64;
  const CallOperands x(m, groups * n, k, false, 808);
  const DeviceBuffer masked_m = upload_ints({128, 0, 37, 100});
  OutputPair out(size_t(m * n) * 2);
  const fp8gemm_bf16_matrix_t d_c = c_of(Bf16Matrix{out.c.get(), m, n, n});
  gemm_fp8_nt_grouped_masked(x.fa, x.sa, x.fb, x.sb, {out.cpp.get(), m, n, n}, masked_m.get<int32_t>(), groups,
                             expected_m);
  expect_success(fp8gemm_gemm_fp8_nt_grouped_masked(&x.ca, &x.csa, &x.cb, &x.csb, &d_c, masked_m.get<int32_t>(), groups,
                                                    expected_m, nullptr));
  expect_identical(out, "gemm_fp8_nt_grouped_masked");
}

TEST_F(GpuCApi, KGroupedWeightGradientIsBitIdentical) {
  // Groups of 200, 0, 384 and 128 columns, each starting on a 128-column boundary; the
  // columns from a group's end to the next boundary are zeros, as the layout requires.
  const std::vector<int32_t> ks = {200, 0, 384, 128};
  const int64_t groups = int64_t(ks.size()), m = 192, n = 260, ld = n + 4;
  int64_t k = 0;
  k_group_starts(ks, &k);
  const CallOperands x(k_grouped_operand(m, k, ks, 1001), k_grouped_operand(n, k, ks, 1002));
  const DeviceBuffer group_k = upload_ints(ks);
  const std::vector<uint8_t> c_values = random_floats(size_t(groups * m * ld), 1003);
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in place" : "no C");
    OutputPair out(in_place ? c_values : std::vector<uint8_t>(c_values.size(), 0xff));
    const Fp32Matrix d_cpp{out.cpp.get<float>(), groups * m, n, ld};
    const fp8gemm_fp32_matrix_t d_c = c_of(Fp32Matrix{out.c.get<float>(), groups * m, n, ld});
    gemm_fp8_nt_wgrad_k_grouped(x.fa, x.sa, x.fb, x.sb, d_cpp, in_place ? &d_cpp : nullptr, group_k.get<int32_t>(),
                                groups);
    expect_success(fp8gemm_gemm_fp8_nt_wgrad_k_grouped(&x.ca, &x.csa, &x.cb, &x.csb, &d_c, in_place ? &d_c : nullptr,
                                                       group_k.get<int32_t>(), groups, nullptr));
    expect_identical(out, "gemm_fp8_nt_wgrad_k_grouped");
  }
}

TEST_F(GpuCApi, QuantizersAreBitIdentical) {
  const int64_t rows = 300, cols = 2056, ld = 2064;
  host::SplitMix64 rng(1234);
  std::vector<uint16_t> x_host(size_t(rows * cols));
  for (uint16_t& v : x_host) v = host::float_to_bf16(float(rng.uniform() * 20 - 10));
  DeviceBuffer x(x_host.size() * 2);
  check(cudaMemcpy(x.get(), x_host.data(), x_host.size() * 2, cudaMemcpyHostToDevice), "upload x");
  const Bf16Input in{x.get(), rows, cols, cols};
  const fp8gemm_bf16_input_t c_in{x.get(), rows, cols, cols};
  for (bool per_block : {false, true}) {
    SCOPED_TRACE(per_block ? "per block" : "per token");
    OutputPair q(size_t(rows * ld)), s(size_t(per_token_scale_stride(rows) * scale_blocks(cols)) * 4);
    const Fp8Output q_cpp{q.cpp.get(), rows, cols, ld};
    const fp8gemm_fp8_output_t q_c{q.c.get(), rows, cols, ld};
    QuantizeOptions options;
    options.pow2_scales = per_block;  // one of each
    fp8gemm_quantize_options_t c_options = fp8gemm_default_quantize_options();
    c_options.pow2_scales = per_block ? 1 : 0;
    if (per_block) {
      quantize_per_block(in, q_cpp, block_scale_output(s.cpp.get<float>(), rows, cols), options);
      const fp8gemm_scale_output_t c_scales = fp8gemm_block_scale_output(s.c.get<float>(), rows, cols);
      expect_success(fp8gemm_quantize_per_block(&c_in, &q_c, &c_scales, &c_options, nullptr));
    } else {
      quantize_per_token(in, q_cpp, per_token_scale_output(s.cpp.get<float>(), rows, cols), options);
      const fp8gemm_scale_output_t c_scales = fp8gemm_per_token_scale_output(s.c.get<float>(), rows, cols);
      expect_success(fp8gemm_quantize_per_token(&c_in, &q_c, &c_scales, &c_options, nullptr));
    }
    expect_identical(q, "quantized bytes");
    expect_identical(s, "scales");
  }
}
