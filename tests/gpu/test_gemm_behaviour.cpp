// What callers rely on besides the numbers: bad input launches nothing, M = 0 is a
// no-op, streams and threads, CUDA graph capture, no recompiles on repeat calls, and
// GemmOptions::b_constant.

#include <cuda.h>
#include <cudaTypedefs.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "common/quantize_host.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

class GpuBehaviour : public Sm90Test {};

// Operands, reference and output of one problem, ready to call.
struct Problem {
  int64_t m, n, k;
  DeviceOperand a, b;
  DeviceBuffer ref;
  GuardedOutput out;

  Problem(int64_t m_, int64_t n_, int64_t k_, uint64_t seed) : m(m_), n(n_), k(k_) {
    a = upload(host::random_operand(m, k, k, true, seed));
    b = upload(host::random_operand(n, k, k, false, seed + 1));
    ref = DeviceBuffer(size_t(m * n) * 8);
    reference_gemm(a, b, ref.get<double>());
    out = make_output(m, n, n);
  }
  Fp8Matrix fa() const { return {a.data.get(), m, k, k}; }
  Fp8Matrix fb() const { return {b.data.get(), n, k, k}; }
  ScaleMatrix sa() const { return per_token_scales(a.scales.get<float>(), m, k); }
  ScaleMatrix sb() const { return block_scales(b.scales.get<float>(), n, k); }
  Bf16Matrix d() const { return {out.d(), m, n, n}; }
  void run(Stream stream = nullptr, GemmOptions options = {}) const {
    gemm_fp8_nt(fa(), sa(), fb(), sb(), d(), options, stream);
  }
  std::vector<uint16_t> download_d() const {
    std::vector<uint16_t> h(size_t(out.total()));
    check(cudaMemcpy(h.data(), out.buffer.get(), h.size() * 2, cudaMemcpyDeviceToHost), "download D");
    return h;
  }
  void expect_correct() const {
    const DeviceComparison c = compare(out, ref.get<double>());
    EXPECT_LT(c.rel_error, 1e-2) << c.describe();
    EXPECT_EQ(c.non_finite, 0u) << c.describe();
    EXPECT_EQ(c.touched_outside, 0u) << c.describe();
  }
};

}  // namespace

