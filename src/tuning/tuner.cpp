#include "tuning/tuner.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "driver/driver_api.hpp"
#include "families/family.hpp"
#include "heuristics/heuristics.hpp"
#include "runtime/planner.hpp"
#include "runtime/stats.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace fp8gemm::detail {
namespace {

constexpr size_t kRotationBytes = size_t(256) << 20;  // > 4x the 50-60 MB L2 of H100/H200
// (As many sets as that takes for small problems too: 8 sets of a decode shape's 5 MB stayed
// in L2, so B was timed hot where a model's calls read it from HBM.)
constexpr int kMaxSets = 64;
constexpr double kMinGain = 0.02;  // a candidate must beat the heuristic's choice by 2 % to replace it

// Device memory owned by the tuner.
class DeviceMemory {
 public:
  explicit DeviceMemory(size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) check_cu(driver().cuMemAlloc(&ptr_, bytes_), "cuMemAlloc (tuning buffers)");
  }
  ~DeviceMemory() {
    if (ptr_ != 0) driver().cuMemFree(ptr_);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* get() const { return reinterpret_cast<void*>(ptr_); }
  void upload(const void* host, size_t bytes) const {
    check_cu(driver().cuMemcpyHtoD(ptr_, host, bytes), "cuMemcpyHtoD (tuning buffers)");
  }
  void zero() const {
    if (ptr_ != 0) check_cu(driver().cuMemsetD8(ptr_, 0, bytes_), "cuMemsetD8 (tuning buffers)");
  }

 private:
  size_t bytes_;
  CUdeviceptr ptr_ = 0;
};

// Deterministic pseudo-random finite e4m3 bytes (NaN encodings 0x7f/0xff avoided) and
// positive scales.
std::vector<uint8_t> random_fp8(size_t count, uint64_t seed) {
  std::vector<uint8_t> v(count);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < count; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint8_t b = static_cast<uint8_t>(x >> 24);
    if ((b & 0x7f) == 0x7f) b ^= 0x40;
    v[i] = b;
  }
  return v;
}

std::vector<float> random_scales(size_t count, uint64_t seed) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = 0.5f + static_cast<float>((seed * 31 + i * 7) % 97) / 97.0f;
  return v;
}

// One copy of the operands on the device.
struct OperandSet {
  DeviceMemory a, sfa, b, sfb, d;
  explicit OperandSet(const TuneLayout& l)
      : a(l.a_bytes), sfa(l.sfa_bytes), b(l.b_bytes), sfb(l.sfb_bytes), d(l.d_bytes) {}
};

// The operands of a problem: random data copied into enough sets that rotating over them
// defeats L2, and the group data (one copy, read by every call as at run time).
class TuneOperands {
 public:
  explicit TuneOperands(const GemmProblem& problem)
      : layout_(tune_layout(problem)), group_info_(layout_.group_info.size() * 4) {
    const TuneLayout& l = layout_;
    const size_t set_bytes = l.a_bytes + l.b_bytes + l.sfa_bytes + l.sfb_bytes + l.d_bytes;
    const int sets = static_cast<int>(std::clamp<size_t>((kRotationBytes + set_bytes - 1) / set_bytes, 1, kMaxSets));
    for (int i = 0; i < sets; ++i) {
      sets_.push_back(std::make_unique<OperandSet>(l));
      const OperandSet& o = *sets_.back();
      args_.push_back(tune_args(problem, l, TuneBuffers{o.a.get(), o.sfa.get(), o.b.get(), o.sfb.get(), o.d.get(),
                                                        static_cast<const int32_t*>(group_info_.get())}));
    }
    // A valid call of the kind's public entry point, else nothing is uploaded or launched.
    FP8GEMM_CHECK(validate_tune_args(problem.kind, args_.front()), "{} has nothing to time", describe(problem));
    const std::vector<uint8_t> host_a = random_fp8(l.a_bytes, 1), host_b = random_fp8(l.b_bytes, 2);
    const std::vector<float> host_sfa = random_scales(l.sfa_bytes / 4, 3), host_sfb = random_scales(l.sfb_bytes / 4, 4);
    if (!l.group_info.empty()) group_info_.upload(l.group_info.data(), l.group_info.size() * 4);
    for (const std::unique_ptr<OperandSet>& o : sets_) {
      o->a.upload(host_a.data(), l.a_bytes);
      o->b.upload(host_b.data(), l.b_bytes);
      o->sfa.upload(host_sfa.data(), l.sfa_bytes);
      o->sfb.upload(host_sfb.data(), l.sfb_bytes);
      o->d.zero();  // the weight gradients accumulate into it (C = D)
    }
    // Copies from pageable memory may still be in flight when cuMemcpyHtoD returns, and the
    // timing stream does not wait for the legacy stream: wait for them here.
    check_cu(driver().cuCtxSynchronize(), "cuCtxSynchronize (tuning buffers)");
  }

