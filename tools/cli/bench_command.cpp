// fp8gemm bench: gemm_fp8_nt against cuBLASLt's block-scaled FP8 GEMM, same inputs,
// same process; with --wgrad, gemm_fp8_nt_wgrad (D fp32 += A x B^T in place) against
// cuBLASLt's VEC128 x VEC128 FP8 GEMM with fp32 output and beta 1; with --grouped, the
// grouped GEMMs (mixture of experts) against a loop of per-expert cuBLASLt GEMMs.
//
// Method: random e4m3 data and scales; several copies of the inputs ("sets") rotated
// so that consecutive calls do not find their operands in L2 (at least 256 MB over all
// sets, unless one set is larger); a CUDA graph of many calls is replayed and timed with
// events, and the median per-call time over the replays is reported (sustained load:
// the card runs at its power limit). With --isolated, each call runs alone after an L2
// flush and a pause instead. Both libraries are checked against each other before timing;
// with cuBLASLt, its fastest algorithm and ours are finally timed in alternation, so that
// both see the same clock (the reported times).

#include "cli/bench_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cublaslt_baseline.hpp"
#include "cli/device_buffer.hpp"
#include "cli/kernel_timer.hpp"
#include "cli/sm_clock.hpp"
#include "common/fp8_host.hpp"
#include "common/grouped_sizes.hpp"
#include "common/shape_file.hpp"
#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::cli {
namespace {

constexpr int kExitNoGpu = 4;
constexpr int kExitMismatch = 3;
constexpr size_t kRotationBytes = size_t(256) << 20;

struct Row {
  std::string kind = "dense";  // or "wgrad", "grouped_contiguous", "grouped_masked", "k_grouped"
  int64_t m = 0, n = 0, k = 0;  // grouped: m is the real rows of all experts (no padding)
  int64_t groups = 0, expected_m = 0, max_m = 0, a_rows = 0;  // grouped only; a_rows: rows of A and D
  // (k_grouped: expected_m is the expected K per group, a_rows the rows of D)
  std::string kernel;
  double us = 0, tflops = 0, gbs = 0, host_us = 0;
  double cublas_us = 0, cublas_tflops = 0;  // 0: not measured
  // --kernel-time: us and cublas_us are kernel durations; these, the events around the same calls.
  double event_us = 0, cublas_event_us = 0;
  double cublas_host_us = 0;                // host cost of one cuBLASLt call of the fastest algorithm (as host_us)
  std::string cublas_note;
  double rel_diff = -1;  // fp8gemm vs cuBLASLt, relative Frobenius
  int sets = 0, calls_per_graph = 0;
  double sm_mhz = 0;  // median SM clock read after each call (replay) of the reported timing; 0: none
  double clock_held = -1;  // share of those readings with the clock held down (power cap, heat); -1: none
  // Our side's timed calls in the order they ran (isolated: call i used input set i % sets;
  // sustained: one per-call time per replay), and the SM clock read after each (MHz; a
  // reading NVML could not give is left out, none without NVML): the spread behind `us`.
  std::vector<double> call_us, call_mhz;
  std::vector<int64_t> group_sizes;  // grouped: each expert's rows (k-grouped: each group's K)
  bool sizes_listed = false;         // those sizes came from the shape file (else drawn)
};

// One copy of a problem's inputs and outputs.
struct Set {
  DeviceBuffer a, sfa, b, sfb, sfa_cublas, sfb_cublas, d, d_cublas;
};

// What each rotation set holds: copies of these host arrays (an empty one: no buffer), D
// uploaded from d_init or, when that is empty, d_bytes left as allocated, and d_cublas_bytes
// for cuBLASLt's D (0: none).
struct SetContents {
  const std::vector<uint8_t>& a;
  const std::vector<uint8_t>& b;
  const std::vector<float>& sfa;
  const std::vector<float>& sfb;
  const std::vector<float>& sfa_cublas;
  const std::vector<float>& sfb_cublas;
  const std::vector<float>& d_init;
  size_t d_bytes = 0;
  size_t d_cublas_bytes = 0;
};

template <typename T>
void upload_vector(DeviceBuffer* buffer, const std::vector<T>& v) {
  if (v.empty()) return;
  *buffer = DeviceBuffer(v.size() * sizeof(T));
  upload(buffer->get(), v.data(), v.size() * sizeof(T));
}

// Rotation sets for one shape: enough that one pass over them touches kRotationBytes
// (`touched` bytes per call), at most 64, and no more than fit in 70 % of the free device
// memory (`allocated` bytes per set).
int rotation_sets(size_t touched, size_t allocated) {
  size_t free_bytes = 0, total_bytes = 0;
  cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  const size_t fit = std::max<size_t>(1, size_t(double(free_bytes) * 0.7) / std::max<size_t>(allocated, 1));
  const size_t wanted = std::clamp<size_t>((kRotationBytes + touched - 1) / std::max<size_t>(touched, 1), 1, 64);
  return static_cast<int>(std::min(wanted, fit));
}

// `count` sets holding `c`. Waits for the uploads: a copy from pageable memory may still be
// in flight when cudaMemcpy returns, and the timing stream does not wait for the legacy stream.
std::vector<Set> make_sets(int count, const SetContents& c) {
  std::vector<Set> sets(static_cast<size_t>(count));
  for (Set& x : sets) {
    upload_vector(&x.a, c.a);
    upload_vector(&x.b, c.b);
    upload_vector(&x.sfa, c.sfa);
    upload_vector(&x.sfb, c.sfb);
    upload_vector(&x.sfa_cublas, c.sfa_cublas);
    upload_vector(&x.sfb_cublas, c.sfb_cublas);
    if (!c.d_init.empty())
      upload_vector(&x.d, c.d_init);
    else
      x.d = DeviceBuffer(c.d_bytes);
    if (c.d_cublas_bytes > 0) x.d_cublas = DeviceBuffer(c.d_cublas_bytes);
  }
  cuda_check(cudaDeviceSynchronize(), "upload");
  return sets;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// How calls are timed (BenchOptions::replays and ::isolated).
struct Timing {
  int replays = 15;
  bool isolated = false;
  size_t flush_bytes = size_t(256) << 20;  // isolated: memset before each call
  int pause_ms = 2;                        // isolated: idle time after each call
  KernelTimer* kernels = nullptr;          // isolated: time calls by their kernels' durations
  SmClock* clock = nullptr;                // read after each timed call (replay); nullptr: no NVML
};

Timing timing_of(const BenchOptions& o) {
  Timing t{o.replays, o.isolated, static_cast<size_t>(o.flush_mb) << 20, o.pause_ms};
  if (o.kernel_time) t.kernels = KernelTimer::instance(nullptr);  // checked by run_bench
  int device = 0;
  cudaGetDevice(&device);
  t.clock = SmClock::instance(device, nullptr);
  return t;
}

using Call = std::function<void(int, cudaStream_t)>;

// Device time (us) of one enqueue of `work` on `stream`, timed by events around it.
double event_us(const std::function<void()>& work, cudaStream_t stream, const char* what) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  work();
  cudaEventRecord(stop, stream);
  cuda_check(cudaEventSynchronize(stop), what);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms * 1000.0;
}

// The time of one isolated call: events around it, and with timing.kernels also the summed
// durations of its kernels; `us` is the one the rows report.
struct CallTime {
  double us = 0, event_us = 0;
};

// Isolated calls: each one after an L2 flush (a memset of timing.flush_bytes, by default
// 256 MB) and followed by a pause (timing.pause_ms), timed alone by events around it (or by
// its kernels' durations). With the pauses the card stays below its power limit (under
// sustained FP8 GEMM load an H200 runs at its power cap and clocks down to about 1.3-1.5
// GHz), as a GEMM between other work does. Returns the time of one such call.
CallTime isolated_call_us(const Call& call, int i, int sets, const Timing& timing, cudaStream_t stream) {
  // (Allocated once, and again only if a later call asks for a larger flush.)
  static DeviceBuffer flush;
  static size_t flush_capacity = 0;
  if (flush_capacity < timing.flush_bytes) {
    flush = DeviceBuffer(timing.flush_bytes);
    flush_capacity = timing.flush_bytes;
  }
  // (The flush is a memset, which the kernel timer does not count; what ran before is dropped.)
  if (timing.kernels != nullptr) timing.kernels->take_us(nullptr);
  cuda_check(cudaMemsetAsync(flush.get(), i & 0xff, timing.flush_bytes, stream), "L2 flush");
  CallTime t;
  t.event_us = event_us([&] { call(i % sets, stream); }, stream, "isolated call");
  t.us = t.event_us;
  if (timing.clock != nullptr) timing.clock->sample();  // (the call has just ended)
  if (timing.kernels != nullptr) {
    int kernels = 0;
    const double kernel_us = timing.kernels->take_us(&kernels);
    if (kernels > 0) {
      t.us = kernel_us;
    } else {
      // (A call with nothing to compute may launch nothing: it keeps the events' time.)
      static bool told = false;
      if (!told) fmt::print(stderr, "bench --kernel-time: a call ran no kernel; such calls are timed by events\n");
      told = true;
    }
  }
  if (timing.pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(timing.pause_ms));
  return t;
}

// Sustained calls: a CUDA graph of about 3 ms of back-to-back calls (a whole number of
// rotations over the input sets), replayed; replay() gives the per-call time of one replay.
class GraphTimer {
 public:
  GraphTimer(const Call& call, int sets, cudaStream_t stream) : stream_(stream) {
    for (int i = 0; i < 3; ++i) call(i % sets, stream);
    const double estimate_us =
        std::max(1.0, event_us([&] { for (int i = 0; i < 8; ++i) call(i % sets, stream); }, stream, "estimate") / 8);
    calls_ = static_cast<int>(std::clamp(3000.0 / estimate_us, 1.0, 400.0));
    calls_ = std::max(sets, (calls_ + sets - 1) / sets * sets);
    cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
    for (int i = 0; i < calls_; ++i) call(i % sets, stream);
    cuda_check(cudaStreamEndCapture(stream, &graph_), "end capture");
    cuda_check(cudaGraphInstantiate(&exec_, graph_, 0), "graph instantiate");
    for (int i = 0; i < 2; ++i) cuda_check(cudaGraphLaunch(exec_, stream), "graph launch");
  }
  GraphTimer(const GraphTimer&) = delete;
  GraphTimer& operator=(const GraphTimer&) = delete;
  ~GraphTimer() {
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
  }
  double replay() {
    return event_us([&] { cuda_check(cudaGraphLaunch(exec_, stream_), "graph launch"); }, stream_, "replay") / calls_;
  }
  int calls() const { return calls_; }