TEST_F(GpuBehaviour, BadInputLaunchesNothingAndLeavesDUntouched) {
  Problem p(128, 256, 512, 5);
  p.run();  // the kernel exists: a bad call below could otherwise launch it
  check(cudaDeviceSynchronize(), "warm-up");
  poison(p.out);
  const auto expect_invalid = [&](const std::function<void()>& call, const char* needle) {
    try {
      call();
      ADD_FAILURE() << "accepted; expected an error mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  char* a_bytes = p.a.data.get<char>();
  expect_invalid([&] { gemm_fp8_nt({nullptr, 128, 512, 512}, p.sa(), p.fb(), p.sb(), p.d()); }, "a.data is null");
  expect_invalid([&] { gemm_fp8_nt({a_bytes + 8, 128, 512, 512}, p.sa(), p.fb(), p.sb(), p.d()); }, "a.data");
  expect_invalid([&] { gemm_fp8_nt({a_bytes, 128, 512, 520}, p.sa(), p.fb(), p.sb(), p.d()); }, "a.ld");
  expect_invalid([&] { gemm_fp8_nt(p.fa(), p.sa(), p.fb(), p.sb(), {p.out.d(), 128, 256, 260}); }, "d.ld");
  expect_invalid([&] { gemm_fp8_nt({a_bytes, 128, 504, 512}, p.sa(), {p.b.data.get(), 256, 504, 512}, p.sb(), p.d()); },
                 "multiple of 16");
  expect_invalid([&] { gemm_fp8_nt(p.fa(), p.sa(), {p.b.data.get(), 252, 512, 512}, p.sb(), {p.out.d(), 128, 252, 256}); },
                 "multiple of 8");
  expect_invalid([&] { gemm_fp8_nt({a_bytes, -128, 512, 512}, p.sa(), p.fb(), p.sb(), p.d()); }, "negative");
  expect_invalid([&] {
    ScaleMatrix k_major{p.a.scales.get<float>(), 128, 4, 4, 1};
    gemm_fp8_nt(p.fa(), k_major, p.fb(), p.sb(), p.d());
  }, "M-major");
  expect_invalid([&] {
    ScaleMatrix wrong = p.sb();
    wrong.rows = 1;
    gemm_fp8_nt(p.fa(), p.sa(), p.fb(), wrong, p.d());
  }, "b_scales is [1");
  check(cudaDeviceSynchronize(), "sync");
  EXPECT_TRUE(all_poisoned(p.out)) << "a rejected call wrote to D";
}

TEST_F(GpuBehaviour, ZeroMIsANoOp) {
  GuardedOutput out = make_output(1, 256, 256);
  EXPECT_NO_THROW(gemm_fp8_nt({nullptr, 0, 512, 512}, per_token_scales(nullptr, 0, 512),
                              {out.d(), 256, 512, 512},  // never read
                              block_scales(reinterpret_cast<const float*>(out.d()), 256, 512), {nullptr, 0, 256, 256}));
  check(cudaDeviceSynchronize(), "sync");
  EXPECT_TRUE(all_poisoned(out));
}

TEST_F(GpuBehaviour, RepeatCallsDoNotRecompileOrReload) {
  Problem p(256, 1024, 1024, 9);
  p.run();
  check(cudaDeviceSynchronize(), "first call");
  const Stats before = stats();
  for (int i = 0; i < 5; ++i) p.run();
  check(cudaDeviceSynchronize(), "repeat calls");
  const Stats after = stats();
  EXPECT_EQ(after.kernels_compiled, before.kernels_compiled);
  EXPECT_EQ(after.modules_loaded, before.modules_loaded);
  EXPECT_EQ(after.gemm_calls, before.gemm_calls + 5);
  p.expect_correct();
}

// A context destroyed and a new one created on the same thread (cuCtxDestroy, or
// cudaDeviceReset for the primary context; the new handle may be the old one's): the
// library loads its kernel into the new context, rather than launching the dead one's
// module, and the results are right in every round.
TEST_F(GpuBehaviour, NewContextAfterTheOldOneIsDestroyed) {
  auto entry = [](const char* name, int version) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const bool ok = cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found) == cudaSuccess &&
                    found == cudaDriverEntryPointSuccess;
    return ok ? fn : nullptr;
  };
  const auto create = reinterpret_cast<PFN_cuCtxCreate_v3020>(entry("cuCtxCreate", 3020));
  const auto destroy = reinterpret_cast<PFN_cuCtxDestroy_v4000>(entry("cuCtxDestroy", 4000));
  const auto get_current = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(entry("cuCtxGetCurrent", 4000));
  const auto set_current = reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(entry("cuCtxSetCurrent", 4000));
  const auto get_device = reinterpret_cast<PFN_cuCtxGetDevice_v2000>(entry("cuCtxGetDevice", 2000));
  ASSERT_TRUE(create && destroy && get_current && set_current && get_device) << "driver entry points";
  check(cudaFree(nullptr), "primary context");
  CUcontext primary = nullptr;
  CUdevice device = 0;
  ASSERT_EQ(get_current(&primary), CUDA_SUCCESS);
  ASSERT_EQ(get_device(&device), CUDA_SUCCESS);
  std::string handles;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    CUcontext context = nullptr;
    ASSERT_EQ(create(&context, 0, device), CUDA_SUCCESS);  // and current on this thread
    handles += (round ? ", " : "") + std::to_string(reinterpret_cast<uintptr_t>(context));
    const uint64_t loaded = stats().modules_loaded;
    {
      Problem p(128, 256, 512, 40 + static_cast<uint64_t>(round));
      p.run();
      check(cudaDeviceSynchronize(), "the GEMM in a new context");
      p.expect_correct();
    }
    EXPECT_GT(stats().modules_loaded, loaded) << "no module was loaded into the new context";
    ASSERT_EQ(destroy(context), CUDA_SUCCESS);
  }
  ASSERT_EQ(set_current(primary), CUDA_SUCCESS);
  std::printf("  context handles: %s\n", handles.c_str());
}

