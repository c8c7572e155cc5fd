// Several GPUs in one process (two sm_90 devices; every test is skipped, with the reason
// shown, on a machine with fewer). The same inputs on each device must give the same bytes
// as on device 0 alone:
//   - one thread per device running every GEMM form and a quantizer at once, each on its
//     own stream;
//   - one thread switching devices on every call (the null stream: the current device);
//   - a call whose stream is on device 1 while device 0 is current (it runs on the stream's
//     device), and device-1 tensors on device 0's null stream with peer access enabled (the
//     README's rule: pointers the call's device can access);
//   - CUDA graphs captured on each device and replayed;
//   - the first call of a new shape on both devices at once: one build, one module per device.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/fp8_host.hpp"
#include "common/quantize_host.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;

namespace {

// The ordinals of the first two sm_90 devices, or why there are not two.
std::string two_devices(int* first, int* second) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return "no usable CUDA driver/device";
  std::vector<int> found;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) == cudaSuccess && p.major == 9 && p.minor == 0) found.push_back(i);
  }
  if (found.size() < 2)
    return "needs two sm_90 devices, found " + std::to_string(found.size()) + " (of " + std::to_string(count) + ")";
  *first = found[0];
  *second = found[1];
  return "";
}

class MultiGpu : public testing::Test {
 protected:
  void SetUp() override {
    const std::string why = two_devices(&dev_[0], &dev_[1]);
    if (!why.empty()) GTEST_SKIP() << "two-device test skipped: " << why;
  }
  int dev_[2] = {0, 1};
};

// The host inputs of every form (the same for each device).
struct Inputs {
  // Dense and weight gradient: A [300, 1040]; B [264, 1040] per block / per token.
  host::Fp8Operand dense_a = host::random_operand(300, 1040, 1040, true, 11);
  host::Fp8Operand dense_b = host::random_operand(264, 1040, 1040, false, 12);
  host::Fp8Operand wgrad_b = host::random_operand(264, 1040, 1040, true, 13);
  // m-grouped: 4 experts of N = 256, K = 528; contiguous rows 200, 0, 256, 100 (segments
  // padded to kGroupedSegmentRows), masked 128 rows each of which 128, 0, 37, 100 count.
  std::vector<int32_t> group_of_row;
  host::Fp8Operand contiguous_a, experts_b = host::random_operand(4 * 256, 528, 528, false, 14);
  host::Fp8Operand masked_a = host::random_operand(4 * 128, 528, 528, true, 15);
  std::vector<int32_t> masked_m = {128, 0, 37, 100};
  // k-grouped: groups of 200, 0, 384 and 128 columns, M = 192, N = 260.
  std::vector<int32_t> ks = {200, 0, 384, 128};
  int64_t kg_k = 0;
  host::Fp8Operand kg_a, kg_b;
  // The quantizer's input [300, 2056].
  host::Bf16Host x = host::padded_bf16(300, 2056);

  Inputs() {
    for (int32_t g = 0; g < 4; ++g) {
      const int rows[] = {200, 0, 256, 100};
      group_of_row.insert(group_of_row.end(), size_t(rows[g]), g);
      const int padded = (rows[g] + int(kGroupedSegmentRows) - 1) / int(kGroupedSegmentRows) * int(kGroupedSegmentRows);
      group_of_row.insert(group_of_row.end(), size_t(padded - rows[g]), -1);
    }
    contiguous_a = host::random_operand(int64_t(group_of_row.size()), 528, 528, true, 16);
    k_group_starts(ks, &kg_k);
    kg_a = k_grouped_operand(192, kg_k, ks, 17);
    kg_b = k_grouped_operand(260, kg_k, ks, 18);
    host::SplitMix64 rng(19);
    for (int64_t r = 0; r < x.rows; ++r)
      for (int64_t c = 0; c < x.cols; ++c) x.data[size_t(r * x.ld + c)] = host::float_to_bf16(float(rng.uniform() * 20 - 10));
  }
};

