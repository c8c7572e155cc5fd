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

namespace {

bool same_problem(const GemmProblem& x, const GemmProblem& y) { return x == y; }

}  // namespace

std::vector<TuneResult> tune(const std::vector<GemmShape>& shapes, const TuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<GemmShape> work;        // the first shape of each distinct problem with work to do ...
  std::vector<GemmProblem> problems;  // ... and that problem, as the library plans it
  for (const GemmShape& s : shapes) {
    check_gemm_shape(s, "tune");
    if (s.m == 0 || s.n == 0) continue;
    const GemmProblem problem = planned_problem(s, "tune");
    if (!tunable(problem.kind)) continue;
    auto same = [&](const GemmProblem& x) { return same_problem(x, problem); };
    if (std::none_of(problems.begin(), problems.end(), same)) {
      work.push_back(s);
      problems.push_back(problem);
    }
  }
  if (options.candidates < 1)
    fail(ErrorCode::InvalidArgument, "tune: candidates={} must be at least 1", options.candidates);
  if (options.jobs < 0)
    fail(ErrorCode::InvalidArgument, "tune: jobs={} must be >= 0 (0: one per hardware thread)", options.jobs);
  std::vector<TuneResult> results;
  if (work.empty()) return results;

  CallContext call(nullptr);
  DeviceRuntime& runtime = call_runtime(call);
  const TuningMetadata metadata = device_metadata(runtime.props());
  TunerSettings settings;
  settings.candidates = options.candidates;
  settings.jobs = options.jobs;
  for (size_t i = 0; i < work.size(); ++i) {
    const TuneOutcome outcome = tune_problem(runtime, Library::instance().store(), problems[i], settings);
    Library::instance().record_tuned(metadata, problems[i], outcome.best);
    TuneResult r;
    r.shape = work[i];
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
      p.shape = work[i];
      p.kernel = r.tuned_kernel;
      p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      options.on_progress(p);
    }
  }
  return results;
}

}  // namespace fp8gemm