 private:
  cudaStream_t stream_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  int calls_ = 0;
};

// Median per-call device time (us) of `call(set)`: over graph replays of many calls
// (sustained load), or over max(20, 2 x replays) isolated calls (then, with a kernel timer,
// also the median of the events' times in `event_us`). `times`, when given, receives every
// timed call's (replay's per-call) time in order.
double time_calls(const Call& call, int sets, const Timing& timing, cudaStream_t stream, int* calls_out,
                  double* event_us = nullptr, std::vector<double>* times = nullptr) {
  std::vector<double> per_call;
  if (timing.isolated) {
    std::vector<double> events;
    for (int i = 0; i < 3; ++i) call(i % sets, stream);
    for (int i = 0; i < std::max(20, 2 * timing.replays); ++i) {
      const CallTime t = isolated_call_us(call, i, sets, timing, stream);
      per_call.push_back(t.us);
      events.push_back(t.event_us);
    }
    *calls_out = 1;
    if (event_us != nullptr && timing.kernels != nullptr) *event_us = median(events);
    if (times != nullptr) *times = per_call;
    return median(per_call);
  }
  GraphTimer timer(call, sets, stream);
  for (int r = 0; r < timing.replays; ++r) {
    per_call.push_back(timer.replay());
    if (timing.clock != nullptr) timing.clock->sample();
  }
  *calls_out = timer.calls();
  if (times != nullptr) *times = per_call;
  return median(per_call);
}

// The median of the SM clocks read since the last take (MHz; 0: none read) into `mhz`, the share
// of readings that found the clock held down into `held` (-1: none), and forgets them; `all`,
// when given, receives the readings themselves. (All may be null: the readings are only dropped.)
void take_clock(const Timing& timing, double* mhz, double* held, std::vector<double>* all = nullptr) {
  if (timing.clock == nullptr) return;
  const SmClock::Samples s = timing.clock->take();
  if (all != nullptr) *all = s.mhz;
  if (mhz != nullptr) *mhz = s.mhz.empty() ? 0 : median(s.mhz);
  if (held != nullptr) *held = s.reasons_read > 0 ? static_cast<double>(s.held) / s.reasons_read : -1;
}

// The host cost of one call, warm: 64 calls enqueued back to back (the device keeps up, so this
// is the enqueue path), in microseconds per call; without a kernel timer's recording, whose
// cost per launch is not the call's.
double host_us_per_call(const Call& call, int sets, const Timing& timing, cudaStream_t stream) {
  const KernelTimer::Paused paused(timing.kernels);
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kHostCalls = 64;
  for (int i = 0; i < kHostCalls; ++i) call(i % sets, stream);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kHostCalls;
  cuda_check(cudaStreamSynchronize(stream), "host timing");
  return us;
}

// Our side of a row: a first call on set 0 (it loads the kernel; then `after_first_call`, e.g. to
// keep its output for the check against cuBLASLt), the host cost of one call (enqueue only; 64
// calls), the device time per call (time_calls) and the rates for `flops` and `bytes` moved.
void time_ours(Row* row, const Call& ours, double flops, double bytes, int sets, const Timing& timing,
               cudaStream_t stream, const std::function<void()>& after_first_call = {}) {
  ours(0, stream);
  cuda_check(cudaStreamSynchronize(stream), "first call");
  if (after_first_call) after_first_call();
  row->host_us = host_us_per_call(ours, sets, timing, stream);
  take_clock(timing, nullptr, nullptr);  // (only the timed calls' clocks count)
  row->us = time_calls(ours, sets, timing, stream, &row->calls_per_graph, &row->event_us, &row->call_us);
  take_clock(timing, &row->sm_mhz, &row->clock_held, &row->call_mhz);
  row->tflops = flops / row->us * 1e-6;
  row->gbs = bytes / row->us * 1e-3;
}

// time_ours for an fp32 output accumulated in place: returns D (`count` floats at `d`) as the
// first call left it, the output the check compares.
std::vector<float> first_call_fp32(Row* row, const Call& ours, double flops, double bytes, const void* d, size_t count,
                                   int sets, const Timing& timing, cudaStream_t stream) {
  std::vector<float> out(count);
  time_ours(row, ours, flops, bytes, sets, timing, stream, [&] {
    cuda_check(cudaMemcpy(out.data(), d, count * 4, cudaMemcpyDeviceToHost), "copy");
  });
  return out;
}

// The same for two calls measured in alternation (a b, b a, a b, ...), so that both see the
// same power and thermal state of the card: under FP8 load its clock follows the power drawn
// in the last second or so, and whichever of two separate measurements came later would run
// on a hotter card. Returns the medians of a and of b.
std::pair<double, double> time_paired(const Call& a, const Call& b, int sets, const Timing& timing,
                                      cudaStream_t stream, std::pair<double, double>* event_us = nullptr) {
  std::vector<double> ta, tb;
  if (timing.isolated) {
    std::vector<double> ea, eb;
    for (int i = 0; i < 3; ++i) {
      a(i % sets, stream);
      b(i % sets, stream);
    }
    for (int i = 0; i < std::max(20, 2 * timing.replays); ++i) {
      const bool a_first = i % 2 == 0;
      const CallTime first = isolated_call_us(a_first ? a : b, i, sets, timing, stream);
      const CallTime second = isolated_call_us(a_first ? b : a, i, sets, timing, stream);
      ta.push_back(a_first ? first.us : second.us);
      tb.push_back(a_first ? second.us : first.us);
      ea.push_back(a_first ? first.event_us : second.event_us);
      eb.push_back(a_first ? second.event_us : first.event_us);
    }
    if (event_us != nullptr && timing.kernels != nullptr) *event_us = {median(ea), median(eb)};
    return {median(ta), median(tb)};
  }
  GraphTimer ga(a, sets, stream), gb(b, sets, stream);
  for (int r = 0; r < timing.replays; ++r) {
    if (r % 2 == 0) {
      ta.push_back(ga.replay());
      tb.push_back(gb.replay());
    } else {
      tb.push_back(gb.replay());
      ta.push_back(ga.replay());
    }
    if (timing.clock != nullptr) timing.clock->sample();
  }
  return {median(ta), median(tb)};
}

// cuBLASLt's time on a problem, and ours again beside it. `theirs(algo, set, stream)` runs
// cuBLASLt's algorithm `algo` of `algorithms`; before timing, `check(call)` gets algorithm 0's
// call to run once and compare with ours. Each algorithm is timed like ours was; the fastest
// is then timed once more in alternation with `ours` (time_paired), and those two times are
// the row's: row->us, ->tflops and ->gbs are rescaled from ours' first measurement, and
// row->cublas_us, ->cublas_tflops and ->cublas_host_us are filled.
void time_cublas(Row* row, double flops, int algorithms, const Call& ours,
                 const std::function<void(int, int, cudaStream_t)>& theirs,
                 const std::function<void(const Call&)>& check, int sets, const Timing& timing, cudaStream_t stream) {
  double best = 0;
  int best_algo = 0;
  for (int algo = 0; algo < algorithms; ++algo) {
    const Call call = [&](int i, cudaStream_t st) { theirs(algo, i, st); };
    if (algo == 0) check(call);
    int calls = 0;
    const double us = time_calls(call, sets, timing, stream, &calls);
    if (best == 0 || us < best) {
      best = us;
      best_algo = algo;
    }
  }
  const Call fastest = [&](int i, cudaStream_t st) { theirs(best_algo, i, st); };
  row->cublas_host_us = host_us_per_call(fastest, sets, timing, stream);
  std::pair<double, double> events{row->event_us, 0.0};
  take_clock(timing, nullptr, nullptr);
  const auto [us, cublas_us] = time_paired(ours, fastest, sets, timing, stream, &events);
  take_clock(timing, &row->sm_mhz, &row->clock_held);  // (both libraries' calls, in alternation)
  row->event_us = events.first;
  row->cublas_event_us = events.second;
  row->call_us.clear();  // (those were the calls timed alone, not the ones `us` now reports)
  row->call_mhz.clear();
  row->gbs *= row->us / us;
  row->us = us;
  row->tflops = flops / us * 1e-6;
  row->cublas_us = cublas_us;
  row->cublas_tflops = flops / cublas_us * 1e-6;
}

// time_cublas for one cuBLASLt GEMM of `form` on the row's N and K with m_pad rows, prepared
// with set 0's scales; where cuBLASLt declines the problem, the row keeps its reason instead.
void time_cublas_gemm(Row* row, CublasLtGemm* cublas, CublasLtGemm::Form form, int64_t m_pad, const float* sfa0,
                      const float* sfb0, double flops, const Call& ours,
                      const std::function<void(int, int, cudaStream_t)>& theirs,
                      const std::function<void(const Call&)>& check, int sets, const Timing& timing,
                      cudaStream_t stream) {
  std::string why;
  if (!cublas->prepare(form, m_pad, row->n, row->k, sfa0, sfb0, &why)) {
    row->cublas_note = why;
    return;
  }
  time_cublas(row, flops, cublas->algorithms(), ours, theirs, check, sets, timing, stream);
}

double to_double(uint16_t bf16) { return host::bf16_to_float(bf16); }
double to_double(float v) { return v; }

// Relative Frobenius difference of x from y (bf16 or fp32 elements).
template <typename T>
double relative_difference(const std::vector<T>& x, const std::vector<T>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double a = to_double(x[i]), b = to_double(y[i]);
    if (!std::isfinite(a) || !std::isfinite(b)) return INFINITY;
    num += (a - b) * (a - b);
    den += b * b;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// (wgrad: the weight-gradient kernel has no TMA-store option; tma_store -1 reads as 0 there.)
std::string config_name(const KernelConfig& c, bool wgrad = false) {
  const int tma_store =
      wgrad ? std::max(c.tma_store, 0) : c.tma_store < 0 ? int(c.block_n % (c.split_k == 2 ? 128 : 64) == 0) : c.tma_store;
  return fmt::format("bm{}_bn{}_s{}_g{}{}{}{}", c.block_m, c.block_n, c.stages, c.group_n,
                     c.multicast == 1 ? "_mcA" : c.multicast == 2 ? "_mcB" : "", tma_store == 1 ? "_ts" : tma_store == 2 ? "_ts1" : "",
                     c.split_k == 2 ? "_sk2" : "");
}

Row bench_shape(const GemmShape& shape, const BenchOptions& o, CublasLtGemm* cublas, cudaStream_t stream,
                const KernelConfig* config) {
  Row row;
  const int64_t m = shape.m, n = shape.n, k = shape.k;
  row.m = m;
  row.n = n;
  row.k = k;
  row.kernel = config != nullptr ? config_name(*config) : kernel_name(shape, GemmOptions{o.b_constant});
  // cuBLASLt needs M % 4 == 0: both libraries read the same buffers, padded to 4 rows.
  const int64_t m_pad = (m + 3) / 4 * 4, kb = (k + 127) / 128, nb = (n + 127) / 128, l4 = (kb + 3) / 4 * 4;
  const host::Fp8Operand a = host::random_operand(m_pad, k, k, true, o.seed + uint64_t(m * 31 + n * 7 + k));
  const host::Fp8Operand b = host::random_operand(n, k, k, false, o.seed + uint64_t(n * 13 + k));
  std::vector<float> sfb_cublas(size_t(nb * l4), 1.0f);
  for (int64_t i = 0; i < nb; ++i)
    for (int64_t j = 0; j < kb; ++j) sfb_cublas[size_t(i * l4 + j)] = b.scales[size_t(i * kb + j)];

  const size_t set_bytes = size_t(m_pad * k + n * k) + (a.scales.size() + b.scales.size()) * 4 + size_t(m * n) * 4;
  const int sets = rotation_sets(set_bytes, set_bytes + sfb_cublas.size() * 4);
  row.sets = sets;
  const std::vector<float> none;
  const std::vector<Set> s = make_sets(sets, SetContents{a.data, b.data, a.scales, b.scales, none, sfb_cublas, none,
                                                         size_t(m * n) * 2, size_t(m_pad * n) * 2});
  auto ours = [&](int i, cudaStream_t st) {
    const Set& x = s[size_t(i)];
    const Fp8Matrix ma{x.a.get(), m, k, k}, mb{x.b.get(), n, k, k};
    const ScaleMatrix sa{x.sfa.get<float>(), m, kb, 1, a.scale_stride};
    const Bf16Matrix md{x.d.get(), m, n, n};
    if (config != nullptr)
      gemm_fp8_nt(ma, sa, mb, block_scales(x.sfb.get<float>(), n, k), md, *config, st);
    else
      gemm_fp8_nt(ma, sa, mb, block_scales(x.sfb.get<float>(), n, k), md, GemmOptions{o.b_constant}, st);
  };
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const double bytes = double(m * k + n * k) + double(m * kb + nb * kb) * 4 + double(m * n) * 2;
  time_ours(&row, ours, flops, bytes, sets, timing_of(o), stream);

  if (cublas != nullptr) {
    auto theirs = [&](int algo, int i, cudaStream_t st) {
      const Set& x = s[size_t(i)];
      cublas->run(x.a.get(), x.sfa.get<float>(), x.b.get(), x.sfb_cublas.get<float>(), x.d_cublas.get(), algo, st);
    };
    auto check = [&](const std::function<void(int, cudaStream_t)>& call) {
      call(0, stream);
      cuda_check(cudaStreamSynchronize(stream), "cuBLASLt");
      std::vector<uint16_t> d1(size_t(m * n)), d2(size_t(m * n));
      cuda_check(cudaMemcpy(d1.data(), s[0].d.get(), d1.size() * 2, cudaMemcpyDeviceToHost), "copy");
      cuda_check(cudaMemcpy(d2.data(), s[0].d_cublas.get(), d2.size() * 2, cudaMemcpyDeviceToHost), "copy");
      row.rel_diff = relative_difference(d1, d2);
    };
    time_cublas_gemm(&row, cublas, CublasLtGemm::Form::Forward, m_pad, s[0].sfa.get<float>(),
                     s[0].sfb_cublas.get<float>(), flops, ours, theirs, check, sets, timing_of(o), stream);
  }
  return row;
}

// The weight gradient in the form the reference figures measure: D [M,N] fp32 += A [M,K] x
// B [N,K]^T in place (C = D), per-token (1x128) scales on both operands. Each set has one D
// that both libraries accumulate into (its values do not change the time; fp32 does not
// overflow in the calls a bench makes). D starts as random values of about the product's
// magnitude, so that the check, one call of each library from that same D, also sees C added.
Row bench_wgrad_shape(const GemmShape& shape, const BenchOptions& o, CublasLtGemm* cublas, cudaStream_t stream,
                      const KernelConfig* config) {
  Row row;
  row.kind = "wgrad";
  const int64_t m = shape.m, n = shape.n, k = shape.k;
  row.m = m;
  row.n = n;
  row.k = k;
  row.kernel = config != nullptr ? config_name(*config, /*wgrad=*/true) : kernel_name(shape);
  // cuBLASLt needs M % 4 == 0: A and D are padded to 4 rows as in the dense bench (ours
  // reads and writes the first M).
  const int64_t m_pad = (m + 3) / 4 * 4, kb = (k + 127) / 128;
  const host::Fp8Operand a = host::random_operand(m_pad, k, k, true, o.seed + uint64_t(m * 31 + n * 7 + k));
  const host::Fp8Operand b = host::random_operand(n, k, k, true, o.seed + uint64_t(n * 13 + k));
  // cuBLASLt's VEC128 scales are our per-token layout without the column padding:
  // [ceil(K/128)][rows], rows contiguous. With M padded and N % 4 == 0 (gemm_fp8_nt_wgrad's
  // rule) the column strides already equal the row counts and cuBLASLt reads our buffers;
  // otherwise it gets a compacted copy (vec128 returns an empty vector when none is needed).
  auto vec128 = [kb](const host::Fp8Operand& op) {
    std::vector<float> v;
    if (op.scale_stride == op.rows) return v;
    v.resize(size_t(kb * op.rows));
    for (int64_t j = 0; j < kb; ++j)
      std::copy_n(op.scales.begin() + j * op.scale_stride, op.rows, v.begin() + j * op.rows);
    return v;
  };
  const std::vector<float> sfa_cublas = vec128(a), sfb_cublas = vec128(b);
  // The rms of an element of A x B^T is about 190 sqrt(K) for random_operand's values and scales.
  std::vector<float> d0(size_t(m_pad * n));
  host::SplitMix64 rng(o.seed + uint64_t(m * 5 + n * 3 + k));
  const double d_range = 200.0 * std::sqrt(double(k));
  for (float& v : d0) v = float((rng.uniform() * 2 - 1) * d_range);

  const size_t set_bytes = size_t(m_pad * k + n * k) + (a.scales.size() + b.scales.size() + d0.size()) * 4;
  const int sets = rotation_sets(set_bytes, set_bytes + (sfa_cublas.size() + sfb_cublas.size()) * 4);
  row.sets = sets;
  const std::vector<Set> s =
      make_sets(sets, SetContents{a.data, b.data, a.scales, b.scales, sfa_cublas, sfb_cublas, d0});
  auto ours = [&](int i, cudaStream_t st) {
    const Set& x = s[size_t(i)];
    const Fp32Matrix md{x.d.get<float>(), m, n, n};
    const Fp8Matrix ma{x.a.get(), m, k, k}, mb{x.b.get(), n, k, k};
    const ScaleMatrix sa{x.sfa.get<float>(), m, kb, 1, a.scale_stride}, sb{x.sfb.get<float>(), n, kb, 1, b.scale_stride};
    if (config != nullptr)
      gemm_fp8_nt_wgrad(ma, sa, mb, sb, md, &md, *config, st);
    else
      gemm_fp8_nt_wgrad(ma, sa, mb, sb, md, &md, st);
  };
  const double flops = 2.0 * double(m) * double(n) * double(k);
  // A, B, both scale tensors once; D read and written in fp32.
  const double bytes = double(m * k + n * k) + double((m + n) * kb) * 4 + 2.0 * 4 * double(m * n);
  // The first call, from the initial D, is the one the check compares.
  const std::vector<float> d_ours = first_call_fp32(&row, ours, flops, bytes, s[0].d.get(), size_t(m * n), sets,
                                                    timing_of(o), stream);

  if (cublas != nullptr) {
    // cuBLASLt's scales: the compacted copy if there is one, else the buffer ours reads.
    auto scales = [](const DeviceBuffer& compacted, const DeviceBuffer& own) {
      return compacted.get<float>() != nullptr ? compacted.get<float>() : own.get<float>();
    };
    auto theirs = [&](int algo, int i, cudaStream_t st) {
      const Set& x = s[size_t(i)];
      cublas->run(x.a.get(), scales(x.sfa_cublas, x.sfa), x.b.get(), scales(x.sfb_cublas, x.sfb), x.d.get(), algo, st);
    };
    // One call from the same initial D as ours.
    auto check = [&](const std::function<void(int, cudaStream_t)>& call) {
      upload(s[0].d.get(), d0.data(), d0.size() * 4);
      cuda_check(cudaDeviceSynchronize(), "upload");
      call(0, stream);
      cuda_check(cudaStreamSynchronize(stream), "cuBLASLt");
      std::vector<float> d_theirs(size_t(m * n));
      cuda_check(cudaMemcpy(d_theirs.data(), s[0].d.get(), d_theirs.size() * 4, cudaMemcpyDeviceToHost), "copy");
      row.rel_diff = relative_difference(d_ours, d_theirs);
    };
    time_cublas_gemm(&row, cublas, CublasLtGemm::Form::WeightGradient, m_pad, scales(s[0].sfa_cublas, s[0].sfa),
                     scales(s[0].sfb_cublas, s[0].sfb), flops, ours, theirs, check, sets, timing_of(o), stream);
  }
  return row;
}

// The masked layout's A [groups * max_m, K] (per-token scales): random values in the rows
// either library reads (each expert's first rows, rounded up to 4 for cuBLASLt), zeros with
// unit scales in the others (drawing all 32 x 4096 rows would cost seconds per shape).
host::Fp8Operand masked_operand(const host::GroupedShape& g, const host::GroupedLayout& l, uint64_t seed) {
  host::Fp8Operand a;
  a.rows = l.a_rows;
  a.cols = a.ld = g.k;
  a.per_token = true;
  a.scale_stride = per_token_scale_stride(a.rows);
  const int64_t kb = scale_blocks(g.k);
  a.data.assign(size_t(a.rows * a.ld), 0);
  a.scales.assign(size_t(kb * a.scale_stride), 1.0f);
  for (int64_t e = 0; e < g.groups; ++e) {
    const int64_t first = l.offset[size_t(e)];
    const int64_t rows = std::min((l.rows[size_t(e)] + 3) / 4 * 4, a.rows - first);
    if (rows <= 0) continue;
    const host::Fp8Operand part = host::random_operand(rows, g.k, g.k, true, seed + uint64_t(e) * 7919u);
    std::copy(part.data.begin(), part.data.end(), a.data.begin() + first * a.ld);
    for (int64_t j = 0; j < kb; ++j)
      std::copy_n(part.scales.begin() + j * part.scale_stride, rows,
                  a.scales.begin() + j * a.scale_stride + first);
  }
  return a;
}

// The cuBLASLt side of a grouped bench: one prepared problem per distinct key among the
// groups (an expert's row count, a group's K), configured by `add` for the first group with
// that key; a group whose key is 0 has none (-1). On failure `why` says what cuBLASLt refused.
struct GroupProblems {
  std::vector<int> of_group;
  int max_algorithms = 0;
  std::string why;

  // Runs the problem of every group that has one, with algorithm `algo` clamped to what that
  // problem offers: run(group, problem, algorithm).
  void run_each(const CublasLtGemm& cublas, int algo, const std::function<void(int64_t, int, int)>& run) const {
    for (size_t e = 0; e < of_group.size(); ++e) {
      const int p = of_group[e];
      if (p >= 0) run(static_cast<int64_t>(e), p, std::min(algo, cublas.algorithms(p) - 1));
    }
  }
};

GroupProblems group_problems(CublasLtGemm* cublas, const std::vector<int64_t>& keys,
                             const std::function<int(int64_t group, std::string* why)>& add) {
  GroupProblems out;
  out.of_group.assign(keys.size(), -1);
  std::map<int64_t, int> by_key;
  cublas->reset();
  for (size_t e = 0; e < keys.size(); ++e) {
    if (keys[e] == 0) continue;
    auto found = by_key.find(keys[e]);
    if (found == by_key.end()) {
      const int p = add(static_cast<int64_t>(e), &out.why);
      if (p < 0) {
        if (out.why.empty()) out.why = "cuBLASLt could not configure the problem";
        return out;
      }
      found = by_key.emplace(keys[e], p).first;
      out.max_algorithms = std::max(out.max_algorithms, cublas->algorithms(p));
    }
    out.of_group[e] = found->second;
  }
  return out;
}

// time_cublas for a grouped form, cuBLASLt running one problem per group: `run_group(set, group,
// problem, algorithm, stream)` runs one group's; unless configuring the groups failed (the
// row notes why).
void time_cublas_groups(Row* row, double flops, const GroupProblems& problems, const CublasLtGemm& cublas,
                        const Call& ours, const std::function<void(int, int64_t, int, int, cudaStream_t)>& run_group,
                        const std::function<void(const Call&)>& check, int sets, const Timing& timing,
                        cudaStream_t stream) {
  if (!problems.why.empty()) {
    row->cublas_note = problems.why;
    return;
  }
  time_cublas(
      row, flops, problems.max_algorithms, ours,
      [&](int algo, int i, cudaStream_t st) {
        problems.run_each(cublas, algo, [&](int64_t e, int p, int a) { run_group(i, e, p, a, st); });
      },
      check, sets, timing, stream);
}

// gemm_fp8_nt_grouped_contiguous / _masked on one shape of the set, against cuBLASLt's
// Forward GEMM called once per expert (its real rows, rounded up to 4 as cuBLASLt requires)
// in a loop inside the timed call; cuBLASLt is prepared once per distinct row count before
// timing. FLOPs and bytes count the real rows only (not the padding, not rows past masked_m).
Row bench_grouped_shape(const host::GroupedShape& g, const BenchOptions& o, CublasLtGemm* cublas, cudaStream_t stream,
                        const KernelConfig* config) {
  const bool masked = g.kind == GemmKind::GroupedMasked;
  const host::GroupedLayout l = host::grouped_layout(g, o.seed);
  const int64_t groups = g.groups, n = g.n, k = g.k, m = l.a_rows;
  const int64_t kb = scale_blocks(k), nb = scale_blocks(n), l4 = (kb + 3) / 4 * 4;
  Row row;
  row.kind = masked ? "grouped_masked" : "grouped_contiguous";
  row.m = l.real_rows;
  row.n = n;
  row.k = k;
  row.groups = groups;
  row.expected_m = g.expected_m;
  row.max_m = masked ? g.max_m : 0;
  row.a_rows = m;
  row.group_sizes = l.rows;
  row.sizes_listed = !g.rows.empty();
  row.kernel = config != nullptr ? config_name(*config) : kernel_name(l.plan);

  // A [rows, K] per token; B: the experts stacked [G * N, K] with their 128x128 scales
  // stacked [G * ceil(N/128), ceil(K/128)].
  const host::Fp8Operand a = masked ? masked_operand(g, l, o.seed + uint64_t(m * 31 + n * 7 + k))
                                    : host::random_operand(m, k, k, true, o.seed + uint64_t(m * 31 + n * 7 + k));
  const host::Fp8Operand b = host::random_operand(groups * n, k, k, false, o.seed + uint64_t(n * 13 + k + groups));
  std::vector<float> sfb(size_t(groups * nb * kb));
  host::SplitMix64 rng(o.seed + uint64_t(groups * nb * kb));
  for (float& v : sfb) v = float(std::exp2(rng.uniform() * 6.0 - 3.0));
  std::vector<int32_t> index;  // contiguous: group_of_row; masked: masked_m
  if (masked) {
    for (int64_t r : l.rows) index.push_back(int32_t(r));
  } else {
    index.assign(size_t(m), -1);
    for (int64_t e = 0; e < groups; ++e)
      std::fill_n(index.begin() + l.offset[size_t(e)], l.rows[size_t(e)], int32_t(e));
  }

  // cuBLASLt, per expert with rows: rows rounded up to 4 (the extra rows are padding rows of
  // the segment, or the expert's unused rows), A's VEC128 scales compacted per expert
  // ([ceil(K/128)][rows]), B's block scales with the K-block count padded to 4.
  std::vector<int64_t> rows4(size_t(groups), 0), sfa_offset(size_t(groups), 0);
  std::vector<float> sfa_cublas, sfb_cublas(size_t(groups * nb * l4), 1.0f);
  bool cublas_fits = true;
  for (int64_t e = 0; e < groups; ++e) {
    const int64_t r4 = (l.rows[size_t(e)] + 3) / 4 * 4, first = l.offset[size_t(e)];
    rows4[size_t(e)] = r4;
    sfa_offset[size_t(e)] = int64_t(sfa_cublas.size());
    if (r4 == 0) continue;
    if (first + r4 > m) {
      cublas_fits = false;
      continue;
    }
    for (int64_t j = 0; j < kb; ++j)
      for (int64_t i = 0; i < r4; ++i) sfa_cublas.push_back(a.scales[size_t(j * a.scale_stride + first + i)]);
    for (int64_t i = 0; i < nb; ++i)
      for (int64_t j = 0; j < kb; ++j)
        sfb_cublas[size_t((e * nb + i) * l4 + j)] = sfb[size_t((e * nb + i) * kb + j)];
  }
  if (sfa_cublas.empty()) sfa_cublas.push_back(1.0f);

  // Rotation: sets enough to cover 256 MB of what one call reads and writes (the experts with
  // rows, the real rows of A and D), as many as fit in 70% of the free device memory.
  int64_t active = 0;
  for (int64_t r : l.rows) active += r > 0;
  const size_t touched = size_t(l.real_rows * k + active * n * k) + size_t(l.real_rows * kb + active * nb * kb) * 4 +
                         size_t(l.real_rows * n) * 2;
  const size_t allocated = size_t(m * k + groups * n * k) + (a.scales.size() + sfb.size()) * 4 +
                           (cublas != nullptr ? (sfa_cublas.size() + sfb_cublas.size()) * 4 + size_t(m * n) * 2 : 0) +
                           size_t(m * n) * 2;
  const int sets = rotation_sets(touched, allocated);
  row.sets = sets;
  // The row -> expert map / masked_m: read by every call, one copy for all sets (make_sets
  // waits for this upload too).
  DeviceBuffer index_buffer;
  upload_vector(&index_buffer, index);
  const std::vector<float> none;
  const std::vector<Set> s =
      make_sets(sets, SetContents{a.data, b.data, a.scales, sfb, cublas != nullptr ? sfa_cublas : none,
                                  cublas != nullptr ? sfb_cublas : none, none, size_t(m * n) * 2,
                                  cublas != nullptr ? size_t(m * n) * 2 : 0});

  auto ours = [&](int i, cudaStream_t st) {
    const Set& x = s[size_t(i)];
    const Fp8Matrix ma{x.a.get(), m, k, k}, mb{x.b.get(), groups * n, k, k};
    const ScaleMatrix sa{x.sfa.get<float>(), m, kb, 1, a.scale_stride};
    const ScaleMatrix sb{x.sfb.get<float>(), groups * nb, kb, kb, 1};
    const Bf16Matrix md{x.d.get(), m, n, n};
    if (masked && config != nullptr)
      gemm_fp8_nt_grouped_masked(ma, sa, mb, sb, md, index_buffer.get<int32_t>(), groups, g.expected_m, *config, st);
    else if (masked)
      gemm_fp8_nt_grouped_masked(ma, sa, mb, sb, md, index_buffer.get<int32_t>(), groups, g.expected_m, st);
    else if (config != nullptr)
      gemm_fp8_nt_grouped_contiguous(ma, sa, mb, sb, md, index_buffer.get<int32_t>(), groups, *config, st);
    else
      gemm_fp8_nt_grouped_contiguous(ma, sa, mb, sb, md, index_buffer.get<int32_t>(), groups, st);
  };
  const double flops = 2.0 * double(l.real_rows) * double(n) * double(k);
  time_ours(&row, ours, flops, double(touched), sets, timing_of(o), stream);

  if (cublas != nullptr) {
    if (!cublas_fits) {
      row.cublas_note = "an expert's rows rounded up to 4 pass the end of A (max_m % 4 != 0)";
      return row;
    }
    // One cuBLASLt problem per distinct row count, prepared with the first such expert's scales.
    const GroupProblems problems = group_problems(cublas, rows4, [&](int64_t e, std::string* why) {
      return cublas->add_problem(CublasLtGemm::Form::Forward, rows4[size_t(e)], n, k,
                                 s[0].sfa_cublas.get<float>() + sfa_offset[size_t(e)],
                                 s[0].sfb_cublas.get<float>() + e * nb * l4, why);
    });
    time_cublas_groups(
        &row, flops, problems, *cublas, ours,
        [&](int i, int64_t e, int p, int a, cudaStream_t st) {
          const Set& x = s[size_t(i)];
          const int64_t first = l.offset[size_t(e)];
          cublas->run_problem(p, x.a.get<uint8_t>() + first * k, x.sfa_cublas.get<float>() + sfa_offset[size_t(e)],
                              x.b.get<uint8_t>() + e * n * k, x.sfb_cublas.get<float>() + e * nb * l4,
                              x.d_cublas.get<uint16_t>() + first * n, a, st);
        },
        [&](const std::function<void(int, cudaStream_t)>& call) {
          call(0, stream);
          cuda_check(cudaStreamSynchronize(stream), "cuBLASLt");
          // Both on the real rows only.
          std::vector<uint16_t> d1(size_t(l.real_rows * n)), d2(d1.size());
          size_t at = 0;
          for (int64_t e = 0; e < groups; ++e) {
            const size_t count = size_t(l.rows[size_t(e)] * n), from = size_t(l.offset[size_t(e)] * n);
            cuda_check(cudaMemcpy(d1.data() + at, s[0].d.get<uint16_t>() + from, count * 2, cudaMemcpyDeviceToHost),
                       "copy");
            cuda_check(cudaMemcpy(d2.data() + at, s[0].d_cublas.get<uint16_t>() + from, count * 2,
                                  cudaMemcpyDeviceToHost),
                       "copy");
            at += count;
          }
          row.rel_diff = relative_difference(d1, d2);
        },
        sets, timing_of(o), stream);
  }
  return row;
}

// The k-grouped weight gradient on one shape of the set: `groups` groups with K_g drawn as
// the shape file says (expected_k x U[0.7, 1.3], rounded up to 128; seeded), D [groups * M,
// N] fp32 += A_g x B_g^T in place. cuBLASLt: one WeightGradient GEMM per group (beta 1) in a
// loop, on the same buffers (each group a column range of A and B, its scales the matching
// columns of the VEC128 tensors). FLOPs count sum K_g.
Row bench_k_grouped_shape(const host::KGroupedShape& g, const BenchOptions& o, CublasLtGemm* cublas,
                          cudaStream_t stream, const KernelConfig* config) {
  const int64_t groups = g.groups, m = g.m, n = g.n;
  host::SplitMix64 rng(o.seed + uint64_t(groups * 1009 + m * 131 + n * 7 + g.expected_k));
  const host::KGroupedLayout layout = host::k_grouped_layout(g, &rng);
  const std::vector<int32_t>& ks = layout.ks;
  const std::vector<int64_t>& start = layout.start;
  const int64_t k = layout.columns, real_k = layout.real_k;
  const int64_t kb = scale_blocks(k), rows = groups * m;
  Row row;
  row.kind = "k_grouped";
  row.m = m;
  row.n = n;
  row.k = k;
  row.groups = groups;
  row.expected_m = g.expected_k;
  row.a_rows = rows;
  row.group_sizes.assign(ks.begin(), ks.end());
  row.sizes_listed = !g.ks.empty();
  row.kernel = config != nullptr ? config_name(*config, /*wgrad=*/true) : kernel_name(host::prewarm_shape(g));
  // cuBLASLt reads the per-token scales as VEC128 ([ceil(K/128)][rows], unpadded): M and N
  // must be multiples of 4 so that both read the same buffers.
  const bool cublas_fits = m % 4 == 0 && n % 4 == 0;
  host::Fp8Operand a = host::random_operand(m, k, k, true, o.seed + uint64_t(m * 31 + k));
  host::Fp8Operand b = host::random_operand(n, k, k, true, o.seed + uint64_t(n * 13 + k + groups));
  // The columns from a group's end to its next 128-column boundary hold zeros (the layout's
  // rule): listed K_g need not be multiples of 128.
  for (int64_t e = 0; e < groups; ++e)
    for (int64_t c = start[size_t(e)] + ks[size_t(e)]; c < start[size_t(e)] + k_grouped_columns(ks[size_t(e)]); ++c) {
      for (int64_t r = 0; r < m; ++r) a.data[size_t(r * k + c)] = 0;
      for (int64_t r = 0; r < n; ++r) b.data[size_t(r * k + c)] = 0;
    }
  std::vector<float> d0(size_t(rows * n));
  const double d_range = 200.0 * std::sqrt(double(k) / double(groups));
  for (float& v : d0) v = float((rng.uniform() * 2 - 1) * d_range);

  const size_t set_bytes = size_t(m * k + n * k) + (a.scales.size() + b.scales.size() + d0.size()) * 4;
  const int sets = rotation_sets(set_bytes, set_bytes);
  row.sets = sets;
  DeviceBuffer group_k;
  upload_vector(&group_k, ks);  // make_sets waits for this upload too
  const std::vector<float> none;
  const std::vector<Set> s = make_sets(sets, SetContents{a.data, b.data, a.scales, b.scales, none, none, d0});

  auto ours = [&](int i, cudaStream_t st) {
    const Set& x = s[size_t(i)];
    const Fp32Matrix md{x.d.get<float>(), rows, n, n};
    const Fp8Matrix ma{x.a.get(), m, k, k}, mb{x.b.get(), n, k, k};
    const ScaleMatrix sa{x.sfa.get<float>(), m, kb, 1, a.scale_stride}, sb{x.sfb.get<float>(), n, kb, 1, b.scale_stride};
    if (config != nullptr)
      gemm_fp8_nt_wgrad_k_grouped(ma, sa, mb, sb, md, &md, group_k.get<int32_t>(), groups, *config, st);
    else
      gemm_fp8_nt_wgrad_k_grouped(ma, sa, mb, sb, md, &md, group_k.get<int32_t>(), groups, st);
  };
  const double flops = 2.0 * double(m) * double(n) * double(real_k);
  const double bytes = double(m * k + n * k) + double((m + n) * kb) * 4 + 2.0 * 4 * double(rows * n);
  const std::vector<float> d_ours =
      first_call_fp32(&row, ours, flops, bytes, s[0].d.get(), d0.size(), sets, timing_of(o), stream);

  if (cublas != nullptr && !cublas_fits) row.cublas_note = "M or N not a multiple of 4";
  if (cublas != nullptr && cublas_fits) {
    // One cuBLASLt problem per distinct K_g, over the group's padded columns (zeros past K_g:
    // the same sums, and a K cuBLASLt takes).
    std::vector<int64_t> columns;
    for (const int32_t kg : ks) columns.push_back(k_grouped_columns(kg));
    const GroupProblems problems = group_problems(cublas, columns, [&](int64_t e, std::string* why) {
      const float* sfa = s[0].sfa.get<float>() + start[size_t(e)] / 128 * m;
      const float* sfb = s[0].sfb.get<float>() + start[size_t(e)] / 128 * n;
      return cublas->add_problem(CublasLtGemm::Form::WeightGradient, m, n, columns[size_t(e)], sfa, sfb, why, k);
    });
    time_cublas_groups(
        &row, flops, problems, *cublas, ours,
        [&](int i, int64_t e, int p, int a, cudaStream_t st) {
          const Set& x = s[size_t(i)];
          const int64_t at = start[size_t(e)];
          cublas->run_problem(p, x.a.get<uint8_t>() + at, x.sfa.get<float>() + at / 128 * m, x.b.get<uint8_t>() + at,
                              x.sfb.get<float>() + at / 128 * n, x.d.get<float>() + e * m * n, a, st);
        },
        [&](const std::function<void(int, cudaStream_t)>& call) {
          // One call from the same initial D as ours.
          upload(s[0].d.get(), d0.data(), d0.size() * 4);
          cuda_check(cudaDeviceSynchronize(), "upload");
          call(0, stream);
          cuda_check(cudaStreamSynchronize(stream), "cuBLASLt");
          std::vector<float> d_theirs(d0.size());
          cuda_check(cudaMemcpy(d_theirs.data(), s[0].d.get(), d_theirs.size() * 4, cudaMemcpyDeviceToHost), "copy");
          row.rel_diff = relative_difference(d_ours, d_theirs);
        },
        sets, timing_of(o), stream);
  }
  return row;
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d", std::gmtime(&t));
  return buffer;
}

}  // namespace

bool parse_kernel_config(const std::string& text, KernelConfig* config) {
  int v[7] = {0, 0, 0, 8, 0, -1, 1};
  int count = 0;
  size_t pos = 0;
  while (pos <= text.size() && count < 8) {
    const size_t comma = text.find(',', pos);
    const std::string field = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const size_t digits_from = !field.empty() && field[0] == '-' ? 1 : 0;  // tma_store may be -1 (auto)
    if (field.size() <= digits_from || field.find_first_not_of("0123456789", digits_from) != std::string::npos ||
        field.size() > 6)
      return false;
    if (count == 7) return false;
    v[count++] = std::stoi(field);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (count < 3) return false;
  *config = KernelConfig{v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
  return true;
}

namespace {

// Times the three quantizers on one [rows, cols] bf16 tensor (random data, copies
// rotated like the GEMM bench) and prints their bandwidth.
void bench_quantize_shape(int64_t rows, int64_t cols, const BenchOptions& o, cudaStream_t stream, nlohmann::json* out) {
  const int64_t ld = (cols + 7) / 8 * 8, kb = (cols + 127) / 128, rb = (rows + 127) / 128;
  const int64_t ldq = (cols + 15) / 16 * 16, ldqt = (rows + 15) / 16 * 16;
  const size_t x_bytes = size_t(rows * ld) * 2;
  const int sets = static_cast<int>(std::clamp<size_t>((kRotationBytes + x_bytes - 1) / x_bytes, 1, 16));
  std::vector<uint16_t> host_x(size_t(rows * ld));
  host::SplitMix64 rng(o.seed + uint64_t(rows * 7 + cols));
  for (uint16_t& v : host_x) v = host::float_to_bf16(float((rng.uniform() * 2 - 1) * 8));
  std::vector<DeviceBuffer> xs;
  for (int i = 0; i < sets; ++i) {
    xs.emplace_back(x_bytes);
    upload(xs.back().get(), host_x.data(), x_bytes);
  }
  DeviceBuffer q(size_t(std::max(rows * ldq, cols * ldqt)));
  DeviceBuffer sf(size_t(std::max({kb * per_token_scale_stride(rows), rb * kb, rb * per_token_scale_stride(cols)})) * 4);
  struct Op {
    const char* name;
    std::function<void(int, cudaStream_t)> call;
    double bytes;
  };
  const double in = double(rows * cols) * 2, q_bytes = double(rows * cols);
  const std::vector<Op> ops = {
      {"quantize_per_token",
       [&](int i, cudaStream_t st) {
         quantize_per_token({xs[size_t(i)].get(), rows, cols, ld}, {q.get(), rows, cols, ldq},
                            per_token_scale_output(sf.get<float>(), rows, cols), {}, st);
       },
       in + q_bytes + double(rows * kb) * 4},
      {"quantize_per_block",
       [&](int i, cudaStream_t st) {
         quantize_per_block({xs[size_t(i)].get(), rows, cols, ld}, {q.get(), rows, cols, ldq},
                            block_scale_output(sf.get<float>(), rows, cols), {}, st);
       },
       in + q_bytes + double(rb * kb) * 4},
      {"quantize_transposed_per_token",
       [&](int i, cudaStream_t st) {
         quantize_transposed_per_token({xs[size_t(i)].get(), rows, cols, ld}, {q.get(), cols, rows, ldqt},
                                       per_token_scale_output(sf.get<float>(), cols, rows), {}, st);
       },
       in + q_bytes + double(cols * rb) * 4},
  };
  for (const Op& op : ops) {
    op.call(0, stream);
    cuda_check(cudaStreamSynchronize(stream), op.name);
    int calls = 0;
    const double us = time_calls(op.call, sets, timing_of(o), stream, &calls);
    const double gbs = op.bytes / us * 1e-3;
    fmt::print("{:>6} {:>6} | {:<30} | {:>8.1f} us {:>7.0f} GB/s {:>5.1f}% of 4.3 TB/s\n", rows, cols, op.name, us, gbs,
               100.0 * gbs / 4300.0);
    out->push_back({{"rows", rows}, {"cols", cols}, {"op", op.name}, {"us", us}, {"gbs", gbs}});
  }
}

}  // namespace

namespace {

// Writes a results file; false, with the reason on stderr, when it could not be written whole.
bool write_results(const std::string& path, const std::string& text, const char* option) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (out) return true;
  fmt::print(stderr, "bench: {}: could not write '{}'\n", option, path);
  return false;
}

}  // namespace

int run_bench(const BenchOptions& o) {
  const RuntimeInfo info = runtime_info();
  const DeviceInfo* device = nullptr;
  for (const DeviceInfo& d : info.devices)
    if (d.supported) {
      device = &d;
      break;
    }
  if (device == nullptr) {
    fmt::print(stderr, "bench: no sm_90 GPU ({})\n", info.devices.empty() ? info.driver : "none is sm_90");
    return kExitNoGpu;
  }
  cuda_check(cudaSetDevice(device->ordinal), "cudaSetDevice");
  if (std::string why; SmClock::instance(device->ordinal, &why) == nullptr)
    fmt::print(stderr, "bench: rows without the SM clock: {}\n", why);
  if (o.kernel_time) {
    std::string why;
    if (KernelTimer::instance(&why) == nullptr) {
      fmt::print(stderr, "bench --kernel-time: {}\n", why);
      return 1;
    }
  }
  const host::ShapeFile file = host::read_shape_file(o.shapes);
  std::unique_ptr<CublasLtGemm> cublas;
  std::string cublas_version = "not used";
  if (o.cublas) {
    std::string why;
    cublas = CublasLtGemm::open(&why);
    cublas_version = cublas ? cublas->version() : "unavailable: " + why;
  }
  cudaStream_t stream;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  if (o.quantize) {
    fmt::print("fp8gemm {} quantization bench on {}, {}\n", info.library_version, device->name, today());
    std::vector<std::pair<int64_t, int64_t>> sizes = {{4096, 7168}, {16384, 7168}};
    for (const GemmShape& s : file.dense)
      if (s.m >= 4096 && std::find(sizes.begin(), sizes.end(), std::pair{s.m, s.k}) == sizes.end())
        sizes.emplace_back(s.m, s.k);
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& [r, c] : sizes) bench_quantize_shape(r, c, o, stream, &rows);
    const bool written =
        o.json.empty() ||
        write_results(o.json, nlohmann::json{{"device", device->name}, {"date", today()}, {"rows", rows}}.dump(2) + "\n",
                      "--json");
    cudaStreamDestroy(stream);
    return written ? 0 : 1;
  }
  const std::vector<GemmShape>& shapes = o.wgrad ? file.wgrad : file.dense;
  if (o.wgrad && shapes.empty()) {
    fmt::print(stderr, "bench --wgrad: {} has no \"wgrad\" shapes\n", o.shapes);
    cudaStreamDestroy(stream);
    return 1;
  }
  if (o.grouped && file.grouped.empty() && file.k_grouped.empty()) {
    fmt::print(stderr, "bench --grouped: {} has no \"m_grouped_contiguous\", \"m_grouped_masked\" or \"k_grouped\" shapes\n",
               o.shapes);
    cudaStreamDestroy(stream);
    return 1;
  }
  // Compile everything first so that no compile lands between timings.
  PrewarmOptions prewarm_options;
  prewarm_options.b_constant = o.b_constant;
  if (o.grouped) {
    std::vector<GemmShape> planned;
    for (const host::GroupedShape& g : file.grouped) planned.push_back(host::grouped_layout(g, o.seed).plan);
    for (const host::KGroupedShape& g : file.k_grouped) planned.push_back(host::prewarm_shape(g));
    prewarm(planned, prewarm_options);
  } else {
    prewarm(shapes, prewarm_options);
  }

  fmt::print("fp8gemm {} {}bench on {} ({} SMs), driver {}, cuBLASLt {}, {}\n", info.library_version,
             o.wgrad        ? "weight-gradient (D fp32 += A x B^T in place, 1x128 scales on both) "
             : o.grouped    ? "grouped (experts' rows or k-grouped columns U[0.7, 1.3] x exp; cuBLASLt: a loop over the groups) "
             : o.b_constant ? "(B constant) "
                            : "",
             device->name, device->sm_count, info.driver, cublas_version, today());
  if (o.grouped)
    fmt::print("{:>10} {:>3} {:>6} {:>6} {:>6} {:>6} | {:>9} {:>8} {:>7} {:>6} | {:>9} {:>8} | {:>7} {:>9} | {}\n",
               "kind", "G", "exp", "M", "N", "K", "us", "TFLOPS", "GB/s", "host", "cuBLASLt", "TFLOPS", "speedup",
               "rel.diff", "kernel");
  else
    fmt::print("{:>6} {:>6} {:>6} | {:>9} {:>8} {:>7} {:>6} | {:>9} {:>8} | {:>7} {:>9} | {}\n", "M", "N", "K",
               "us", "TFLOPS", "GB/s", "host", "cuBLASLt", "TFLOPS", "speedup", "rel.diff", "kernel");
  std::vector<Row> rows;
  bool mismatch = false;
  // bf16 output rounds each element at 2^-9; fp32 output differs only in how each library
  // accumulates (cuBLASLt's weight gradient is about 1.7e-4 from fp64 on an H200).
  const double tolerance = o.wgrad ? 1e-3 : 1e-2;
  std::vector<const KernelConfig*> choices;
  for (const KernelConfig& c : o.configs) choices.push_back(&c);
  if (choices.empty()) choices.push_back(nullptr);  // the library's own choice
  // The cuBLASLt columns, the relative difference and the kernel of a row.
  auto tail = [](const Row& r, bool bad) {
    return fmt::format("| {:>9} {:>8} | {:>7} {:>9} | {}{}", r.cublas_us > 0 ? fmt::format("{:.1f}", r.cublas_us) : "-",
                       r.cublas_tflops > 0 ? fmt::format("{:.1f}", r.cublas_tflops) : "-",
                       r.cublas_us > 0 ? fmt::format("{:.2f}x", r.cublas_us / r.us) : "-",
                       r.rel_diff >= 0 ? fmt::format("{:.1e}", r.rel_diff) : "-",
                       r.sm_mhz > 0 ? fmt::format("{}  {:.0f} MHz{}", r.kernel, r.sm_mhz,
                                                  r.clock_held > 0 ? fmt::format(" (held {:.0f}%)", 100 * r.clock_held) : "")
                                    : r.kernel,
                       bad ? "  MISMATCH" : (r.cublas_note.empty() ? "" : "  (cuBLASLt: " + r.cublas_note + ")"));
  };
  // A config the form's kernel does not take (Error InvalidArgument): a "skipped" line.
  auto skipped = [](const std::string& what, const KernelConfig* config, bool wgrad, const Error& e) {
    if (config == nullptr || e.code() != ErrorCode::InvalidArgument) throw;  // (called inside the handler)
    fmt::print("{} | {} skipped: {}\n", what, config_name(*config, wgrad), e.what());
  };
  if (o.grouped) {
    for (const host::GroupedShape& g : file.grouped) {
      const char* form = g.kind == GemmKind::GroupedMasked ? "masked" : "contiguous";
      for (const KernelConfig* config : choices) {
        Row r;
        try {
          r = bench_grouped_shape(g, o, cublas.get(), stream, config);
        } catch (const Error& e) {
          skipped(fmt::format("{:>10} {:>3} {:>6} {:>6} {:>6}", form, g.groups, g.expected_m, g.n, g.k), config, false,
                  e);
          continue;
        }
        const bool bad = r.rel_diff > tolerance;
        mismatch = mismatch || bad;
        fmt::print("{:>10} {:>3} {:>6} {:>6} {:>6} {:>6} | {:>9.1f} {:>8.1f} {:>7.0f} {:>6.1f} {}\n", form, r.groups,
                   r.expected_m, r.m, r.n, r.k, r.us, r.tflops, r.gbs, r.host_us, tail(r, bad));
        std::fflush(stdout);
        rows.push_back(r);
      }
    }
    for (const host::KGroupedShape& g : file.k_grouped) {
      for (const KernelConfig* config : choices) {
        Row r;
        try {
          r = bench_k_grouped_shape(g, o, cublas.get(), stream, config);
        } catch (const Error& e) {
          skipped(fmt::format("{:>10} {:>3} {:>6} {:>6} {:>6}", "k-grouped", g.groups, g.expected_k, g.m, g.n), config,
                  true, e);
          continue;
        }
        // fp32 output: the weight gradient's tolerance.
        const bool bad = r.rel_diff > 1e-3;
        mismatch = mismatch || bad;
        fmt::print("{:>10} {:>3} {:>6} {:>6} {:>6} {:>6} | {:>9.1f} {:>8.1f} {:>7.0f} {:>6.1f} {}\n", "k-grouped",
                   r.groups, r.expected_m, r.m, r.n, r.k, r.us, r.tflops, r.gbs, r.host_us, tail(r, bad));
        std::fflush(stdout);
        rows.push_back(r);
      }
    }
  }
  const std::vector<GemmShape> none;
  for (const GemmShape& shape : o.grouped ? none : shapes) {
    if (shape.m == 0 || shape.n == 0) continue;
    for (const KernelConfig* config : choices) {
      Row r;
      try {
        // (Every config is checked against cuBLASLt and paired with its own cuBLASLt timing.)
        r = o.wgrad ? bench_wgrad_shape(shape, o, cublas.get(), stream, config)
                    : bench_shape(shape, o, cublas.get(), stream, config);
      } catch (const Error& e) {
        skipped(fmt::format("{:>6} {:>6} {:>6}", shape.m, shape.n, shape.k), config, o.wgrad, e);
        continue;
      }
      const bool bad = r.rel_diff > tolerance;
      mismatch = mismatch || bad;
      fmt::print("{:>6} {:>6} {:>6} | {:>9.1f} {:>8.1f} {:>7.0f} {:>6.1f} {}\n", r.m, r.n, r.k, r.us, r.tflops, r.gbs,
                 r.host_us, tail(r, bad));
      std::fflush(stdout);
      rows.push_back(r);
    }
  }
  // Geometric means per M (grouped: per kind), and per config when --config gave several.
  std::map<std::string, std::vector<const Row*>> by_m;
  for (const Row& r : rows)
    by_m[(o.grouped ? r.kind : fmt::format("M={:<5}", r.m)) + (o.configs.empty() ? "" : " " + r.kernel)].push_back(&r);
  // Dense and wgrad: in the order of M.
  std::vector<std::pair<std::string, std::vector<const Row*>>> groups_in_order(by_m.begin(), by_m.end());
  if (!o.grouped)
    std::sort(groups_in_order.begin(), groups_in_order.end(),
              [](const auto& x, const auto& y) { return x.second.front()->m < y.second.front()->m; });
  for (const auto& [label, group] : groups_in_order) {
    double ours = 0, theirs = 0, speedup = 0;
    int both = 0;
    for (const Row* r : group) {
      ours += std::log(r->tflops);
      if (r->cublas_us > 0) {
        theirs += std::log(r->cublas_tflops);
        speedup += std::log(r->cublas_us / r->us);
        ++both;
      }
    }
    fmt::print("geomean {}: fp8gemm {:.1f} TFLOPS", label, std::exp(ours / double(group.size())));
    if (both == int(group.size()))
      fmt::print(", cuBLASLt {:.1f} TFLOPS, speedup {:.2f}x", std::exp(theirs / both), std::exp(speedup / both));
    fmt::print("\n");
  }

  nlohmann::json j;
  j["device"] = device->name;
  j["sms"] = device->sm_count;
  j["driver"] = info.driver;
  j["library_version"] = info.library_version;
  j["cublaslt_version"] = cublas_version;
  j["date"] = today();
  j["shapes_file"] = o.shapes;
  // The timing condition as fields (tools/acceptance.py checks them against the anchors').
  nlohmann::json configs = nlohmann::json::array();
  for (const KernelConfig& c : o.configs) configs.push_back(config_name(c, o.wgrad));
  j["condition"] = {{"isolated", o.isolated},
                    {"flush_mb", o.isolated ? nlohmann::json(o.flush_mb) : nlohmann::json()},
                    {"pause_ms", o.isolated ? nlohmann::json(o.pause_ms) : nlohmann::json()},
                    {"kernel_time", o.isolated && o.kernel_time},
                    {"replays", o.replays},
                    {"b_constant", o.b_constant},
                    {"configs", configs}};
  j["method"] = std::string(o.isolated ? "median time of isolated calls (each after a " + std::to_string(o.flush_mb) +
                                            " MB memset as L2 flush and followed by a " + std::to_string(o.pause_ms) +
                                            " ms pause)" +
                                            (o.kernel_time ? ", timed by the summed durations of the call's kernels "
                                                             "(CUPTI, as a profiler reports them; event_us: the events "
                                                             "around the same calls)"
                                                           : ", timed by events around the call")
                                      : "median per-call time of CUDA-graph replays (sustained load)") +
                ", rotating input copies (>= 256 MB), random data" +
                (SmClock::instance(device->ordinal, nullptr) != nullptr
                     ? "; sm_mhz: median SM clock (NVML) read right after each timed call or replay (with "
                       "cuBLASLt: both libraries' calls in alternation); sm_clock_held: the share of those "
                       "readings whose clock event reasons had the clock held down (power cap, thermal or "
                       "hardware slowdown)"
                     : "") +
                "; call_us (rows timed without cuBLASLt in alternation): each of our timed calls in order "
                "(isolated: call i on input set i % sets; sustained: the per-call time of each replay), "
                "call_sm_mhz: the SM clock read after each" +
                (o.b_constant ? "; gemm_fp8_nt with GemmOptions::b_constant" : "") +
                (o.wgrad ? "; wgrad: D fp32 += A x B^T in place (C = D), 1x128 scales on A and B, cuBLASLt beta 1" : "") +
                (o.grouped ? "; grouped: rows per expert as the shape file lists them (group_sizes_listed), else drawn "
                             "int(expected_m x U[0.7, 1.3]) (masked: clamped to max_m), "
                             "contiguous segments padded to 128 rows; m = real rows (FLOPs and bytes count only "
                             "those); cuBLASLt: one Forward GEMM per expert (rows rounded up to 4) in a loop; "
                             "k_grouped: K_g as listed, else expected_k x U[0.7, 1.3] rounded up to 128; each group's "
                             "columns padded to 128 with zeros, k = the padded sum, FLOPs count sum K_g; D [groups x m, "
                             "n] fp32 += in place, cuBLASLt: one VEC128 x VEC128 fp32 GEMM per group (beta 1) in a loop"
                           : "");
  for (const Row& r : rows) {
    nlohmann::json jr = {{"kind", r.kind}, {"m", r.m}, {"n", r.n}, {"k", r.k}, {"kernel", r.kernel}, {"us", r.us},
                         {"tflops", r.tflops}, {"gbs", r.gbs}, {"host_enqueue_us", r.host_us},
                         {"cublaslt_us", r.cublas_us}, {"cublaslt_tflops", r.cublas_tflops},
                         {"cublaslt_host_enqueue_us", r.cublas_host_us},
                         {"rel_diff_vs_cublaslt", r.rel_diff}, {"sets", r.sets}, {"calls_per_graph", r.calls_per_graph}};
    if (o.grouped) {
      jr["groups"] = r.groups;
      jr["expected_m"] = r.expected_m;
      if (r.max_m > 0) jr["max_m"] = r.max_m;
      jr["a_rows"] = r.a_rows;
      if (!r.group_sizes.empty()) {
        jr["group_sizes"] = r.group_sizes;
        jr["group_sizes_listed"] = r.sizes_listed;
      }
    }
    if (!r.cublas_note.empty()) jr["cublaslt_note"] = r.cublas_note;
    if (r.sm_mhz > 0) jr["sm_mhz"] = r.sm_mhz;
    if (r.clock_held >= 0) jr["sm_clock_held"] = r.clock_held;
    if (o.kernel_time) {
      jr["event_us"] = r.event_us;
      jr["cublaslt_event_us"] = r.cublas_event_us;
    }
    if (!r.call_us.empty()) jr["call_us"] = r.call_us;
    if (!r.call_mhz.empty()) jr["call_sm_mhz"] = r.call_mhz;
    j["rows"].push_back(jr);
  }
  bool written = o.json.empty() || write_results(o.json, j.dump(2) + "\n", "--json");
  if (!o.csv.empty()) {
    std::ostringstream csv;
    // Grouped rows add the experts' layout at the end (m is their real rows).
    csv << "m,n,k,kernel,us,tflops,gbs,host_enqueue_us,cublaslt_us,cublaslt_tflops,speedup,rel_diff,kind,"
           "cublaslt_host_enqueue_us"
        << (o.grouped ? ",groups,expected_m,max_m,a_rows\n" : "\n");
    for (const Row& r : rows) {
      csv << fmt::format("{},{},{},{},{:.2f},{:.1f},{:.0f},{:.2f},{:.2f},{:.1f},{:.3f},{:.2e},{},{:.2f}", r.m, r.n, r.k,
                         r.kernel, r.us, r.tflops, r.gbs, r.host_us, r.cublas_us, r.cublas_tflops,
                         r.cublas_us > 0 ? r.cublas_us / r.us : 0.0, r.rel_diff, r.kind, r.cublas_host_us);
      csv << (o.grouped ? fmt::format(",{},{},{},{}\n", r.groups, r.expected_m, r.max_m, r.a_rows) : "\n");
    }
    written = write_results(o.csv, csv.str(), "--csv") && written;
  }
  cudaStreamDestroy(stream);
  if (mismatch) return kExitMismatch;
  return written ? 0 : 1;
}

}  // namespace fp8gemm::cli