TEST_F(GpuBehaviour, ThreadsAndStreams) {
  std::vector<std::unique_ptr<Problem>> problems;
  const int64_t shapes[][3] = {{1, 2112, 7168}, {129, 576, 7168}, {1000, 4096, 1024}, {64, 7168, 2048}};
  for (int i = 0; i < 4; ++i)
    problems.push_back(std::make_unique<Problem>(shapes[i][0], shapes[i][1], shapes[i][2], 40 + i));
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      try {
        cudaStream_t s;
        check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
        for (int r = 0; r < 3; ++r) problems[i]->run(s);
        check(cudaStreamSynchronize(s), "sync");
        cudaStreamDestroy(s);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(errors[i], "") << "thread " << i;
    problems[i]->expect_correct();
  }
}

TEST_F(GpuBehaviour, CudaGraphCaptureAndReplay) {
  Problem p(200, 1024, 2048, 77);
  p.run();  // load the kernel before capture
  check(cudaDeviceSynchronize(), "warm-up");
  const TestStream s;
  poison(p.out, s);
  const CapturedGraph graph(s, [&] { p.run(s); });
  check(cudaStreamSynchronize(s), "sync");
  EXPECT_TRUE(all_poisoned(p.out)) << "capture must not execute";
  for (int replay = 0; replay < 2; ++replay) {
    poison(p.out, s);
    graph.replay(s);
    p.expect_correct();
  }
}

// PyTorch captures graphs in cudaStreamCaptureModeGlobal: meanwhile another thread's first
// call of a new shape (compile, module load, plan) must neither fail nor invalidate the
// capture, and both results must be right.
TEST_F(GpuBehaviour, FirstCallBesideAGlobalModeCapture) {
  Problem p(200, 1024, 2048, 94), q(96, 1344, 2944, 95);  // q: a shape no other test uses
  p.run();  // p's kernel loaded before the capture
  check(cudaDeviceSynchronize(), "warm-up");
  const TestStream s, t;
  poison(p.out, s);
  poison(q.out, t);
  check(cudaDeviceSynchronize(), "poison");
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "begin capture");
  p.run(s);
  std::string other_error;
  std::thread other([&] {
    try {
      q.run(t);
    } catch (const std::exception& e) {
      other_error = e.what();
    }
  });
  other.join();
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(s, &graph);
  EXPECT_EQ(ended, cudaSuccess) << cudaGetErrorString(ended) << " (the other thread's first call invalidated it)";
  EXPECT_EQ(other_error, "") << "the first call beside the capture";
  if (ended == cudaSuccess) {
    cudaGraphExec_t exec = nullptr;
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    check(cudaGraphLaunch(exec, s), "replay");
    check(cudaStreamSynchronize(s), "replay");
    cudaGraphExecDestroy(exec);
    p.expect_correct();
  }
  if (graph != nullptr) cudaGraphDestroy(graph);
  cudaGetLastError();
  check(cudaStreamSynchronize(t), "the other thread's call");
  if (other_error.empty()) q.expect_correct();
}

// Tuning mode On tunes a problem's first call (operands allocated, the context synchronized,
// candidates compiled and timed): never while the call's stream is being captured (the
// capture would be invalidated), nor in cache-only mode (nothing may compile). Those first
// calls plan as in mode Cached.
struct ModesRestored {
  TuningMode mode = tuning_mode();
  bool cache_only_was = cache_only();
  ~ModesRestored() {
    set_tuning_mode(mode);
    set_cache_only(cache_only_was);
  }
};

TEST_F(GpuBehaviour, TuningModeOnDoesNotTuneInsideACapture) {
  const ModesRestored restore;
  Problem warm(200, 1088, 2304, 91), p(201, 1088, 2304, 92);
  set_tuning_mode(TuningMode::Off);
  warm.run();  // this shape's kernel loaded (M = 201 plans the same one)
  check(cudaDeviceSynchronize(), "warm-up");
  set_tuning_mode(TuningMode::On);
  const uint64_t tuned = stats().problems_tuned;
  const TestStream s;
  poison(p.out, s);
  const CapturedGraph graph(s, [&] { p.run(s); });  // M = 201: a first call, in the capture
  EXPECT_EQ(stats().problems_tuned, tuned);
  graph.replay(s);
  p.expect_correct();
}

