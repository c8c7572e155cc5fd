// The C API (fp8gemm.h) without a GPU: every entry point rejects bad arguments with
// FP8GEMM_ERROR_INVALID_ARGUMENT and a message naming the rule, passes valid ones on to the
// C++ API (the GPU calls then need a driver), and the calls that need no GPU work. Nothing
// the C++ API throws crosses the C boundary.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "fp8gemm/fp8gemm.h"
#include "fp8gemm/fp8gemm.hpp"
#include "support/temp_dir.hpp"

namespace {

std::string message() { return fp8gemm_last_error_message(); }

// `status` is InvalidArgument and this thread's message contains `needle`.
// `value` as a caller built against a later header passes it: followed by a field this version
// does not know (`later_field`), its struct_size that of the whole.
template <typename T, typename Field>
struct LaterStruct {
  T value;
  Field later_field;
};
template <typename T, typename Field>
LaterStruct<T, Field> later(T value, Field later_field) {
  LaterStruct<T, Field> s{value, later_field};
  s.value.struct_size = sizeof s;
  return s;
}

// A copy of `v` with `change` applied: one rule broken, everything else left valid.
template <typename T, typename Change>
T changed(T v, Change&& change) {
  change(v);
  return v;
}

void expect_invalid(fp8gemm_status_t status, const std::string& needle) {
  EXPECT_EQ(status, FP8GEMM_ERROR_INVALID_ARGUMENT) << message();
  EXPECT_NE(message().find(needle), std::string::npos) << "message: " << message() << "\nwanted: " << needle;
}

bool have_driver() {
  fp8gemm_runtime_info_t info = fp8gemm_default_runtime_info();
  return fp8gemm_runtime_info(&info, nullptr, nullptr, nullptr) == FP8GEMM_SUCCESS && info.driver_version != 0;
}

// Valid arguments got past validation and then needed the driver this machine lacks.
void expect_no_driver(fp8gemm_status_t status) {
  EXPECT_TRUE(status == FP8GEMM_ERROR_NO_DRIVER || status == FP8GEMM_ERROR_NO_DEVICE)
      << fp8gemm_status_string(status) << ": " << message();
  if (status == FP8GEMM_ERROR_NO_DRIVER) {
    EXPECT_NE(message().find("libcuda.so.1"), std::string::npos) << message();
  }
}

#define SKIP_WITH_A_DRIVER() \
  if (have_driver()) GTEST_SKIP() << "a CUDA driver is present; this test is for machines without one"

// Fake, aligned device addresses 4 GiB apart (no overlaps): nothing dereferences them
// without a driver.
template <typename T = void>
T* fake(uint64_t slot) {
  return reinterpret_cast<T*>(uintptr_t(slot) << 32);
}

// A valid dense problem (M = 64, N = 128, K = 256) in C descriptors.
struct Dense {
  int64_t m = 64, n = 128, k = 256;
  fp8gemm_fp8_matrix_t a{fake(1), m, k, k};
  fp8gemm_fp8_matrix_t b{fake(2), n, k, k};
  fp8gemm_bf16_matrix_t d{fake(3), m, n, n};
  fp8gemm_scale_matrix_t sa = fp8gemm_per_token_scales(fake<float>(4), m, k);
  fp8gemm_scale_matrix_t sb = fp8gemm_block_scales(fake<float>(5), n, k);
  fp8gemm_status_t run() const { return fp8gemm_gemm_fp8_nt(&a, &sa, &b, &sb, &d, nullptr); }
};

// A valid weight-gradient problem: fp32 D, per-token scales on both operands.
struct Wgrad {
  int64_t m = 64, n = 132, k = 256;
  fp8gemm_fp8_matrix_t a{fake(1), m, k, k};
  fp8gemm_fp8_matrix_t b{fake(2), n, k, k};
  fp8gemm_fp32_matrix_t d{fake<float>(3), m, n, n};
  fp8gemm_scale_matrix_t sa = fp8gemm_per_token_scales(fake<float>(4), m, k);
  fp8gemm_scale_matrix_t sb = fp8gemm_per_token_scales(fake<float>(5), n, k);
  fp8gemm_status_t run(const fp8gemm_fp32_matrix_t* c = nullptr) const {
    return fp8gemm_gemm_fp8_nt_wgrad(&a, &sa, &b, &sb, &d, c, nullptr);
  }
};

// G experts of the m-grouped GEMMs: A [G * 128, K], B [G * N, K], D [G * 128, N].
struct Grouped {
  int64_t groups = 4, n = 264, k = 528, m = 4 * 128;
  fp8gemm_fp8_matrix_t a{fake(1), m, k, k};
  fp8gemm_fp8_matrix_t b{fake(2), groups * n, k, k};
  fp8gemm_bf16_matrix_t d{fake(3), m, n, n};
  fp8gemm_scale_matrix_t sa = fp8gemm_per_token_scales(fake<float>(4), m, k);
  fp8gemm_scale_matrix_t sb{fake<float>(5), groups * fp8gemm_scale_blocks(n), fp8gemm_scale_blocks(k),
                            fp8gemm_scale_blocks(k), 1};
  const int32_t* index = fake<int32_t>(6);
  fp8gemm_status_t contiguous() const {
    return fp8gemm_gemm_fp8_nt_grouped_contiguous(&a, &sa, &b, &sb, &d, index, groups, nullptr);
  }
  fp8gemm_status_t masked(int64_t expected_m) const {
    return fp8gemm_gemm_fp8_nt_grouped_masked(&a, &sa, &b, &sb, &d, index, groups, expected_m, nullptr);
  }
};

// A valid k-grouped weight gradient: 3 groups over K = 768 columns, D [3 * M, N].
struct KGrouped {
  int64_t groups = 3, m = 128, n = 256, k = 768;
  fp8gemm_fp8_matrix_t a{fake(1), m, k, k};
  fp8gemm_fp8_matrix_t b{fake(2), n, k, k};
  fp8gemm_fp32_matrix_t d{fake<float>(3), groups * m, n, n};
  fp8gemm_scale_matrix_t sa = fp8gemm_per_token_scales(fake<float>(4), m, k);
  fp8gemm_scale_matrix_t sb = fp8gemm_per_token_scales(fake<float>(5), n, k);
  const int32_t* group_k = fake<int32_t>(6);
  fp8gemm_status_t run(const fp8gemm_fp32_matrix_t* c = nullptr) const {
    return fp8gemm_gemm_fp8_nt_wgrad_k_grouped(&a, &sa, &b, &sb, &d, c, group_k, groups, nullptr);
  }
};

// A valid per-token quantization of x [300, 2056].
struct Quant {
  fp8gemm_bf16_input_t x{fake(1), 300, 2056, 2056};
  fp8gemm_fp8_output_t q{fake(2), 300, 2056, 2064};
  fp8gemm_scale_output_t s = fp8gemm_per_token_scale_output(fake<float>(3), 300, 2056);
};

}  // namespace