// Every form's inputs and outputs on one device (allocated there), and the calls.
struct DeviceWork {
  int device;
  DeviceOperand dense_a, dense_b, wgrad_b, contiguous_a, experts_b, masked_a, kg_a, kg_b;
  DeviceBuffer group_of_row, masked_m, group_k, x;
  DeviceBuffer d_dense, d_wgrad, d_contiguous, d_masked, d_kg, q, sf;
  int64_t contiguous_rows = 0, x_rows = 0, x_cols = 0, x_ld = 0, kg_k = 0;

  DeviceWork(const Inputs& in, int dev) : device(dev) {
    check(cudaSetDevice(dev), "cudaSetDevice");
    dense_a = upload(in.dense_a);
    dense_b = upload(in.dense_b);
    wgrad_b = upload(in.wgrad_b);
    contiguous_a = upload(in.contiguous_a);
    experts_b = upload(in.experts_b);
    masked_a = upload(in.masked_a);
    kg_a = upload(in.kg_a);
    kg_b = upload(in.kg_b);
    group_of_row = upload_ints(in.group_of_row);
    masked_m = upload_ints(in.masked_m);
    group_k = upload_ints(in.ks);
    x = upload_vector(in.x.data);
    contiguous_rows = int64_t(in.group_of_row.size());
    x_rows = in.x.rows;
    x_cols = in.x.cols;
    x_ld = in.x.ld;
    kg_k = in.kg_k;
    d_dense = DeviceBuffer(size_t(300 * 264) * 2);
    d_wgrad = DeviceBuffer(size_t(300 * 264) * 4);
    d_contiguous = DeviceBuffer(size_t(contiguous_rows * 256) * 2);
    d_masked = DeviceBuffer(size_t(4 * 128 * 256) * 2);
    d_kg = DeviceBuffer(size_t(4 * 192 * 260) * 4);
    q = DeviceBuffer(size_t(x_rows * 2064));
    sf = DeviceBuffer(size_t(per_token_scale_stride(x_rows) * scale_blocks(x_cols)) * 4);
  }

  std::vector<DeviceBuffer*> outputs() { return {&d_dense, &d_wgrad, &d_contiguous, &d_masked, &d_kg, &q, &sf}; }

  // Resets the outputs (the weight gradients accumulate into D) and runs every form on
  // `stream` (capturable: memsets and launches only).
  void run(cudaStream_t stream) {
    for (DeviceBuffer* b : outputs()) check(cudaMemsetAsync(b->get(), 0, b->bytes(), stream), "reset output");
    const ScaleMatrix sa = per_token_scales(dense_a.scales.get<float>(), 300, 1040);
    const Fp8Matrix a{dense_a.data.get(), 300, 1040, 1040};
    gemm_fp8_nt(a, sa, {dense_b.data.get(), 264, 1040, 1040}, block_scales(dense_b.scales.get<float>(), 264, 1040),
                {d_dense.get(), 300, 264, 264}, stream);
    const Fp32Matrix dw{d_wgrad.get<float>(), 300, 264, 264};
    gemm_fp8_nt_wgrad(a, sa, {wgrad_b.data.get(), 264, 1040, 1040}, per_token_scales(wgrad_b.scales.get<float>(), 264, 1040),
                      dw, &dw, stream);
    const Fp8Matrix eb{experts_b.data.get(), 4 * 256, 528, 528};
    const ScaleMatrix esb = block_scales(experts_b.scales.get<float>(), 4 * 256, 528);
    gemm_fp8_nt_grouped_contiguous({contiguous_a.data.get(), contiguous_rows, 528, 528},
                                   per_token_scales(contiguous_a.scales.get<float>(), contiguous_rows, 528), eb, esb,
                                   {d_contiguous.get(), contiguous_rows, 256, 256}, group_of_row.get<int32_t>(), 4, stream);
    gemm_fp8_nt_grouped_masked({masked_a.data.get(), 512, 528, 528}, per_token_scales(masked_a.scales.get<float>(), 512, 528),
                               eb, esb, {d_masked.get(), 512, 256, 256}, masked_m.get<int32_t>(), 4, 64, stream);
    const Fp32Matrix dk{d_kg.get<float>(), 4 * 192, 260, 260};
    gemm_fp8_nt_wgrad_k_grouped({kg_a.data.get(), 192, kg_k, kg_k}, per_token_scales(kg_a.scales.get<float>(), 192, kg_k),
                                {kg_b.data.get(), 260, kg_k, kg_k}, per_token_scales(kg_b.scales.get<float>(), 260, kg_k),
                                dk, &dk, group_k.get<int32_t>(), 4, stream);
    quantize_per_token({x.get(), x_rows, x_cols, x_ld}, {q.get(), x_rows, x_cols, 2064},
                       per_token_scale_output(sf.get<float>(), x_rows, x_cols), QuantizeOptions{}, stream);
  }

