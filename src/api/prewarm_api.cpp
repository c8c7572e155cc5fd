// prewarm: the kernels a list of shapes needs, compiled in parallel into the cache.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <tuple>

#include "api/library.hpp"
#include "families/family.hpp"
#include "runtime/planner.hpp"
#include "util/error.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

void check_shape(const GemmShape& s) { check_gemm_shape(s, "prewarm"); }

// The most multiprocessors a plan is made for (a Hopper GPU has at most 144).
constexpr int kMaxPlannedSms = 1024;

void check_options(const PrewarmOptions& o) {
  if (o.jobs < 0) fail(ErrorCode::InvalidArgument, "prewarm: jobs = {} must be >= 0 (0: one per hardware thread)", o.jobs);
  if (o.num_sms < 0 || o.num_sms > kMaxPlannedSms)
    fail(ErrorCode::InvalidArgument,
         "prewarm: num_sms = {} must be 0 (the current device's, else 132) or a multiprocessor count in [1, {}]",
         o.num_sms, kMaxPlannedSms);
}

}  // namespace

PrewarmReport prewarm(const std::vector<GemmShape>& shapes, const PrewarmOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PrewarmReport report;
  report.shapes = shapes.size();
  check_options(options);
  const DeviceTraits traits = planning_traits(options.num_sms);
  report.num_sms = traits.num_sms;

  std::vector<GemmShape> work;  // distinct non-empty shapes
  for (const GemmShape& s : shapes) {
    check_shape(s);
    if (s.m == 0 || s.n == 0) continue;
    bool seen = false;
    for (const GemmShape& x : work)
      seen = seen || std::tie(x.m, x.n, x.k, x.kind, x.groups) == std::tie(s.m, s.n, s.k, s.kind, s.groups);
    if (!seen) work.push_back(s);
  }

  KernelStore& store = Library::instance().store();
  // Read once for all shapes.
  const std::vector<TuningDb> databases = Library::instance().databases_for_this_software();
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const size_t jobs = std::min<size_t>(work.size(), options.jobs > 0 ? options.jobs : hardware);
  std::atomic<size_t> next{0};
  std::mutex mutex;  // guards the report, `kernels`, the progress callback and `error`
  std::vector<KernelSpec> kernels;
  std::vector<std::pair<std::string, std::string>> entries;  // slug and cache key of each of `kernels`
  std::exception_ptr error;
  size_t done = 0;
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < work.size(); i = next.fetch_add(1)) {
      PlannedKernel planned;
      struct Extra {
        KernelSpec spec;
        KernelSource source;
        std::string key;
      };
      std::vector<Extra> extra;
      try {
        // What the shape's GEMM will run on device 0 (its tuning database's winner, else the
        // heuristic), plus the winners other devices' databases in this cache directory
        // hold, so that cache-only processes there find them too.
        const GemmProblem p = planned_problem(work[i], "prewarm");
        const std::optional<KernelSpec> tuned = device0_tuned(p);
        PlanOptions plan_options;
        if (tuned) plan_options.tuned = &*tuned;
        planned = plan_kernel(p, traits, store, plan_options);
        if (options.b_constant && family(p.kind).constant_b_option) {
          const KernelSpec early = constant_b_spec(planned.spec, p.m);
          if (!(early == planned.spec)) {
            KernelSource source = KernelSource::Memory;
            const std::string key = store.get(early, &source)->key;
            extra.push_back({early, source, key});
          }
        }
        for (const TuningDb& db : tunable(p.kind) ? databases : std::vector<TuningDb>{})
          if (const TunedEntry* e =
                  db.find(p, Library::current_entries(db.metadata(), Library::instance().db_path(db.metadata())))) {
            const KernelSpec& s = e->spec;
            const bool seen = s == planned.spec || std::any_of(extra.begin(), extra.end(),
                                                                [&](const Extra& x) { return x.spec == s; });
            if (seen || !spec_illegal_reason(s).empty()) continue;
            KernelSource source = KernelSource::Memory;
            const std::string key = store.get(s, &source)->key;
            extra.push_back({s, source, key});
          }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex);
      ++done;
      if (std::find(kernels.begin(), kernels.end(), planned.spec) == kernels.end()) {
        kernels.push_back(planned.spec);
        entries.emplace_back(planned.spec.slug(), planned.binary->key);
        report.kernel_names.push_back(planned.spec.slug());
      }
      for (const Extra& x : extra)
        if (std::find(kernels.begin(), kernels.end(), x.spec) == kernels.end()) {
          kernels.push_back(x.spec);
          entries.emplace_back(x.spec.slug(), x.key);
          report.kernel_names.push_back(x.spec.slug());
          if (x.source == KernelSource::Compiled) ++report.compiled;
          if (x.source == KernelSource::Disk) ++report.from_disk;
        }
      // A kernel is compiled (or read) by exactly one thread; the others find it in memory.
      if (planned.source == KernelSource::Compiled) ++report.compiled;
      if (planned.source == KernelSource::Disk) ++report.from_disk;
      report.compiled_and_skipped += static_cast<size_t>(planned.compiled_and_skipped);
      if (options.on_progress) {
        PrewarmProgress p;
        p.done = done;
        p.total = work.size();
        p.kernel = planned.spec.slug();
        p.compiled = planned.source == KernelSource::Compiled;
        p.source = planned.source == KernelSource::Compiled ? "compiled"
                   : planned.source == KernelSource::Disk   ? "on disk"
                                                            : "shared";
        p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        options.on_progress(p);
      }
    }
  };
  // What escapes a worker (an exception from on_progress, or an allocation failure) stops
  // every worker at its next shape and is rethrown here once all have stopped.
  auto guarded_worker = [&] {
    try {
      worker();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      next.store(work.size());
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < jobs; ++t) threads.emplace_back(guarded_worker);
  guarded_worker();
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  report.kernels = kernels.size();
  // (Counted by this call's plans, not by the process's compile counter, which other threads'
  // calls move too.)
  // What a prewarm is for: every kernel on disk for the processes that come after it.
  // A kernel this process already held is written again where the disk lost its entry (the
  // cache was cleared or deleted since it was built).
  DiskCache& disk = store.disk();
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [slug, key] = entries[i];
    if (disk.holds(slug, key)) continue;
    store.persist(kernels[i]);
    report.not_saved += disk.holds(slug, key) ? 0 : 1;
  }
  if (report.not_saved > 0)
    report.not_saved_reason = disk.memory_only()
                                  ? "the kernel cache is memory-only: " + disk.memory_only_reason()
                                  : "their entries are missing or unreadable in " + disk.dir() + "/kernels";
  report.from_memory = report.kernels - std::min(report.kernels, report.compiled + report.from_disk);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace fp8gemm