TEST(CApi, StatusValuesAreFixed) {
  // The numbers are ABI: they never change.
  EXPECT_EQ(FP8GEMM_SUCCESS, 0);
  EXPECT_EQ(FP8GEMM_ERROR_INVALID_ARGUMENT, 1);
  EXPECT_EQ(FP8GEMM_ERROR_NO_DRIVER, 2);
  EXPECT_EQ(FP8GEMM_ERROR_NO_DEVICE, 3);
  EXPECT_EQ(FP8GEMM_ERROR_UNSUPPORTED_DEVICE, 4);
  EXPECT_EQ(FP8GEMM_ERROR_COMPILE_FAILED, 5);
  EXPECT_EQ(FP8GEMM_ERROR_CUDA, 6);
  EXPECT_EQ(FP8GEMM_ERROR_INTERNAL, 7);
  EXPECT_EQ(FP8GEMM_ERROR_NOT_CACHED, 8);
  EXPECT_EQ(FP8GEMM_ERROR_OUT_OF_MEMORY, 9);
  EXPECT_EQ(FP8GEMM_ERROR_BUFFER_TOO_SMALL, 10);
  // One status per ErrorCode, described as the C++ API describes it.
  using fp8gemm::ErrorCode;
  const std::pair<fp8gemm_status_t, ErrorCode> pairs[] = {
      {FP8GEMM_ERROR_INVALID_ARGUMENT, ErrorCode::InvalidArgument}, {FP8GEMM_ERROR_NO_DRIVER, ErrorCode::NoDriver},
      {FP8GEMM_ERROR_NO_DEVICE, ErrorCode::NoDevice}, {FP8GEMM_ERROR_UNSUPPORTED_DEVICE, ErrorCode::UnsupportedDevice},
      {FP8GEMM_ERROR_COMPILE_FAILED, ErrorCode::CompileFailed}, {FP8GEMM_ERROR_CUDA, ErrorCode::CudaError},
      {FP8GEMM_ERROR_INTERNAL, ErrorCode::Internal}, {FP8GEMM_ERROR_NOT_CACHED, ErrorCode::NotCached}};
  for (const auto& [status, code] : pairs) EXPECT_STREQ(fp8gemm_status_string(status), fp8gemm::to_string(code));
  EXPECT_STREQ(fp8gemm_status_string(FP8GEMM_SUCCESS), "success");
  EXPECT_STREQ(fp8gemm_status_string(FP8GEMM_ERROR_OUT_OF_MEMORY), "out of memory");
  EXPECT_STREQ(fp8gemm_status_string(static_cast<fp8gemm_status_t>(1000)), "unknown status");
  EXPECT_STREQ(fp8gemm_status_string(static_cast<fp8gemm_status_t>(-1)), "unknown status");
}

// A C caller may pass any int where the header names an enum: in C++ the enums' underlying
// type is int, so every such number is a value of the type (without it, a number outside the
// enumerators' range read as the enum before the library's range check is undefined
// behaviour). The numbers the library does not know are answered as such.
static_assert(std::is_same_v<std::underlying_type_t<fp8gemm_status_t>, int>);
static_assert(std::is_same_v<std::underlying_type_t<fp8gemm_gemm_kind_t>, int>);
static_assert(std::is_same_v<std::underlying_type_t<fp8gemm_tuning_mode_t>, int>);
static_assert(sizeof(fp8gemm_status_t) == sizeof(int));

TEST(CApi, VersionIsTheHeaders) {
  int major = -1, minor = -1, patch = -1;
  ASSERT_EQ(fp8gemm_version(&major, &minor, &patch), FP8GEMM_SUCCESS);
  EXPECT_EQ(major, FP8GEMM_VERSION_MAJOR);
  EXPECT_EQ(minor, FP8GEMM_VERSION_MINOR);
  EXPECT_EQ(patch, FP8GEMM_VERSION_PATCH);
  EXPECT_EQ(fp8gemm_version(nullptr, nullptr, nullptr), FP8GEMM_SUCCESS);
  EXPECT_STREQ(fp8gemm_version_string(), FP8GEMM_VERSION_STRING);
}