TEST_F(GpuBehaviour, TuningModeOnCompilesNothingInCacheOnlyMode) {
  const ModesRestored restore;
  Problem p(128, 1216, 2432, 93);  // a shape no other test uses
  set_cache_only(true);
  set_tuning_mode(TuningMode::On);
  const Stats before = stats();
  try {
    p.run();  // runs if an earlier run left its kernel in the disk cache
    check(cudaDeviceSynchronize(), "run");
    p.expect_correct();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotCached) << e.what();
  }
  EXPECT_EQ(stats().kernels_compiled, before.kernels_compiled);
  EXPECT_EQ(stats().problems_tuned, before.problems_tuned);
}

// GemmOptions::b_constant (B loaded before the previous kernel has finished, at M <= 128):
// the same bits as without it, on the kernel families the planner picks at decode sizes
// (split-K pairs, B multicast, several tiles per CTA, tails).
TEST_F(GpuBehaviour, ConstantBGivesTheSameBits) {
  struct Shape {
    int64_t m, n, k;
  };
  int variants = 0;  // shapes whose call with the option runs a constant-B ("_cb") kernel
  for (const Shape& s : {Shape{1, 32768, 512}, Shape{64, 4096, 7168}, Shape{128, 7168, 2048}, Shape{128, 2112, 7168},
                         Shape{77, 392, 1040}, Shape{200, 1024, 2048}}) {
    SCOPED_TRACE(testing::Message() << s.m << "x" << s.n << "x" << s.k);
    const std::string name = kernel_name(GemmShape{s.m, s.n, s.k}, GemmOptions{true});
    variants += name.size() > 3 && name.compare(name.size() - 3, 3, "_cb") == 0;
    Problem p(s.m, s.n, s.k, uint64_t(s.m * 7 + s.n));
    p.run();
    check(cudaDeviceSynchronize(), "without the option");
    p.expect_correct();
    const std::vector<uint16_t> plain = p.download_d();
    // Back to back, so that each call starts while the one before still runs.
    poison(p.out);
    for (int i = 0; i < 3; ++i) p.run(nullptr, GemmOptions{true});
    check(cudaDeviceSynchronize(), "with the option");
    p.expect_correct();
    EXPECT_TRUE(p.download_d() == plain) << "b_constant changed D";
  }
  EXPECT_GE(variants, 2) << "the shapes no longer exercise the constant-B variant";
}

// With b_constant, A is still read only after the kernel before has finished: A is
// quantized by the kernel launched just before each GEMM, from two inputs in turn.
TEST_F(GpuBehaviour, ConstantBStillWaitsForA) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{64, 4096, 7168}, {1, 32768, 512}}) {
    SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k);
    const DeviceOperand b = upload(host::random_operand(n, k, k, false, 3));
    std::vector<host::Bf16Host> x(2);
    std::vector<DeviceBuffer> dx, ref;
    for (int v = 0; v < 2; ++v) {
      x[v].rows = m;
      x[v].cols = x[v].ld = k;
      x[v].data.resize(size_t(m * k));
      host::SplitMix64 rng(uint64_t(v + 1));
      for (uint16_t& e : x[v].data) e = host::float_to_bf16(float((rng.uniform() * 2 - 1) * std::ldexp(1.0, v * 4)));
      dx.emplace_back(x[v].data.size() * 2);
      check(cudaMemcpy(dx[v].get(), x[v].data.data(), x[v].data.size() * 2, cudaMemcpyHostToDevice), "upload x");
      ref.emplace_back(size_t(m * n) * 8);
      const DeviceOperand a = upload(host::quantize_per_token_ref(x[v], false));
      reference_gemm(a, b, ref[v].get<double>());
      check(cudaDeviceSynchronize(), "reference");
    }
    const int64_t ldq = (k + 15) / 16 * 16;
    DeviceBuffer qa(size_t(m * ldq)), sa(size_t(per_token_scale_stride(m) * scale_blocks(k)) * 4);
    GuardedOutput out = make_output(m, n, n);
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
    for (int i = 0; i < 6; ++i) {
      const int v = i % 2;
      poison(out, s);
      quantize_per_token({dx[v].get(), m, k, k}, {qa.get(), m, k, ldq}, per_token_scale_output(sa.get<float>(), m, k),
                         {}, s);
      gemm_fp8_nt({qa.get(), m, k, ldq}, per_token_scales(sa.get<float>(), m, k), {b.data.get(), n, k, k},
                  block_scales(b.scales.get<float>(), n, k), {out.d(), m, n, n}, GemmOptions{true}, s);
      check(cudaStreamSynchronize(s), "quantize + gemm");
      const DeviceComparison c = compare(out, ref[v].get<double>());
      EXPECT_LT(c.rel_error, 1e-2) << "call " << i << ": " << c.describe();
      EXPECT_EQ(c.non_finite, 0u) << c.describe();
    }
    cudaStreamDestroy(s);
  }
}