  // Every output's bytes (synchronizes the device).
  std::vector<std::vector<uint8_t>> download() {
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaDeviceSynchronize(), "outputs");
    std::vector<std::vector<uint8_t>> out;
    for (DeviceBuffer* b : outputs()) {
      out.emplace_back(b->bytes());
      check(cudaMemcpy(out.back().data(), b->get(), b->bytes(), cudaMemcpyDeviceToHost), "download output");
    }
    return out;
  }
};

const char* const kOutputNames[] = {"dense", "wgrad", "contiguous", "masked", "k-grouped", "q", "scales"};

void expect_same_bytes(const std::vector<std::vector<uint8_t>>& want, const std::vector<std::vector<uint8_t>>& got,
                       const char* what) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(want[i] == got[i]) << what << ": " << kOutputNames[i] << " differs from device 0's result alone";
}

// The outputs of every form run on `dev` alone, on its null stream.
std::vector<std::vector<uint8_t>> reference(const Inputs& in, int dev) {
  DeviceWork w(in, dev);
  w.run(nullptr);
  return w.download();
}

uint64_t modules_on(int device) {
  for (const DeviceStats& d : stats().devices)
    if (d.device == device) return d.modules_loaded;
  return 0;
}

}  // namespace

TEST_F(MultiGpu, ThreadPerDeviceRunsEveryFormConcurrently) {
  const Inputs in;
  const std::vector<std::vector<uint8_t>> want = reference(in, dev_[0]);
  std::vector<std::vector<std::vector<uint8_t>>> got(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      try {
        DeviceWork w(in, dev_[t]);
        const TestStream stream;
        for (int i = 0; i < 5; ++i) w.run(stream);  // several rounds, racing the other device
        got[size_t(t)] = w.download();
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(errors[size_t(t)], "") << "device " << dev_[t];
    expect_same_bytes(want, got[size_t(t)], t == 0 ? "first device, concurrent" : "second device, concurrent");
  }
  // Each device loaded its own modules.
  EXPECT_GT(modules_on(dev_[0]), 0u);
  EXPECT_GT(modules_on(dev_[1]), 0u);
}

TEST_F(MultiGpu, OneThreadSwitchesDevicesOnEveryCall) {
  const Inputs in;
  const std::vector<std::vector<uint8_t>> want = reference(in, dev_[0]);
  DeviceWork w0(in, dev_[0]), w1(in, dev_[1]);
  for (int i = 0; i < 6; ++i) {
    DeviceWork& w = i % 2 == 0 ? w0 : w1;
    check(cudaSetDevice(w.device), "cudaSetDevice");
    w.run(nullptr);  // the null stream: the current device's
  }
  expect_same_bytes(want, w0.download(), "first device, alternating");
  expect_same_bytes(want, w1.download(), "second device, alternating");
}

TEST_F(MultiGpu, CallRunsOnItsStreamsDevice) {
  const Inputs in;
  const std::vector<std::vector<uint8_t>> want = reference(in, dev_[0]);
  DeviceWork w1(in, dev_[1]);
  const TestStream stream1;  // created on the second device (DeviceWork made it current)
  // The first device current, the stream (and every tensor) on the second.
  check(cudaSetDevice(dev_[0]), "cudaSetDevice");
  w1.run(stream1);
  int current = -1;
  check(cudaGetDevice(&current), "cudaGetDevice");
  EXPECT_EQ(current, dev_[0]) << "a call must leave the caller's current device as it was";
  expect_same_bytes(want, w1.download(), "second device's stream, first device current");
}

TEST_F(MultiGpu, PeerTensorsOnTheCurrentDevicesNullStream) {
  int can = 0;
  check(cudaDeviceCanAccessPeer(&can, dev_[0], dev_[1]), "cudaDeviceCanAccessPeer");
  if (!can) GTEST_SKIP() << "device " << dev_[0] << " cannot access device " << dev_[1] << "'s memory";
  const Inputs in;
  const std::vector<std::vector<uint8_t>> want = reference(in, dev_[0]);
  DeviceWork w1(in, dev_[1]);
  check(cudaSetDevice(dev_[0]), "cudaSetDevice");
  const cudaError_t e = cudaDeviceEnablePeerAccess(dev_[1], 0);
  ASSERT_TRUE(e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled) << cudaGetErrorString(e);
  cudaGetLastError();
  w1.run(nullptr);  // runs on the first device, reading and writing the second's memory
  check(cudaDeviceSynchronize(), "peer calls");
  expect_same_bytes(want, w1.download(), "second device's tensors on the first device's null stream");
  check(cudaSetDevice(dev_[0]), "cudaSetDevice");
  cudaDeviceDisablePeerAccess(dev_[1]);
}

TEST_F(MultiGpu, GraphsCapturedOnEachDevice) {
  const Inputs in;
  const std::vector<std::vector<uint8_t>> want = reference(in, dev_[0]);
  for (int t = 0; t < 2; ++t) {
    SCOPED_TRACE(testing::Message() << "device " << dev_[t]);
    DeviceWork w(in, dev_[t]);
    const TestStream stream;
    w.run(stream);  // plans and loads outside the capture
    check(cudaStreamSynchronize(stream), "warm-up");
    const CapturedGraph graph(stream, [&] { w.run(stream); });
    for (int r = 0; r < 3; ++r) graph.replay(stream);
    expect_same_bytes(want, w.download(), "graph replay");
  }
}

TEST_F(MultiGpu, FirstCallOfANewShapeOnBothDevicesAtOnce) {
  // A shape no other test uses (N = 1552, K = 1168), planned for the first time by two threads
  // at once: one kernel built or read from the cache, one module loaded on each device.
  const int64_t m = 200, n = 1552, k = 1168;
  const host::Fp8Operand ha = host::random_operand(m, k, k, true, 31), hb = host::random_operand(n, k, k, false, 32);
  const Stats before = stats();
  const uint64_t modules0 = modules_on(dev_[0]), modules1 = modules_on(dev_[1]);
  std::vector<std::vector<uint8_t>> got(2);
  std::vector<std::string> errors(2);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      try {
        check(cudaSetDevice(dev_[t]), "cudaSetDevice");
        const DeviceOperand a = upload(ha), b = upload(hb);
        DeviceBuffer d(size_t(m * n) * 2);
        ready.fetch_add(1);
        while (ready.load() < 2) std::this_thread::yield();
        gemm_fp8_nt({a.data.get(), m, k, k}, per_token_scales(a.scales.get<float>(), m, k), {b.data.get(), n, k, k},
                    block_scales(b.scales.get<float>(), n, k), {d.get(), m, n, n});
        check(cudaDeviceSynchronize(), "gemm");
        got[size_t(t)].resize(d.bytes());
        check(cudaMemcpy(got[size_t(t)].data(), d.get(), d.bytes(), cudaMemcpyDeviceToHost), "download");
      } catch (const std::exception& e) {
        errors[size_t(t)] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  EXPECT_TRUE(got[0] == got[1]) << "the two devices' results differ";
  const Stats after = stats();
  // One kernel compiled (or read from the disk cache) for both: the planner's first candidate
  // for this shape compiles clean, and the kernel store builds a kernel once however many
  // threads ask for it at once.
  const uint64_t built = (after.kernels_compiled - before.kernels_compiled) + (after.disk_hits - before.disk_hits);
  EXPECT_EQ(built, 1u);
  EXPECT_EQ(modules_on(dev_[0]) - modules0, 1u);
  EXPECT_EQ(modules_on(dev_[1]) - modules1, 1u);
  EXPECT_EQ(after.modules_loaded - before.modules_loaded, 2u);
}
