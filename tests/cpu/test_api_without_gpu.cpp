// The public API on a machine without a usable CUDA driver (CI): it loads, explains
// itself, compiles kernels, and refuses GPU work with a clear error.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "driver/driver_api.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "support/expect_invalid.hpp"
#include "support/fake_grouped.hpp"

using namespace fp8gemm;

namespace {
bool have_driver(std::string* why) { return detail::try_driver(why) != nullptr; }

// A [64 x 256] x [128 x 256]^T call's operands at fake device addresses (never read: the
// calls tested here fail before any device work).
struct FakeCall {
  static constexpr int64_t m = 64, n = 128, k = 256;
  Fp8Matrix a{reinterpret_cast<void*>(0x100000000), m, k, k};
  Fp8Matrix b{reinterpret_cast<void*>(0x200000000), n, k, k};
  Bf16Matrix d{reinterpret_cast<void*>(0x300000000), m, n, n};
  Fp32Matrix d32{reinterpret_cast<float*>(0x300000000), m, n, n};
  ScaleMatrix sa = per_token_scales(reinterpret_cast<const float*>(0x400000000), m, k);
  ScaleMatrix sb_blocks = block_scales(reinterpret_cast<const float*>(0x500000000), n, k);
  ScaleMatrix sb_tokens = per_token_scales(reinterpret_cast<const float*>(0x500000000), n, k);
};

using FakeGrouped = fp8gemm::test::GroupedArgs;
}  // namespace

TEST(ApiWithoutGpu, GemmThrowsNoDriverAfterValidation) {
  std::string why;
  if (have_driver(&why)) GTEST_SKIP() << "a CUDA driver is present; this test is for machines without one";
  const FakeCall x;
  try {
    gemm_fp8_nt(x.a, x.sa, x.b, x.sb_blocks, x.d);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == ErrorCode::NoDriver || e.code() == ErrorCode::NoDevice) << e.what();
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1"), std::string::npos) << e.what();
  }
  // Validation comes first: a bad argument is reported as such even without a GPU.
  try {
    gemm_fp8_nt(x.a, x.sa, x.b, x.sb_blocks, Bf16Matrix{nullptr, x.m, x.n, x.n});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
  }
  // M == 0 is a no-op everywhere.
  EXPECT_NO_THROW(gemm_fp8_nt(Fp8Matrix{nullptr, 0, x.k, x.k}, per_token_scales(nullptr, 0, x.k), x.b, x.sb_blocks,
                              Bf16Matrix{nullptr, 0, x.n, x.n}));
}

// A given config is checked before any device work, with or without a GPU.
TEST(ApiWithoutGpu, IllegalConfigIsRejectedBeforeLaunch) {
  const FakeCall x;
  for (const KernelConfig& bad : {KernelConfig{96, 128, 4, 8, 0}, KernelConfig{256, 192, 3, 8, 0},
                                  KernelConfig{128, 120, 4, 8, 0}, KernelConfig{128, 128, 4, 8, 5},
                                  KernelConfig{128, 128, 1, 8, 0}, KernelConfig{128, 48, 4, 8, 0, 1},
                                  KernelConfig{64, 64, 8, 8, 1, -1, 2}, KernelConfig{64, 64, 8, 8, 0, -1, 4},
                                  KernelConfig{128, 128, 4, 8, 0, -5}, KernelConfig{128, 128, 4, 8, 0, 3}}) {
    try {
      gemm_fp8_nt(x.a, x.sa, x.b, x.sb_blocks, x.d, bad);
      FAIL() << "expected an error for block_m " << bad.block_m << " block_n " << bad.block_n;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("config"), std::string::npos) << e.what();
    }
  }
}