// The message belongs to the thread and to its last status-returning call.
TEST(CApi, MessageIsPerThreadAndClearedBySuccess) {
  Dense bad;
  bad.k = bad.a.cols = bad.b.cols = 250;
  expect_invalid(bad.run(), "K = 250 is not a multiple of 16");
  EXPECT_NE(message().find("gemm_fp8_nt"), std::string::npos) << message();
  std::string other = "unset";
  std::thread([&] { other = fp8gemm_last_error_message(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_EQ(fp8gemm_version(nullptr, nullptr, nullptr), FP8GEMM_SUCCESS);
  EXPECT_STREQ(fp8gemm_last_error_message(), "");
}

TEST(CApi, DenseGemm) {
  Dense v;
  EXPECT_EQ(fp8gemm_gemm_fp8_nt(nullptr, &v.sa, &v.b, &v.sb, &v.d, nullptr), FP8GEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(message().find("fp8gemm_gemm_fp8_nt: a is NULL"), std::string::npos) << message();
  expect_invalid(fp8gemm_gemm_fp8_nt(&v.a, nullptr, &v.b, &v.sb, &v.d, nullptr), "a_scales is NULL");
  expect_invalid(fp8gemm_gemm_fp8_nt(&v.a, &v.sa, nullptr, &v.sb, &v.d, nullptr), "b is NULL");
  expect_invalid(fp8gemm_gemm_fp8_nt(&v.a, &v.sa, &v.b, nullptr, &v.d, nullptr), "b_scales is NULL");
  expect_invalid(fp8gemm_gemm_fp8_nt(&v.a, &v.sa, &v.b, &v.sb, nullptr, nullptr), "d is NULL");
  Dense t = v;
  t.d.data = nullptr;
  expect_invalid(t.run(), "d.data is null");
  t = v;
  t.a.cols = t.b.cols = t.a.ld = t.b.ld = 264;
  expect_invalid(t.run(), "K = 264 is not a multiple of 16");
  t = v;
  t.a.ld = 264;
  expect_invalid(t.run(), "a.ld = 264 must be >= K = 256 and a multiple of 16");
  t = v;
  t.a.rows = -1;
  expect_invalid(t.run(), "A has negative size");
  t = v;
  t.sa.row_stride = t.sa.cols;
  t.sa.col_stride = 1;
  expect_invalid(t.run(), "must be M-major");
  // M == 0 does nothing, successfully, with or without a GPU.
  t = v;
  t.a.rows = t.d.rows = t.sa.rows = 0;
  EXPECT_EQ(t.run(), FP8GEMM_SUCCESS) << message();
  EXPECT_STREQ(fp8gemm_last_error_message(), "");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(v.run());
}

TEST(CApi, DenseGemmWithOptions) {
  Dense v;
  fp8gemm_gemm_options_t options = fp8gemm_default_gemm_options();
  EXPECT_EQ(options.struct_size, sizeof(fp8gemm_gemm_options_t));
  EXPECT_EQ(options.b_constant, 0);
  auto run = [&](const Dense& p, const fp8gemm_gemm_options_t* o) {
    return fp8gemm_gemm_fp8_nt_with_options(&p.a, &p.sa, &p.b, &p.sb, &p.d, o, nullptr);
  };
  fp8gemm_gemm_options_t unset = options;
  unset.struct_size = 0;  // forgotten
  expect_invalid(run(v, &unset), "options->struct_size = 0 is smaller than any version");
  Dense t = v;
  t.d.ld = 132;
  expect_invalid(run(t, &options), "d.ld = 132 must be >= N = 128 and a multiple of 8");
  expect_invalid(fp8gemm_gemm_fp8_nt_with_options(&v.a, &v.sa, &v.b, &v.sb, nullptr, &options, nullptr), "d is NULL");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(run(v, nullptr));  // NULL: the defaults
  options.b_constant = 1;
  expect_no_driver(run(v, &options));
}

TEST(CApi, DenseGemmWithConfig) {
  Dense v;
  auto run = [&](const fp8gemm_kernel_config_t* c) {
    return fp8gemm_gemm_fp8_nt_with_config(&v.a, &v.sa, &v.b, &v.sb, &v.d, c, nullptr);
  };
  expect_invalid(run(nullptr), "config is NULL");
  fp8gemm_kernel_config_t config = fp8gemm_default_kernel_config();
  // The same defaults (the C and C++ structs name their fields alike).
  auto fields = [](const auto& c) {
    return std::tuple{c.block_m, c.block_n, c.stages, c.group_n, c.multicast, c.tma_store, c.split_k};
  };
  EXPECT_EQ(fields(config), fields(fp8gemm::KernelConfig{}));
  fp8gemm_kernel_config_t illegal = config;
  illegal.block_m = 96;
  expect_invalid(run(&illegal), "gemm_fp8_nt: config");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(run(&config));
}

TEST(CApi, WeightGradientWithConfig) {
  Wgrad v;
  auto run = [&](const fp8gemm_kernel_config_t* c) {
    return fp8gemm_gemm_fp8_nt_wgrad_with_config(&v.a, &v.sa, &v.b, &v.sb, &v.d, &v.d, c, nullptr);
  };
  expect_invalid(run(nullptr), "config is NULL");
  fp8gemm_kernel_config_t config = fp8gemm_default_kernel_config();
  fp8gemm_kernel_config_t illegal = config;
  illegal.multicast = 1;
  expect_invalid(run(&illegal), "gemm_fp8_nt_wgrad: config");
  expect_invalid(fp8gemm_gemm_fp8_nt_wgrad_with_config(&v.a, &v.sa, &v.b, &v.sb, nullptr, nullptr, &config, nullptr),
                 "d is NULL");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(run(&config));
  config.block_m = 192;
  config.block_n = 96;
  expect_no_driver(run(&config));
}

// The grouped GEMMs' _with_config entry points: NULL and illegal configs rejected (the
// config is checked by the C++ overloads), NULL operands as in the calls without config.
TEST(CApi, GroupedGemmsWithConfig) {
  const Grouped g;
  const KGrouped kg;
  fp8gemm_kernel_config_t config = fp8gemm_default_kernel_config();
  auto contiguous = [&](const fp8gemm_kernel_config_t* c) {
    return fp8gemm_gemm_fp8_nt_grouped_contiguous_with_config(&g.a, &g.sa, &g.b, &g.sb, &g.d, g.index, g.groups, c,
                                                              nullptr);
  };
  auto masked = [&](const fp8gemm_kernel_config_t* c) {
    return fp8gemm_gemm_fp8_nt_grouped_masked_with_config(&g.a, &g.sa, &g.b, &g.sb, &g.d, g.index, g.groups, 64, c,
                                                          nullptr);
  };
  auto k_grouped = [&](const fp8gemm_kernel_config_t* c) {
    return fp8gemm_gemm_fp8_nt_wgrad_k_grouped_with_config(&kg.a, &kg.sa, &kg.b, &kg.sb, &kg.d, &kg.d, kg.group_k,
                                                           kg.groups, c, nullptr);
  };
  expect_invalid(contiguous(nullptr), "config is NULL");
  expect_invalid(masked(nullptr), "config is NULL");
  expect_invalid(k_grouped(nullptr), "config is NULL");
  fp8gemm_kernel_config_t illegal = config;
  illegal.multicast = 1;
  expect_invalid(contiguous(&illegal), "gemm_fp8_nt_grouped_contiguous: config");
  expect_invalid(masked(&illegal), "gemm_fp8_nt_grouped_masked: config");
  expect_invalid(k_grouped(&illegal), "gemm_fp8_nt_wgrad_k_grouped: config");
  expect_invalid(fp8gemm_gemm_fp8_nt_grouped_contiguous_with_config(&g.a, &g.sa, &g.b, &g.sb, nullptr, g.index,
                                                                    g.groups, &config, nullptr),
                 "d is NULL");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(contiguous(&config));
  expect_no_driver(masked(&config));
  expect_no_driver(k_grouped(&config));
}

TEST(CApi, WeightGradient) {
  Wgrad v;
  expect_invalid(fp8gemm_gemm_fp8_nt_wgrad(&v.a, &v.sa, nullptr, &v.sb, &v.d, nullptr, nullptr), "b is NULL");
  Wgrad t = v;
  t.n = t.b.rows = t.d.cols = t.sb.rows = 130;
  t.d.ld = 132;
  expect_invalid(t.run(), "N = 130 is not a multiple of 4");
  const fp8gemm_fp32_matrix_t wrong_c{fake<float>(7), v.m, v.n - 4, v.n};
  expect_invalid(v.run(&wrong_c), "C is [64, 128] but must be [M, N] = [64, 132]");
  t = v;
  t.sb = fp8gemm_block_scales(fake<float>(5), v.n, v.k);  // 128x128 scales where per-token ones belong
  expect_invalid(t.run(), "b_scales is [2, 2] but must be [132, ceil(K/128)]");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(v.run());
  expect_no_driver(v.run(&v.d));  // in place
  const fp8gemm_fp32_matrix_t c{fake<float>(7), v.m, v.n, v.n};
  expect_no_driver(v.run(&c));
}

TEST(CApi, GroupedContiguous) {
  Grouped v;
  expect_invalid(fp8gemm_gemm_fp8_nt_grouped_contiguous(&v.a, &v.sa, &v.b, &v.sb, nullptr, v.index, v.groups,
                                                       nullptr),
                 "fp8gemm_gemm_fp8_nt_grouped_contiguous: d is NULL");
  const Grouped rows_500 = changed(v, [](Grouped& t) {
    t.a.rows = t.d.rows = t.sa.rows = 500;
    t.sa.col_stride = fp8gemm_per_token_scale_stride(500);
  });
  expect_invalid(rows_500.contiguous(), "A has 500 rows, not a multiple of 128");
  expect_invalid(changed(v, [](Grouped& t) { t.groups = 0; }).contiguous(),
                 "groups = 0: there must be at least one expert");
  expect_invalid(changed(v, [](Grouped& t) { t.index = nullptr; }).contiguous(), "group_of_row is null");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(v.contiguous());
}

TEST(CApi, GroupedMasked) {
  Grouped v;
  expect_invalid(v.masked(0), "expected_m = 0 must be in [1, max_m = 128]");
  expect_invalid(changed(v, [](Grouped& t) { t.b.rows = 3 * t.n; }).masked(64), "the 4 experts' [N, K] matrices stacked");
  expect_invalid(changed(v, [](Grouped& t) { t.index = nullptr; }).masked(64), "masked_m is null");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(v.masked(64));
  expect_no_driver(v.masked(128));
}

TEST(CApi, KGroupedWeightGradient) {
  KGrouped v;
  expect_invalid(fp8gemm_gemm_fp8_nt_wgrad_k_grouped(&v.a, nullptr, &v.b, &v.sb, &v.d, nullptr, v.group_k, v.groups,
                                                    nullptr),
                 "a_scales is NULL");
  expect_invalid(changed(v, [](KGrouped& t) { t.groups = 0; }).run(), "groups = 0: there must be at least one group");
  expect_invalid(changed(v, [](KGrouped& t) { t.d.rows = t.m; }).run(), "must be [groups * M, N] = [384, 256]");
  expect_invalid(changed(v, [](KGrouped& t) { t.group_k = nullptr; }).run(), "group_k is null");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(v.run());
  expect_no_driver(v.run(&v.d));
}

TEST(CApi, Quantizers) {
  using Fn = fp8gemm_status_t (*)(const fp8gemm_bf16_input_t*, const fp8gemm_fp8_output_t*,
                                  const fp8gemm_scale_output_t*, const fp8gemm_quantize_options_t*, fp8gemm_stream_t);
  const struct {
    Fn fn;
    const char* name;
  } quantizers[] = {{fp8gemm_quantize_per_token, "quantize_per_token"},
                    {fp8gemm_quantize_per_block, "quantize_per_block"},
                    {fp8gemm_quantize_transposed_per_token, "quantize_transposed_per_token"}};
  for (const auto& quantizer : quantizers) {
    SCOPED_TRACE(quantizer.name);
    Quant v;
    if (quantizer.fn == fp8gemm_quantize_per_block) v.s = fp8gemm_block_scale_output(fake<float>(3), 300, 2056);
    if (quantizer.fn == fp8gemm_quantize_transposed_per_token) {
      v.q = {fake(2), 2056, 300, 304};
      v.s = fp8gemm_per_token_scale_output(fake<float>(3), 2056, 300);
    }
    expect_invalid(quantizer.fn(nullptr, &v.q, &v.s, nullptr, nullptr), "x is NULL");
    expect_invalid(quantizer.fn(&v.x, nullptr, &v.s, nullptr, nullptr), "q is NULL");
    expect_invalid(quantizer.fn(&v.x, &v.q, nullptr, nullptr, nullptr), "scales is NULL");
    Quant t = v;
    t.x.rows = -1;
    expect_invalid(quantizer.fn(&t.x, &t.q, &t.s, nullptr, nullptr), "x has negative size");
    t = v;
    t.x.ld = 2060;
    expect_invalid(quantizer.fn(&t.x, &t.q, &t.s, nullptr, nullptr), "x.ld = 2060");
    t = v;
    t.q.data = nullptr;
    expect_invalid(quantizer.fn(&t.x, &t.q, &t.s, nullptr, nullptr), "q.data is null");
    fp8gemm_quantize_options_t options = fp8gemm_default_quantize_options();
    options.struct_size = 4;
    expect_invalid(quantizer.fn(&v.x, &v.q, &v.s, &options, nullptr), "options->struct_size = 4");
    if (have_driver()) continue;
    expect_no_driver(quantizer.fn(&v.x, &v.q, &v.s, nullptr, nullptr));
    options = fp8gemm_default_quantize_options();
    options.pow2_scales = 1;
    expect_no_driver(quantizer.fn(&v.x, &v.q, &v.s, &options, nullptr));
  }
  Quant v;  // per-token scales given to the per-block quantizer
  expect_invalid(fp8gemm_quantize_per_block(&v.x, &v.q, &v.s, nullptr, nullptr), "must be [3, 17]");
}

TEST(CApi, TransposeAndConvertScales) {
  const int64_t n = 300, k = 2064;
  const fp8gemm_fp8_matrix_t w{fake(1), n, k, k};
  const fp8gemm_scale_matrix_t ws = fp8gemm_block_scales(fake<float>(2), n, k);
  const fp8gemm_fp8_output_t wt{fake(3), k, n, 304};
  const fp8gemm_scale_output_t wts = fp8gemm_block_scale_output(fake<float>(4), k, n);
  expect_invalid(fp8gemm_transpose_fp8_block_scaled(&w, &ws, nullptr, &wts, nullptr), "wt is NULL");
  const fp8gemm_fp8_output_t untransposed{fake(3), n, k, k};
  expect_invalid(fp8gemm_transpose_fp8_block_scaled(&w, &ws, &untransposed, &wts, nullptr), "transpose of w");
  const fp8gemm_fp8_output_t bad_ld{fake(3), k, n, 300};
  expect_invalid(fp8gemm_transpose_fp8_block_scaled(&w, &ws, &bad_ld, &wts, nullptr), "wt.ld = 300");
  // Per-token scales stored K-major, converted into the M-major layout the GEMM reads.
  const fp8gemm_scale_matrix_t k_major{fake<float>(5), 300, 17, 17, 1};
  const fp8gemm_scale_output_t m_major = fp8gemm_per_token_scale_output(fake<float>(6), 300, 2056);
  expect_invalid(fp8gemm_convert_scales(nullptr, &m_major, nullptr), "in is NULL");
  const fp8gemm_scale_output_t wrong{fake<float>(6), 300, 16, 1, 300};
  expect_invalid(fp8gemm_convert_scales(&k_major, &wrong, nullptr), "out is [300, 16] but in is [300, 17]");
  const fp8gemm_scale_output_t null_out{nullptr, 300, 17, 1, 300};
  expect_invalid(fp8gemm_convert_scales(&k_major, &null_out, nullptr), "convert_scales: out.data is null");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(fp8gemm_transpose_fp8_block_scaled(&w, &ws, &wt, &wts, nullptr));
  expect_no_driver(fp8gemm_convert_scales(&k_major, &m_major, nullptr));
}

// The name goes into the caller's buffer; the size it needs comes back either way.
TEST(CApi, KernelNameWritesIntoCallerBuffer) {
  const fp8gemm_gemm_shape_t shape = fp8gemm_make_gemm_shape(1, 32768, 512, FP8GEMM_GEMM_FORWARD, 1);
  const std::string want = fp8gemm::kernel_name(fp8gemm::GemmShape{1, 32768, 512});
  size_t needed = 0;
  ASSERT_EQ(fp8gemm_kernel_name(&shape, nullptr, nullptr, 0, &needed), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(needed, want.size() + 1);
  std::vector<char> buffer(needed);
  ASSERT_EQ(fp8gemm_kernel_name(&shape, nullptr, buffer.data(), buffer.size(), nullptr), FP8GEMM_SUCCESS);
  EXPECT_EQ(std::string(buffer.data()), want);
  // Too small: as much as fits, NUL-terminated, and a status saying so.
  char small[9];
  EXPECT_EQ(fp8gemm_kernel_name(&shape, nullptr, small, sizeof small, &needed), FP8GEMM_ERROR_BUFFER_TOO_SMALL);
  EXPECT_EQ(std::string(small), want.substr(0, 8));
  EXPECT_EQ(needed, want.size() + 1);
  EXPECT_NE(message().find("the name needs"), std::string::npos) << message();
  // A real buffer with capacity 0: not a byte written, not even the NUL.
  char guard[16];
  std::memset(guard, 'X', sizeof guard);
  EXPECT_EQ(fp8gemm_kernel_name(&shape, nullptr, guard + 4, 0, &needed), FP8GEMM_ERROR_BUFFER_TOO_SMALL);
  EXPECT_EQ(std::string(guard, sizeof guard), std::string(sizeof guard, 'X'));
  EXPECT_EQ(needed, want.size() + 1);
  EXPECT_NE(message().find("the buffer holds 0"), std::string::npos) << message();
  // With options: b_constant at decode size names the "_cb" variant.
  fp8gemm_gemm_options_t options = fp8gemm_default_gemm_options();
  options.b_constant = 1;
  ASSERT_EQ(fp8gemm_kernel_name(&shape, &options, buffer.data(), buffer.size(), &needed),
            FP8GEMM_ERROR_BUFFER_TOO_SMALL);  // three more characters
  buffer.resize(needed);
  ASSERT_EQ(fp8gemm_kernel_name(&shape, &options, buffer.data(), buffer.size(), nullptr), FP8GEMM_SUCCESS);
  EXPECT_EQ(std::string(buffer.data()), want + "_cb");
  // Bad arguments.
  expect_invalid(fp8gemm_kernel_name(nullptr, nullptr, nullptr, 0, &needed), "shape is NULL");
  expect_invalid(fp8gemm_kernel_name(&shape, nullptr, nullptr, 16, &needed), "buffer is NULL but capacity = 16");
  fp8gemm_gemm_shape_t bad = shape;
  bad.n = 32764;
  expect_invalid(fp8gemm_kernel_name(&bad, nullptr, nullptr, 0, &needed), "needs N % 8 == 0");
  bad = shape;
  bad.m = 0;
  expect_invalid(fp8gemm_kernel_name(&bad, nullptr, nullptr, 0, &needed), "runs no kernel");
  bad = shape;
  bad.struct_size = 8;
  expect_invalid(fp8gemm_kernel_name(&bad, nullptr, nullptr, 0, &needed), "shape->struct_size = 8");
  bad = shape;
  bad.kind = static_cast<fp8gemm_gemm_kind_t>(9);
  expect_invalid(fp8gemm_kernel_name(&bad, nullptr, nullptr, 0, &needed), "unknown GemmShape kind 9");
}

namespace {

void count_progress(const fp8gemm_prewarm_progress_t* p, void* user) {
  EXPECT_EQ(p->struct_size, sizeof(fp8gemm_prewarm_progress_t));
  EXPECT_LE(p->done, p->total);
  EXPECT_NE(std::string(p->kernel), "");
  ++*static_cast<size_t*>(user);
}

}  // namespace

TEST(CApi, PrewarmReportsIntoThreadLocalStrings) {
  const fp8gemm_gemm_shape_t shapes[] = {fp8gemm_make_gemm_shape(1, 256, 512, FP8GEMM_GEMM_FORWARD, 1),
                                         fp8gemm_make_gemm_shape(200, 512, 512, FP8GEMM_GEMM_FORWARD, 1),
                                         fp8gemm_make_gemm_shape(0, 256, 512, FP8GEMM_GEMM_FORWARD, 1),
                                         fp8gemm_make_gemm_shape(64, 4100, 512, FP8GEMM_GEMM_WEIGHT_GRADIENT, 1)};
  fp8gemm_prewarm_options_t options = fp8gemm_default_prewarm_options();
  options.jobs = 2;
  options.num_sms = 132;
  size_t progress = 0;
  options.on_progress = count_progress;
  options.user_data = &progress;
  fp8gemm_prewarm_report_t report = fp8gemm_default_prewarm_report();
  ASSERT_EQ(fp8gemm_prewarm(shapes, 4, &options, &report), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(report.struct_size, sizeof report);
  EXPECT_EQ(report.shapes, 4u);
  EXPECT_EQ(report.kernels, 3u);
  EXPECT_EQ(report.num_sms, 132);
  EXPECT_EQ(progress, 3u);  // one per distinct non-empty shape
  ASSERT_EQ(report.kernel_name_count, 3u);
  // The C++ call names the same kernels (in the order its workers finished them).
  const fp8gemm::PrewarmReport cpp = fp8gemm::prewarm(
      {{1, 256, 512}, {200, 512, 512}, {0, 256, 512}, {64, 4100, 512, fp8gemm::GemmKind::WeightGradient}});
  std::vector<std::string> names(report.kernel_names, report.kernel_names + report.kernel_name_count);
  std::vector<std::string> cpp_names = cpp.kernel_names;
  std::sort(names.begin(), names.end());
  std::sort(cpp_names.begin(), cpp_names.end());
  EXPECT_EQ(names, cpp_names);
  EXPECT_EQ(report.not_saved, cpp.not_saved);
  EXPECT_EQ(std::string(report.not_saved_reason), cpp.not_saved_reason);
  // NULL options and report, no shapes: fine.
  EXPECT_EQ(fp8gemm_prewarm(shapes, 1, nullptr, nullptr), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(fp8gemm_prewarm(nullptr, 0, nullptr, &report), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(report.shapes, 0u);
  EXPECT_EQ(report.kernel_name_count, 0u);
  // Bad arguments, all before anything is compiled.
  expect_invalid(fp8gemm_prewarm(nullptr, 2, nullptr, nullptr), "shapes is NULL but count = 2");
  fp8gemm_gemm_shape_t bad[2] = {shapes[0], fp8gemm_make_gemm_shape(1, 250, 512, FP8GEMM_GEMM_FORWARD, 1)};
  expect_invalid(fp8gemm_prewarm(bad, 2, nullptr, nullptr), "prewarm: shape m=1 n=250 k=512 needs N % 8 == 0");
  bad[1] = fp8gemm_make_gemm_shape(-1, 256, 512, FP8GEMM_GEMM_FORWARD, 1);
  expect_invalid(fp8gemm_prewarm(bad, 2, nullptr, nullptr), "has a negative size");
  bad[1] = shapes[1];
  bad[1].struct_size = 16;
  expect_invalid(fp8gemm_prewarm(bad, 2, nullptr, nullptr), "shapes[1].struct_size = 16 differs");
  fp8gemm_prewarm_report_t unset = report;
  unset.struct_size = 0;
  expect_invalid(fp8gemm_prewarm(shapes, 1, nullptr, &unset), "report->struct_size = 0");
}

// A caller built against a later header passes larger structs: the library reads its own
// fields (array elements at the caller's stride) and writes nothing past its own size.
TEST(CApi, LargerStructsOfALaterHeader) {
  auto shape = later(fp8gemm_make_gemm_shape(1, 256, 512, FP8GEMM_GEMM_FORWARD, 1), int64_t{-1});
  decltype(shape) shapes[2] = {shape, shape};
  shapes[1].value.m = 200;
  shapes[1].value.n = 512;
  auto report = later(fp8gemm_default_prewarm_report(), uint64_t{0x5a5a5a5a5a5a5a5aull});
  ASSERT_EQ(fp8gemm_prewarm(&shapes[0].value, 2, nullptr, &report.value), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(report.value.kernels, 2u);  // both elements read at the caller's stride
  EXPECT_EQ(report.value.struct_size, sizeof report);
  EXPECT_EQ(report.later_field, 0x5a5a5a5a5a5a5a5aull);
  auto stats = later(fp8gemm_default_stats(), uint64_t{7});
  ASSERT_EQ(fp8gemm_stats(&stats.value), FP8GEMM_SUCCESS);
  EXPECT_EQ(stats.later_field, 7u);
}

namespace {

struct Collected {
  std::vector<std::string> devices, settings;
};

void collect_device(const fp8gemm_device_info_t* d, void* user) {
  static_cast<Collected*>(user)->devices.push_back(d->name);
}

void collect_setting(const fp8gemm_setting_t* s, void* user) {
  EXPECT_EQ(s->struct_size, sizeof(fp8gemm_setting_t));
  static_cast<Collected*>(user)->settings.push_back(std::string(s->name) + "=" + s->value + " (" + s->source + ")");
}

}  // namespace

TEST(CApi, RuntimeInfoAndStats) {
  expect_invalid(fp8gemm_runtime_info(nullptr, nullptr, nullptr, nullptr), "info is NULL");
  fp8gemm_runtime_info_t info = fp8gemm_default_runtime_info();
  info.struct_size = 3;
  expect_invalid(fp8gemm_runtime_info(&info, nullptr, nullptr, nullptr), "info->struct_size = 3");
  info = fp8gemm_default_runtime_info();
  Collected collected;
  ASSERT_EQ(fp8gemm_runtime_info(&info, collect_device, collect_setting, &collected), FP8GEMM_SUCCESS) << message();
  const fp8gemm::RuntimeInfo cpp = fp8gemm::runtime_info();
  EXPECT_STREQ(info.library_version, FP8GEMM_VERSION_STRING);
  EXPECT_EQ(info.nvrtc_version, cpp.nvrtc_version);
  EXPECT_EQ(info.cache_dir, cpp.cache_dir);
  EXPECT_EQ(info.cache_state, cpp.cache_state);
  EXPECT_EQ(info.driver, cpp.driver);
  EXPECT_EQ(info.driver_version, cpp.driver_version);
  EXPECT_EQ(info.device_count, cpp.devices.size());
  EXPECT_EQ(collected.devices.size(), cpp.devices.size());
  ASSERT_EQ(info.setting_count, cpp.settings.size());
  ASSERT_EQ(collected.settings.size(), cpp.settings.size());
  for (size_t i = 0; i < cpp.settings.size(); ++i)
    EXPECT_EQ(collected.settings[i],
              cpp.settings[i].name + "=" + cpp.settings[i].value + " (" + cpp.settings[i].source + ")");
  if (!have_driver()) {
    EXPECT_EQ(info.device_count, 0u);
  }

  expect_invalid(fp8gemm_stats(nullptr), "stats is NULL");
  fp8gemm_stats_t stats = fp8gemm_default_stats();
  ASSERT_EQ(fp8gemm_stats(&stats), FP8GEMM_SUCCESS);
  // The C++ counters, field by field (named alike in both structs).
  auto fields = [](const auto& x) {
    return std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>{
        x.gemm_calls, x.kernels_compiled, x.problems_tuned, x.tuned_plans, x.disk_hits, x.disk_rejected,
        x.modules_loaded};
  };
  EXPECT_EQ(fields(stats), fields(fp8gemm::stats()));
}

TEST(CApi, TuningModeAndCacheOnly) {
  fp8gemm_tuning_mode_t before = FP8GEMM_TUNING_ON;
  ASSERT_EQ(fp8gemm_get_tuning_mode(&before), FP8GEMM_SUCCESS);
  EXPECT_EQ(int(before), int(fp8gemm::tuning_mode()));
  expect_invalid(fp8gemm_get_tuning_mode(nullptr), "mode is NULL");
  expect_invalid(fp8gemm_set_tuning_mode(static_cast<fp8gemm_tuning_mode_t>(7)), "7 is not Off, Cached or On");
  for (fp8gemm_tuning_mode_t mode : {FP8GEMM_TUNING_OFF, FP8GEMM_TUNING_ON, FP8GEMM_TUNING_CACHED}) {
    ASSERT_EQ(fp8gemm_set_tuning_mode(mode), FP8GEMM_SUCCESS);
    fp8gemm_tuning_mode_t now = FP8GEMM_TUNING_OFF;
    ASSERT_EQ(fp8gemm_get_tuning_mode(&now), FP8GEMM_SUCCESS);
    EXPECT_EQ(now, mode);
    EXPECT_EQ(int(fp8gemm::tuning_mode()), int(mode));
  }
  fp8gemm_set_tuning_mode(before);

  int cache_only = -1;
  expect_invalid(fp8gemm_get_cache_only(nullptr), "cache_only is NULL");
  ASSERT_EQ(fp8gemm_set_cache_only(1), FP8GEMM_SUCCESS);
  ASSERT_EQ(fp8gemm_get_cache_only(&cache_only), FP8GEMM_SUCCESS);
  EXPECT_EQ(cache_only, 1);
  EXPECT_TRUE(fp8gemm::cache_only());
  // Cache-only and a kernel no test compiles: NotCached, naming the way out.
  const fp8gemm_gemm_shape_t uncached = fp8gemm_make_gemm_shape(3, 8 * 977, 16 * 433, FP8GEMM_GEMM_FORWARD, 1);
  size_t needed = 0;
  EXPECT_EQ(fp8gemm_kernel_name(&uncached, nullptr, nullptr, 0, &needed), FP8GEMM_ERROR_NOT_CACHED) << message();
  EXPECT_NE(message().find("fp8gemm prewarm"), std::string::npos) << message();
  ASSERT_EQ(fp8gemm_set_cache_only(0), FP8GEMM_SUCCESS);
  ASSERT_EQ(fp8gemm_get_cache_only(&cache_only), FP8GEMM_SUCCESS);
  EXPECT_EQ(cache_only, 0);
}

TEST(CApi, TuneValidatesThenNeedsAGpu) {
  size_t results = 99;
  EXPECT_EQ(fp8gemm_tune(nullptr, 0, nullptr, nullptr, nullptr, &results), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(results, 0u);
  const fp8gemm_gemm_shape_t bad = fp8gemm_make_gemm_shape(64, 4096, 7000, FP8GEMM_GEMM_FORWARD, 1);
  expect_invalid(fp8gemm_tune(&bad, 1, nullptr, nullptr, nullptr, nullptr), "tune: shape m=64 n=4096 k=7000");
  const fp8gemm_gemm_shape_t shape = fp8gemm_make_gemm_shape(64, 4096, 7168, FP8GEMM_GEMM_FORWARD, 1);
  fp8gemm_tune_options_t options = fp8gemm_default_tune_options();
  EXPECT_EQ(options.candidates, fp8gemm::TuneOptions{}.candidates);
  options.candidates = 0;
  expect_invalid(fp8gemm_tune(&shape, 1, &options, nullptr, nullptr, nullptr), "candidates=0 must be at least 1");
  SKIP_WITH_A_DRIVER();
  expect_no_driver(fp8gemm_tune(&shape, 1, nullptr, nullptr, nullptr, &results));
}

// The cache listing reads the test's cache directory; clearing nothing removes nothing.
TEST(CApi, CacheListing) {
  const fp8gemm_gemm_shape_t shape = fp8gemm_make_gemm_shape(1, 256, 512, FP8GEMM_GEMM_FORWARD, 1);
  ASSERT_EQ(fp8gemm_prewarm(&shape, 1, nullptr, nullptr), FP8GEMM_SUCCESS) << message();
  size_t count = 0;
  ASSERT_EQ(fp8gemm_cached_kernels(nullptr, nullptr, &count), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(count, fp8gemm::cached_kernels().size());
  ASSERT_EQ(fp8gemm_cached_tuning_databases(nullptr, nullptr, &count), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(count, fp8gemm::cached_tuning_databases().size());
  fp8gemm_cache_clear_report_t report = fp8gemm_default_cache_clear_report();
  report.kernels = 99;
  ASSERT_EQ(fp8gemm_clear_cache(0, 0, &report), FP8GEMM_SUCCESS) << message();
  EXPECT_EQ(report.kernels + report.tuning_files + report.other + report.failed_count, 0u);
  EXPECT_EQ(fp8gemm_clear_cache(0, 0, nullptr), FP8GEMM_SUCCESS);
  report.struct_size = 1;
  expect_invalid(fp8gemm_clear_cache(0, 0, &report), "fp8gemm_clear_cache: report->struct_size = 1");
  expect_invalid(fp8gemm_clear_stale_cache(&report), "fp8gemm_clear_stale_cache: report->struct_size = 1");
}

namespace {

// Prewarms into a fresh cache directory, lists it and clears it, in a process of its own:
// the cache directory is chosen once per process. Reports on stderr; exits 0 if all held.
[[noreturn]] void cache_round_trip_in_own_process() {
  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "FAILED: %s (last message: %s)\n", what.c_str(), fp8gemm_last_error_message());
      ++failures;
    }
  };
  {
    fp8gemm::test::TempDir dir;
    ::setenv("FP8GEMM_CACHE_DIR", dir.path().c_str(), 1);
    fp8gemm_runtime_info_t info = fp8gemm_default_runtime_info();
    check(fp8gemm_runtime_info(&info, nullptr, nullptr, nullptr) == FP8GEMM_SUCCESS, "runtime_info");
    if (dir.path() != info.cache_dir) {  // never clear any other directory
      std::fprintf(stderr, "FAILED: the cache directory is %s, not the fresh %s\n", info.cache_dir, dir.path().c_str());
      ::_exit(1);
    }
    const fp8gemm_gemm_shape_t shapes[] = {fp8gemm_make_gemm_shape(1, 256, 512, FP8GEMM_GEMM_FORWARD, 1),
                                           fp8gemm_make_gemm_shape(64, 512, 256, FP8GEMM_GEMM_WEIGHT_GRADIENT, 1)};
    fp8gemm_prewarm_options_t options = fp8gemm_default_prewarm_options();
    options.num_sms = 132;
    fp8gemm_prewarm_report_t report = fp8gemm_default_prewarm_report();
    check(fp8gemm_prewarm(shapes, 2, &options, &report) == FP8GEMM_SUCCESS, "prewarm");
    check(report.kernels == 2 && report.compiled == 2 && report.not_saved == 0, "two kernels compiled and saved");
    std::vector<std::string> listed;
    size_t count = 0;
    check(fp8gemm_cached_kernels(
              [](const fp8gemm_cached_kernel_t* k, void* user) {
                static_cast<std::vector<std::string>*>(user)->push_back(std::string(k->kernel) + " " + k->category +
                                                                        " " + k->status + (k->stale ? " stale" : ""));
              },
              &listed, &count) == FP8GEMM_SUCCESS,
          "cached_kernels");
    // Candidates the planner compiled and passed over are on disk too.
    const size_t files = report.kernel_name_count + report.compiled_and_skipped;
    check(count == files && listed.size() == files, "every compiled kernel listed");
    for (const std::string& line : listed) check(line.find(" entry ok") != std::string::npos, "an ok entry: " + line);
    for (size_t i = 0; i < report.kernel_name_count; ++i) {
      const std::string name = report.kernel_names[i];
      bool found = false;
      for (const std::string& line : listed) found = found || line.rfind(name + " ", 0) == 0;
      check(found, "prewarmed kernel listed: " + name);
    }
    check(fp8gemm_cached_tuning_databases(nullptr, nullptr, &count) == FP8GEMM_SUCCESS && count == 0,
          "no tuning database");
    fp8gemm_cache_clear_report_t cleared = fp8gemm_default_cache_clear_report();
    check(fp8gemm_clear_stale_cache(&cleared) == FP8GEMM_SUCCESS && cleared.kernels == 0 && cleared.other == 0,
          "nothing stale");
    check(fp8gemm_clear_cache(1, 1, &cleared) == FP8GEMM_SUCCESS && cleared.kernels == files &&
              cleared.failed_count == 0,
          "every kernel cleared");
    check(fp8gemm_cached_kernels(nullptr, nullptr, &count) == FP8GEMM_SUCCESS && count == 0, "the cache is empty");
  }
  std::fprintf(stderr, failures == 0 ? "cache round trip passed\n" : "cache round trip failed\n");
  ::_exit(failures == 0 ? 0 : 1);
}

}  // namespace

TEST(CApi, PrewarmListAndClearATempCacheDir) {
  // "threadsafe" re-executes this test binary for the child: a fresh process whose library
  // has not chosen its cache directory yet.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(cache_round_trip_in_own_process(), testing::ExitedWithCode(0), "cache round trip passed");
}

namespace {

// Callbacks of a C++ caller may throw; what they throw ends as a status, never unwinds into C.
template <typename Throw>
fp8gemm_status_t runtime_info_throwing(Throw thrower) {
  static Throw* current;
  current = &thrower;
  fp8gemm_runtime_info_t info = fp8gemm_default_runtime_info();
  return fp8gemm_runtime_info(&info, nullptr, [](const fp8gemm_setting_t*, void*) { (*current)(); }, nullptr);
}

}  // namespace

TEST(CApi, NoExceptionCrossesTheBoundary) {
  EXPECT_EQ(runtime_info_throwing([] { throw std::bad_alloc(); }), FP8GEMM_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(message().find("out of memory"), std::string::npos) << message();
  EXPECT_EQ(runtime_info_throwing([] { throw std::runtime_error("callback broke"); }), FP8GEMM_ERROR_INTERNAL);
  EXPECT_NE(message().find("internal error: callback broke"), std::string::npos) << message();
  EXPECT_EQ(runtime_info_throwing([] { throw 42; }), FP8GEMM_ERROR_INTERNAL);
  EXPECT_NE(message().find("unknown type"), std::string::npos) << message();
  EXPECT_EQ(runtime_info_throwing([] { throw fp8gemm::Error(fp8gemm::ErrorCode::CompileFailed, "log"); }),
            FP8GEMM_ERROR_COMPILE_FAILED);
  EXPECT_NE(message().find("kernel compile failed: log"), std::string::npos) << message();
}