  // The arguments of the i-th call: the sets in turn.
  const TuneArgs& args(int i) const { return args_[static_cast<size_t>(i) % args_.size()]; }

 private:
  TuneLayout layout_;
  DeviceMemory group_info_;
  std::vector<std::unique_ptr<OperandSet>> sets_;
  std::vector<TuneArgs> args_;
};

// Compiles (or loads) every candidate, in parallel. Returns per candidate why it cannot be
// timed, or "".
std::vector<std::string> compile_candidates(KernelStore& store, const std::vector<KernelSpec>& candidates, int jobs) {
  std::vector<std::string> notes(candidates.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < candidates.size(); i = next.fetch_add(1)) {
      try {
        const auto binary = store.get(candidates[i]);
        if (binary->resources.slow_path())
          notes[i] = std::string("compiled to a slow path (") + binary->resources.slow_path_reason() + ")";
      } catch (const std::exception& e) {
        notes[i] = e.what();
      }
    }
  };
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads_wanted = std::min<size_t>(candidates.size(), jobs > 0 ? jobs : hardware);
  std::vector<std::thread> threads;
  for (size_t t = 1; t < threads_wanted; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  return notes;
}

// A stream and two events of the tuner's own, destroyed with it.
class TimingStream {
 public:
  TimingStream() {
    const DriverApi& cu = driver();
    check_cu(cu.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate (tuning)");
    check_cu(cu.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate");
    check_cu(cu.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  }
  ~TimingStream() {
    if (stop_ != nullptr) driver().cuEventDestroy(stop_);
    if (start_ != nullptr) driver().cuEventDestroy(start_);
    if (stream_ != nullptr) driver().cuStreamDestroy(stream_);
  }
  TimingStream(const TimingStream&) = delete;
  TimingStream& operator=(const TimingStream&) = delete;

  CUstream get() const { return stream_; }
  // Microseconds per call of `calls` back-to-back calls of `call(c)`.
  template <typename Call>
  double time_us(int calls, const Call& call) const {
    const DriverApi& cu = driver();
    check_cu(cu.cuEventRecord(start_, stream_), "cuEventRecord");
    for (int c = 0; c < calls; ++c) call(c);
    check_cu(cu.cuEventRecord(stop_, stream_), "cuEventRecord");
    check_cu(cu.cuEventSynchronize(stop_), "cuEventSynchronize (tuning)");
    float ms = 0;
    check_cu(cu.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
    return 1e3 * ms / calls;
  }

 private:
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
};

// Plans (loads) and warms up every candidate that compiled; then times them round-robin, one
// batch each per round, so that slow drifts of the clock (the card heats up under FP8 load)
// spread over all candidates instead of favouring the ones timed first.
std::vector<TimedConfig> time_candidates(DeviceRuntime& runtime, KernelStore& store, const GemmProblem& problem,
                                         const std::vector<KernelSpec>& candidates,
                                         const std::vector<std::string>& notes, const TunerSettings& settings) {
  const TuneOperands operands(problem);
  const TimingStream stream;
  std::vector<TimedConfig> timed(candidates.size());
  std::vector<const LaunchPlan*> plans(candidates.size(), nullptr);
  std::vector<std::vector<double>> batches(candidates.size());
  auto call = [&](const LaunchPlan& plan, int i) {
    launch_tune_call(plan, problem.kind, operands.args(i), stream.get());
  };
  for (size_t i = 0; i < candidates.size(); ++i) {
    timed[i].spec = candidates[i];
    timed[i].note = notes[i];
    if (!notes[i].empty()) continue;
    try {
      plans[i] = &runtime.plan(problem.m, candidates[i], store);
      for (int w = 0; w < 3; ++w) call(*plans[i], w);
      check_cu(driver().cuStreamSynchronize(stream.get()), "cuStreamSynchronize (tuning warm-up)");
    } catch (const Error& e) {
      // E.g. no cluster of this shape fits next to other work. (A launch failure that
      // breaks the context makes every later candidate fail too, and then tuning fails.)
      timed[i].note = e.what();
      plans[i] = nullptr;
    }
  }
  // Each round starts one candidate later, so that no candidate always runs in the same place
  // of the round (e.g. right after the slowest one, or first).
  for (int round = 0; round < settings.batches; ++round) {
    for (size_t j = 0; j < candidates.size(); ++j) {
      const size_t i = (j + static_cast<size_t>(round)) % candidates.size();
      if (plans[i] == nullptr) continue;
      try {
        const int first = round * settings.calls_per_batch;
        batches[i].push_back(stream.time_us(settings.calls_per_batch, [&](int c) { call(*plans[i], first + c); }));
      } catch (const Error& e) {
        timed[i].note = e.what();
        plans[i] = nullptr;
        batches[i].clear();
      }
    }
  }
  // A fault that broke the context (a candidate's, or other work's) fails every call after
  // it: the tuning fails with it, as a CUDA error, rather than report "no candidate could
  // run" or store a winner timed before it. (Sticky errors are returned by every sync.)
  check_cu(driver().cuStreamSynchronize(stream.get()), "cuStreamSynchronize (tuning: after the candidates)");
  for (size_t i = 0; i < candidates.size(); ++i) {
    TimedConfig& t = timed[i];
    if (plans[i] != nullptr && !batches[i].empty()) {
      std::vector<double>& b = batches[i];
      std::nth_element(b.begin(), b.begin() + b.size() / 2, b.end());
      t.us = b[b.size() / 2];
    }
    log(LogLevel::Info, "tuning {}: {} {}", describe(problem), t.spec.slug(),
        t.us > 0 ? fmt::format("{:.1f} us", t.us) : "skipped: " + t.note);
  }
  return timed;
}

// The heuristic's choice stays unless another candidate is clearly faster: run-to-run
// noise on one card is a few per cent, and a config change should not be a coin toss.
TunedEntry choose_winner(const GemmProblem& problem, const std::vector<TimedConfig>& timed) {
  const TimedConfig* best = nullptr;
  const TimedConfig* heuristic = nullptr;
  for (const TimedConfig& t : timed) {
    if (t.us <= 0) continue;
    if (heuristic == nullptr) heuristic = &t;  // the model's first choice that runs
    if (best == nullptr || t.us < best->us) best = &t;
  }
  if (best == nullptr)
    fail(ErrorCode::CompileFailed, "tuning {}: no candidate could run (first: {})", describe(problem),
         timed.empty() ? "none" : timed.front().note);
  if (best->us > heuristic->us * (1.0 - kMinGain)) best = heuristic;
  TunedEntry entry;
  entry.spec = best->spec;
  entry.m_measured = problem.m;
  entry.us = best->us;
  entry.heuristic = heuristic->spec.slug();
  entry.heuristic_us = heuristic->us;
  entry.k = problem.k;
  entry.groups = problem.plan_groups();
  return entry;
}

}  // namespace

std::vector<KernelSpec> tuning_candidates(const GemmProblem& problem, const DeviceTraits& device, int count) {
  const std::vector<RankedConfig> ranked = rank_configs(cost_model_problem(problem), device);
  std::vector<KernelSpec> out;
  auto add = [&](const KernelSpec& s) {
    if (static_cast<int>(out.size()) < count && spec_illegal_reason(s).empty() &&
        std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  };
  const int main_count = std::max(1, count - 2);
  // Half of them the model's best, the other half the best-ranked config of each tile shape
  // not yet among them: the model's misjudgements are per tile shape (docs/PERFORMANCE.md, log
  // 126: on 3000x3584x18944 the first 24 ranked configs are 192x112, 256x128 and 256x112
  // variants, the best measured tile, 192x128, comes 25th), so eight candidates by rank alone
  // time one or two shapes.
  const int by_rank = (main_count + 1) / 2;
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < by_rank; ++i) add(ranked[i].spec);
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < main_count; ++i) {
    const KernelConfig& c = ranked[i].spec.config;
    const bool shape_taken = std::any_of(out.begin(), out.end(), [&](const KernelSpec& o) {
      return o.config.block_m == c.block_m && o.config.block_n == c.block_n;
    });
    if (!shape_taken) add(ranked[i].spec);
  }
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < main_count; ++i) add(ranked[i].spec);
  // Rasterization is not modelled: try the first choice with narrower and wider stripes.
  for (int group : {16, 4}) {
    KernelSpec s = ranked.front().spec;
    s.config.group_n = group;
    add(s);
  }
  for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < count; ++i) add(ranked[i].spec);
  return out;
}

std::string describe(const GemmProblem& p) {
  const std::string dims = fmt::format("{} M={} N={} K={}", kind_name(p.kind), p.m, p.n, p.k);
  const Family& f = family(p.kind);
  return f.m_grouping != 0 || f.k_at_run_time ? fmt::format("{} groups={}", dims, p.groups) : dims;
}

TuneOutcome tune_problem(DeviceRuntime& runtime, KernelStore& store, const GemmProblem& problem,
                         const TunerSettings& settings) {
  const std::vector<KernelSpec> candidates =
      tuning_candidates(problem, runtime.traits(), std::max(1, settings.candidates));
  const std::vector<std::string> notes = compile_candidates(store, candidates, settings.jobs);
  TuneOutcome outcome;
  outcome.timed = time_candidates(runtime, store, problem, candidates, notes, settings);
  outcome.best = choose_winner(problem, outcome.timed);
  counters().problems_tuned.fetch_add(1);
  return outcome;
}

}  // namespace fp8gemm::detail