// The weight gradient's explicit config: what its kernel lacks (multicast, TMA-store
// epilogue, split-K) and tiles it has no code for are rejected before any device work; a
// legal config reaches the driver.
TEST(ApiWithoutGpu, IllegalWgradConfigIsRejectedBeforeLaunch) {
  const FakeCall x;
  const struct {
    KernelConfig config;
    const char* why;
  } bad[] = {{KernelConfig{256, 128, 3, 8}, "block_m=256 must be 64, 128 or 192"},
             {KernelConfig{128, 208, 3, 8}, "block_n=208 must be at most 192"},
             {KernelConfig{128, 148, 4, 8}, "block_n=148 must be a multiple of 8"},
             {KernelConfig{128, 128, 4, 8, 1}, "no multicast, TMA-store epilogue or split-K"},
             {KernelConfig{128, 128, 4, 8, 0, 1}, "no multicast, TMA-store epilogue or split-K"},
             {KernelConfig{128, 128, 4, 8, 0, -1, 2}, "no multicast, TMA-store epilogue or split-K"},
             {KernelConfig{128, 128, 1, 8}, "stages"}};
  for (const auto& c : bad) {
    try {
      gemm_fp8_nt_wgrad(x.a, x.sa, x.b, x.sb_tokens, x.d32, &x.d32, c.config);
      ADD_FAILURE() << "expected an error for " << c.why;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("gemm_fp8_nt_wgrad: config gemm1d1d_"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.why), std::string::npos) << e.what();
    }
  }
  std::string why;
  if (have_driver(&why)) return;
  for (const KernelConfig& good :
       {KernelConfig{}, KernelConfig{192, 96, 4, 8}, KernelConfig{64, 128, 6, 16}, KernelConfig{128, 152, 4, 8}}) {
    try {
      gemm_fp8_nt_wgrad(x.a, x.sa, x.b, x.sb_tokens, x.d32, nullptr, good);
      ADD_FAILURE() << "expected NoDriver";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::NoDriver) << e.what();
    }
  }
}

TEST(ApiWithoutGpu, QuantizeValidatesThenNeedsADriver) {
  std::string why;
  if (have_driver(&why)) GTEST_SKIP() << "a CUDA driver is present; this test is for machines without one";
  const Bf16Input x{reinterpret_cast<void*>(0x100000000), 64, 256, 256};
  const Fp8Output q{reinterpret_cast<void*>(0x200000000), 64, 256, 256};
  float* s = reinterpret_cast<float*>(0x300000000);
  try {
    quantize_per_token(x, q, per_token_scale_output(s, 64, 256));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == ErrorCode::NoDriver || e.code() == ErrorCode::NoDevice) << e.what();
  }
  try {
    quantize_per_block(x, q, per_token_scale_output(s, 64, 256));  // wrong scale shape
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("quantize_per_block"), std::string::npos) << e.what();
  }
}

// A weight-gradient shape plans (and prewarms) the 1D1D kernel; its own rules apply.
TEST(ApiWithoutGpu, WeightGradientShapesPlanTheirKernel) {
  const GemmShape wgrad{2112, 4096, 7168, GemmKind::WeightGradient};
  EXPECT_EQ(kernel_name(wgrad).rfind("gemm1d1d_n4096_k7168_", 0), 0u) << kernel_name(wgrad);
  EXPECT_EQ(kernel_name(GemmShape{2112, 4096, 7168}).rfind("gemm1d2d_", 0), 0u);
  EXPECT_NO_THROW(kernel_name(GemmShape{64, 4100, 512, GemmKind::WeightGradient}));  // N % 4 suffices
  EXPECT_THROW(kernel_name(GemmShape{64, 4100, 512}), Error);                         // N % 8 for forward
  const PrewarmReport r = prewarm({wgrad, GemmShape{2112, 4096, 7168}});
  EXPECT_EQ(r.kernels, 2u);
}

