// tune / tuning mode / cache-only: the public side of measured config choice.

#include <algorithm>
#include <chrono>

#include "api/library.hpp"
#include "problem/validate.hpp"
#include "tuning/settings.hpp"
#include "tuning/tuner.hpp"
#include "util/error.hpp"

namespace fp8gemm {

using namespace detail;

void set_tuning_mode(TuningMode mode) {
  if (mode != TuningMode::Off && mode != TuningMode::Cached && mode != TuningMode::On)
    fail(ErrorCode::InvalidArgument, "set_tuning_mode: {} is not Off, Cached or On", static_cast<int>(mode));
  store_tuning_mode(mode);
}

TuningMode tuning_mode() { return current_tuning_mode(); }

void set_cache_only(bool on) { store_cache_only(on); }

bool cache_only() { return current_cache_only(); }

std::vector<TuneResult> tune(const std::vector<GemmShape>& shapes, const TuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<GemmShape> work;  // distinct shapes with work to do
  for (const GemmShape& s : shapes) {
    const KernelKind kind = kernel_kind_of(s.kind, "tune");
    const int n_multiple = n_multiple_of(s.kind);
    if (s.m < 0 || s.n < 0 || s.k <= 0 || s.n % n_multiple != 0 || s.k % 16 != 0 || s.m > kMaxDimension ||
        s.n > kMaxDimension || s.k > kMaxDimension)
      fail(ErrorCode::InvalidArgument,
           "tune: shape m={} n={} k={} is not valid for its kind (N % {} == 0, K % 16 == 0, K > 0)", s.m, s.n, s.k,
           n_multiple);
    if (s.m == 0 || s.n == 0) continue;
    if (!tunable(kind)) continue;  // grouped kernels use the heuristic's choice (not tuned yet)
    if (std::none_of(work.begin(), work.end(),
                     [&](const GemmShape& x) { return x.m == s.m && x.n == s.n && x.k == s.k && x.kind == s.kind; }))
      work.push_back(s);
  }
  if (options.candidates < 1)
    fail(ErrorCode::InvalidArgument, "tune: candidates={} must be at least 1", options.candidates);
  std::vector<TuneResult> results;
  if (work.empty()) return results;

  CallContext call(nullptr);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  const TuningMetadata metadata = device_metadata(device);
  TunerSettings settings;
  settings.candidates = options.candidates;
  settings.jobs = options.jobs;
  for (const GemmShape& s : work) {
    const KernelKind kind = kernel_kind_of(s.kind, "tune");
    const TuneOutcome outcome = tune_problem(runtime, Library::instance().store(), s.m, s.n, s.k, settings, kind);
    Library::instance().record_tuned(metadata, kind, s.m, s.n, s.k, outcome.best);
    TuneResult r;
    r.shape = s;
    r.heuristic_kernel = outcome.best.heuristic;
    r.heuristic_us = outcome.best.heuristic_us;
    r.tuned_kernel = outcome.best.spec.slug();
    r.tuned_us = outcome.best.us;
    r.candidates_timed = static_cast<int>(
        std::count_if(outcome.timed.begin(), outcome.timed.end(), [](const TimedConfig& t) { return t.us > 0; }));
    results.push_back(r);
    if (options.on_progress) {
      TuneProgress p;
      p.done = results.size();
      p.total = work.size();
      p.shape = s;
      p.kernel = r.tuned_kernel;
      p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      options.on_progress(p);
    }
  }
  return results;
}

}  // namespace fp8gemm