// A row of D does not depend on the other rows of its call: the first m rows of a call with
// m rows have the bits of the same rows of a call with 4096, whatever tile the planner picks
// for each m (different block_m / block_n, pairs, several tiles per CTA). Split-K pairs sum
// two halves of K in another order, so a plan with split_k = 2 is only reported. Two calls
// with the same operands give the same bits (no atomics), split-K included.
TEST_F(GpuBehaviour, RowsDoNotDependOnTheRestOfTheBatch) {
  constexpr int64_t kBig = 4096;
  int compared = 0, split_plans = 0;
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2112, 7168}, {576, 7168}, {4096, 512}, {392, 1040}}) {
    const DeviceOperand a = upload(host::random_operand(kBig, k, k, true, uint64_t(n + k)));
    const DeviceOperand b = upload(host::random_operand(n, k, k, false, uint64_t(n + k + 1)));
    const auto run = [&](int64_t m, const GuardedOutput& out) {
      const ScaleMatrix sa{a.scales.get<float>(), m, scale_blocks(k), 1, per_token_scale_stride(kBig)};
      gemm_fp8_nt({a.data.get(), m, k, k}, sa, {b.data.get(), n, k, k}, block_scales(b.scales.get<float>(), n, k),
                  {out.d(), m, n, n});
      check(cudaDeviceSynchronize(), "call");
      std::vector<uint16_t> h(size_t(m * n));
      check(cudaMemcpy(h.data(), out.d(), h.size() * 2, cudaMemcpyDeviceToHost), "download D");
      return h;
    };
    const GuardedOutput big_out = make_output(kBig, n, n);
    const std::vector<uint16_t> big = run(kBig, big_out);
    {
      DeviceBuffer ref(size_t(kBig * n) * 8);
      reference_gemm(a, b, ref.get<double>());
      const DeviceComparison c = compare(big_out, ref.get<double>());
      EXPECT_LT(c.rel_error, 1e-2) << c.describe();
      EXPECT_EQ(c.non_finite, 0u) << c.describe();
    }
    for (int64_t m : {int64_t{1}, int64_t{7}, int64_t{64}, int64_t{100}, int64_t{128}, int64_t{129}, int64_t{256},
                      int64_t{383}, int64_t{1024}, int64_t{2049}, kBig}) {
      const std::string name = kernel_name(GemmShape{m, n, k});
      SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " " << name);
      const bool split = name.find("_sk2") != std::string::npos;
      const GuardedOutput out = make_output(m, n, n);
      const std::vector<uint16_t> first = run(m, out);
      EXPECT_TRUE(run(m, out) == first) << "two identical calls gave different bits";
      int64_t differ = 0;
      for (size_t i = 0; i < first.size(); ++i) differ += first[i] != big[i];
      std::printf("  %lldx%lldx%lld %s: %lld of %zu elements differ from the %lld-row call\n", (long long)m,
                  (long long)n, (long long)k, name.c_str(), (long long)differ, first.size(), (long long)kBig);
      if (split) {
        ++split_plans;
      } else {
        ++compared;
        EXPECT_EQ(differ, 0) << "rows changed with the size of the batch";
      }
    }
  }
  std::printf("  %d plans compared bit for bit, %d split-K plans reported\n", compared, split_plans);
  // (On the H200 with the planner of 84d5b11: 27 plans compared, all identical; 17 split-K
  // plans, 15 of them with 1-66 elements off by their summation order.)
  EXPECT_GE(compared, 20) << "the shapes no longer exercise enough plans without split-K";
}