// A k-grouped shape (m = M, k = all groups' columns, groups) plans the k-grouped kernel: K
// is not in its name, and the mean K per group's power-of-two bucket picks the config, so
// batches whose token counts move within the bucket keep the kernel.
TEST(ApiWithoutGpu, KGroupedShapesPlanTheirKernel) {
  GemmShape s{4096, 7168, 4 * 8192, GemmKind::KGroupedWeightGradient};
  s.groups = 4;
  const std::string name = kernel_name(s);
  EXPECT_EQ(name.rfind("gemm1d1d_kg_n7168_bm", 0), 0u) << name;
  GemmShape t = s;
  t.k = 4 * 7168 + 128;  // another batch, same bucket
  EXPECT_EQ(kernel_name(t), name);
  GemmShape bad = s;
  bad.groups = 0;
  EXPECT_THROW(kernel_name(bad), Error);
  EXPECT_THROW(prewarm({bad}), Error);
  EXPECT_EQ(prewarm({s, t}).kernels, 1u);
}

// The grouped GEMMs: valid arguments get past validation and then need the driver (so the
// rejections of Validation.Grouped* are about the arguments changed there).
// Grouped shapes plan their own kernels; a contiguous problem's total M changes from batch
// to batch, so every M of one power-of-two bucket gets the kernel prewarm compiled for it.
TEST(ApiWithoutGpu, GroupedShapesPlanStableKernels) {
  const std::string gc = kernel_name(GemmShape{32768, 4096, 2048, GemmKind::GroupedContiguous});
  EXPECT_EQ(gc.rfind("gemm1d2d_gc_n4096_k2048_", 0), 0u) << gc;
  EXPECT_EQ(kernel_name(GemmShape{30569, 4096, 2048, GemmKind::GroupedContiguous}), gc);
  EXPECT_EQ(kernel_name(GemmShape{16385, 4096, 2048, GemmKind::GroupedContiguous}), gc);
  const std::string gm = kernel_name(GemmShape{6 * 1024, 4096, 2048, GemmKind::GroupedMasked});
  EXPECT_EQ(gm.rfind("gemm1d2d_gm_n4096_k2048_", 0), 0u) << gm;
  // Masked shapes name their expert count: 32 experts of 20 rows plan 64-row tiles.
  GemmShape small{32 * 20, 4096, 2048, GemmKind::GroupedMasked};
  small.groups = 32;
  EXPECT_NE(kernel_name(small).find("_bm64_"), std::string::npos) << kernel_name(small);
}

TEST(ApiWithoutGpu, GroupedGemmsValidateThenNeedADriver) {
  std::string why;
  if (have_driver(&why)) GTEST_SKIP() << "a CUDA driver is present; this test is for machines without one";
  FakeGrouped x;
  auto expect_no_driver = [](const char* what, const std::function<void()>& call) {
    SCOPED_TRACE(what);
    try {
      call();
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == ErrorCode::NoDriver || e.code() == ErrorCode::NoDevice) << e.what();
    }
  };
  expect_no_driver("contiguous", [&] { x.contiguous(); });
  expect_no_driver("masked", [&] { x.masked(); });
  x.expected_m = 128;
  expect_no_driver("masked, expected_m = max_m", [&] { x.masked(); });
  // A bad argument is reported as such even without a GPU.
  x.expected_m = 0;
  try {
    x.masked();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
  }
}

