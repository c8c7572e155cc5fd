// What callers rely on besides the numbers: bad input launches nothing, M = 0 is a
// no-op, streams and threads, CUDA graph capture, and no recompiles on repeat calls.

#include <gtest/gtest.h>

#include <functional>
#include <thread>

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
  void run(Stream stream = nullptr) const { gemm_fp8_nt(fa(), sa(), fb(), sb(), d(), stream); }
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
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  poison(p.out, s);
  cudaGraph_t graph;
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), "begin capture");
  p.run(s);
  check(cudaStreamEndCapture(s, &graph), "end capture");
  cudaGraphExec_t exec;
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  check(cudaStreamSynchronize(s), "sync");
  EXPECT_TRUE(all_poisoned(p.out)) << "capture must not execute";
  for (int replay = 0; replay < 2; ++replay) {
    poison(p.out, s);
    check(cudaGraphLaunch(exec, s), "replay");
    check(cudaStreamSynchronize(s), "sync");
    p.expect_correct();
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}