// The grouped GEMMs' explicit configs: a config the form's kernel does not take is rejected
// before any device work, naming the function and the reason, with or without a GPU; a bad
// argument is still reported first; a legal config reaches the driver.
TEST(ApiWithoutGpu, GroupedConfigsAreCheckedBeforeLaunch) {
  const FakeGrouped x;
  // k-grouped: 4 groups side by side in A [m, K] and B [n, K], D [groups * m, n] fp32.
  const int64_t km = 128, kk = 4 * 256;
  const Fp8Matrix ka{reinterpret_cast<void*>(0x100000000), km, kk, kk};
  const Fp8Matrix kb{reinterpret_cast<void*>(0x200000000), x.n, kk, kk};
  const ScaleMatrix ksa = per_token_scales(reinterpret_cast<const float*>(0x400000000), km, kk);
  const ScaleMatrix ksb = per_token_scales(reinterpret_cast<const float*>(0x500000000), x.n, kk);
  const Fp32Matrix kd{reinterpret_cast<float*>(0x300000000), x.groups * km, x.n, x.n};

  const struct {
    const char* form;
    KernelConfig config;
    const char* why;
  } bad[] = {
      {"contiguous", KernelConfig{192, 128, 4, 8}, "block_m=192 must be 64"},
      {"contiguous", KernelConfig{128, 128, 4, 8, 1}, "only on B (multicast 0 or 2) and has no split-K"},
      {"contiguous", KernelConfig{128, 128, 4, 8, 0, -1, 2}, "only on B (multicast 0 or 2) and has no split-K"},
      {"contiguous", KernelConfig{128, 200, 4, 8}, "block_n=200"},
      {"masked", KernelConfig{192, 64, 4, 8}, "block_m=192 must be 64, 128 or 256"},
      {"masked", KernelConfig{256, 128, 4, 8, 2}, "only on B (multicast 0 or 2, tiles of up to 128 rows)"},
      {"masked", KernelConfig{128, 128, 4, 8, 1}, "only on B (multicast 0 or 2, tiles of up to 128 rows)"},
      {"masked", KernelConfig{128, 128, 4, 8, 0, -1, 2}, "and has no split-K"},
      {"masked", KernelConfig{128, 128, 4, 8, 0, 7}, "tma_store = 7"},
      {"k-grouped", KernelConfig{256, 128, 3, 8}, "block_m=256 must be 64, 128 or 192"},
      {"k-grouped", KernelConfig{128, 128, 4, 8, 0, 1}, "no multicast, TMA-store epilogue or split-K"},
      {"k-grouped", KernelConfig{128, 128, 1, 8}, "stages"},
  };
  auto call = [&](const std::string& form, const KernelConfig& config) {
    if (form == "contiguous") gemm_fp8_nt_grouped_contiguous(x.a, x.sa, x.b, x.sb, x.d, x.index, x.groups, config);
    if (form == "masked") gemm_fp8_nt_grouped_masked(x.a, x.sa, x.b, x.sb, x.d, x.index, x.groups, 64, config);
    if (form == "k-grouped") gemm_fp8_nt_wgrad_k_grouped(ka, ksa, kb, ksb, kd, &kd, x.index, x.groups, config);
  };
  for (const auto& c : bad) {
    SCOPED_TRACE(std::string(c.form) + ": " + c.why);
    const std::string fn = std::string(c.form) == "contiguous" ? "gemm_fp8_nt_grouped_contiguous: config "
                           : std::string(c.form) == "masked"   ? "gemm_fp8_nt_grouped_masked: config "
                                                               : "gemm_fp8_nt_wgrad_k_grouped: config ";
    fp8gemm::test::expect_invalid([&] { call(c.form, c.config); }, c.why, fn);
  }
  // A bad argument comes first (expected_m 0), whatever the config.
  fp8gemm::test::expect_invalid([&] { gemm_fp8_nt_grouped_masked(x.a, x.sa, x.b, x.sb, x.d, x.index, x.groups, 0, KernelConfig{}); },
                                "expected_m = 0");
  // An empty masked call (no rows) does nothing with or without a config, whatever its
  // expected_m (checked only when there is work; no shape is formed from it before).
  {
    fp8gemm::test::GroupedArgs empty;
    empty.set_m(0);
    for (const int64_t expected_m : {int64_t{1}, int64_t{1} << 40, INT64_MAX}) {
      SCOPED_TRACE(expected_m);
      EXPECT_NO_THROW(gemm_fp8_nt_grouped_masked(empty.a, empty.sa, empty.b, empty.sb, empty.d, empty.index,
                                                 empty.groups, expected_m));
      EXPECT_NO_THROW(gemm_fp8_nt_grouped_masked(empty.a, empty.sa, empty.b, empty.sb, empty.d, empty.index,
                                                 empty.groups, expected_m, KernelConfig{128, 192, 4, 8}));
    }
  }
  std::string why;
  if (have_driver(&why)) return;
  auto expect_no_driver = [](const std::function<void()>& f) {
    try {
      f();
      ADD_FAILURE() << "expected NoDriver";
    } catch (const Error& e) {
      EXPECT_TRUE(e.code() == ErrorCode::NoDriver || e.code() == ErrorCode::NoDevice) << e.what();
    }
  };
  for (const char* form : {"contiguous", "masked"})
    for (const KernelConfig& good : {KernelConfig{}, KernelConfig{64, 48, 8, 8}, KernelConfig{128, 192, 4, 8, 0, 1}}) {
      SCOPED_TRACE(form);
      expect_no_driver([&] { call(form, good); });
    }
  for (const KernelConfig& good : {KernelConfig{256, 128, 3, 8}, KernelConfig{128, 192, 4, 4, 2, 1}})
    expect_no_driver([&] { call("masked", good); });
  for (const KernelConfig& good : {KernelConfig{}, KernelConfig{128, 192, 3, 8}, KernelConfig{64, 128, 6, 16}})
    expect_no_driver([&] { call("k-grouped", good); });
}

TEST(ApiWithoutGpu, InfoDescribesTheMachine) {
  const RuntimeInfo info = runtime_info();
  EXPECT_EQ(info.library_version, FP8GEMM_VERSION_STRING);
  EXPECT_FALSE(info.nvrtc_version.empty());
  EXPECT_FALSE(info.cache_dir.empty());
  EXPECT_FALSE(info.driver.empty());
  std::string why;
  if (!have_driver(&why)) {
    EXPECT_EQ(info.driver_version, 0);
    EXPECT_TRUE(info.devices.empty());
  }
}

TEST(ApiWithoutGpu, PrewarmCompilesWithoutAGpu) {
  PrewarmOptions options;
  options.jobs = 2;
  options.num_sms = 132;
  size_t callbacks = 0;
  options.on_progress = [&](const PrewarmProgress& p) {
    ++callbacks;
    EXPECT_LE(p.done, p.total);
    EXPECT_FALSE(p.kernel.empty());
  };
  const std::vector<GemmShape> shapes = {{1, 256, 512}, {200, 512, 512}, {0, 256, 512}, {1, 256, 512}};
  const PrewarmReport r = prewarm(shapes, options);
  EXPECT_EQ(r.shapes, 4u);
  EXPECT_EQ(r.kernels, 2u);  // M = 0 needs none, the repeated shape none extra
  EXPECT_EQ(r.compiled + r.from_disk + r.from_memory, r.kernels);
  EXPECT_EQ(callbacks, 2u);  // one per distinct non-empty shape
  const PrewarmReport again = prewarm(shapes, options);
  EXPECT_EQ(again.from_memory, again.kernels);
  EXPECT_EQ(again.compiled, 0u);
  EXPECT_THROW(prewarm({{1, 250, 512}}, options), Error);  // N % 8
  EXPECT_THROW(prewarm({{-1, 256, 512}}, options), Error);
}

// Option values outside their documented ranges are rejected, not read as a default.
TEST(ApiWithoutGpu, PrewarmAndTuneOptionsAreChecked) {
  const std::vector<GemmShape> shapes = {{1, 256, 512}};
  const auto rejected = [](const std::function<void()>& call, const std::string& needle) {
    fp8gemm::test::expect_invalid(call, needle);
  };
  for (const int sms : {-5, 1025, 1 << 30}) {
    PrewarmOptions o;
    o.num_sms = sms;
    rejected([&] { prewarm(shapes, o); }, "num_sms = " + std::to_string(sms));
  }
  PrewarmOptions o;
  o.jobs = -1;
  rejected([&] { prewarm(shapes, o); }, "jobs = -1");
  TuneOptions t;
  t.jobs = -2;
  rejected([&] { tune(shapes, t); }, "jobs=-2");
  const FakeCall x;
  rejected([&] { gemm_fp8_nt_wgrad(x.a, x.sa, x.b, x.sb_tokens, x.d32, nullptr, KernelConfig{128, 128, 4, 8, 0, -7}); },
           "tma_store = -7");
}

// PrewarmReport::compiled_and_skipped counts this prewarm's passed-over candidates, not what
// other threads compile meanwhile (it took the difference of the process's compile counter).
TEST(ApiWithoutGpu, PrewarmCountsOnlyItsOwnCompiles) {
  // N drawn anew each run, so that both threads really compile (not read an earlier run's entries).
  const int64_t base = 8 * (131072 + std::random_device{}() % 131072);
  std::atomic<bool> done{false};
  std::thread other([&] {
    for (int64_t i = 0; !done.load() && i < 12; ++i) kernel_name(GemmShape{64, base + 64 + 8 * i, 384});
  });
  PrewarmOptions options;
  options.num_sms = 132;
  options.jobs = 1;
  const PrewarmReport r = prewarm({{8, base, 384}, {8, base + 8, 384}, {8, base + 16, 384}}, options);
  done.store(true);
  other.join();
  EXPECT_EQ(r.compiled_and_skipped, 0u);
  EXPECT_EQ(r.kernels, 3u);
}

// An exception from on_progress stops the prewarm and reaches the caller, from the calling
// thread or a worker alike; the kernels built before it stay in the cache.
TEST(ApiWithoutGpu, PrewarmProgressCallbackMayThrow) {
  const std::vector<GemmShape> shapes = {{1, 256, 512}, {200, 512, 512}, {64, 768, 512}, {64, 1024, 512}};
  for (const int jobs : {1, 2}) {
    SCOPED_TRACE(jobs);
    PrewarmOptions options;
    options.jobs = jobs;
    options.num_sms = 132;
    int calls = 0;
    options.on_progress = [&](const PrewarmProgress&) {
      ++calls;
      throw std::runtime_error("cancelled by the caller");
    };
    try {
      prewarm(shapes, options);
      ADD_FAILURE() << "the callback's exception was swallowed";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "cancelled by the caller");
    }
    EXPECT_GE(calls, 1);
    EXPECT_LE(calls, jobs);  // each worker stops after the shape it was on
  }
  PrewarmOptions quiet;
  quiet.num_sms = 132;
  EXPECT_EQ(prewarm(shapes, quiet).kernels, 4u);
}

// GemmOptions::b_constant at decode sizes runs the "_cb" variant of the planned kernel, which
// prewarm builds on request; large M and the other kinds keep their kernel.
TEST(ApiWithoutGpu, ConstantBVariantIsNamedAndPrewarmed) {
  const GemmShape decode{1, 32768, 512}, large{4096, 32768, 512};
  const std::string plain = kernel_name(decode);
  EXPECT_EQ(kernel_name(decode, GemmOptions{}), plain);
  EXPECT_EQ(kernel_name(decode, GemmOptions{true}), plain + "_cb");
  EXPECT_EQ(kernel_name(large, GemmOptions{true}), kernel_name(large));
  const GemmShape wgrad{64, 4096, 512, GemmKind::WeightGradient};
  EXPECT_EQ(kernel_name(wgrad, GemmOptions{true}), kernel_name(wgrad));
  // The variant kernel_name names is built (compiled, or read from disk) as the plan's kernel
  // is: a usable kernel (it was named without being compiled). N differs in every run of the
  // test in one process (--gtest_repeat), so that the variant is never already in memory.
  static std::atomic<int> runs{0};
  const GemmShape odd{1, 7176 + 8 * runs++, 2048};
  const std::string odd_plain = kernel_name(odd);
  const Stats before = stats();
  EXPECT_EQ(kernel_name(odd, GemmOptions{true}), odd_plain + "_cb");
  const Stats after = stats();
  EXPECT_EQ(after.kernels_compiled + after.disk_hits, before.kernels_compiled + before.disk_hits + 1);
  PrewarmOptions options;
  options.num_sms = 132;
  options.b_constant = true;
  const PrewarmReport r = prewarm({decode, large}, options);
  EXPECT_EQ(r.kernels, 3u);  // the two planned kernels and one variant
  EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), plain + "_cb"), r.kernel_names.end());
}
