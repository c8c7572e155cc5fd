#include "api/library.hpp"

#include <algorithm>
#include <cstring>

#include "compiler/nvrtc_compiler.hpp"
#include "driver/device_query.hpp"
#include "driver/driver_api.hpp"
#include "families/family.hpp"
#include "fp8gemm/version.hpp"
#include "problem/validate.hpp"
#include "tuning/settings.hpp"
#include "tuning/entry_stamp.hpp"
#include "tuning/tuning_db.hpp"
#include "util/files.hpp"
#include "util/log.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {

Library::Library()
    : disk_(env().disk_cache ? env().cache_dir : std::string(),
            env().disk_cache ? std::string() : env().disk_cache_source + " turns the disk cache off"),
      store_(disk_) {}

Library& Library::instance() {
  static Library* library = new Library();
  return *library;
}

DeviceRuntime& Library::runtime(CUcontext context) {
  unsigned long long id = 0;
  check_cu(driver().cuCtxGetId(context, &id), "cuCtxGetId");
  thread_local CUcontext last_context = nullptr;
  thread_local unsigned long long last_id = 0;
  thread_local DeviceRuntime* last_runtime = nullptr;
  if (context == last_context && id == last_id && last_runtime != nullptr) return *last_runtime;
  std::lock_guard<std::mutex> lock(mutex_);
  const std::pair<CUcontext, unsigned long long> key{context, id};
  auto it = runtimes_.find(key);
  if (it == runtimes_.end()) it = runtimes_.emplace(key, std::make_unique<DeviceRuntime>(context)).first;
  last_context = context;
  last_id = id;
  last_runtime = it->second.get();
  return *last_runtime;
}

std::vector<DeviceStats> Library::device_stats() {
  std::vector<DeviceStats> per_context;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [context, runtime] : runtimes_)
      per_context.push_back(DeviceStats{runtime->props().ordinal, runtime->modules_loaded(), runtime->plans()});
  }
  return stats_by_device(per_context);
}

std::vector<DeviceStats> stats_by_device(const std::vector<DeviceStats>& per_context) {
  std::map<int, DeviceStats> by_device;
  for (const DeviceStats& s : per_context) {
    DeviceStats& d = by_device[s.device];
    d.device = s.device;
    d.modules_loaded += s.modules_loaded;
    d.plans += s.plans;
  }
  std::vector<DeviceStats> out;
  for (const auto& [device, s] : by_device) out.push_back(s);
  return out;
}

TuningMetadata device_metadata(const DeviceProps& device) {
  TuningMetadata m;
  m.gpu_name = device.name;
  m.sm_count = device.sm_count;
  driver().cuDriverGetVersion(&m.driver_version);
  m.nvrtc_version = nvrtc_version();
  m.library_version = FP8GEMM_VERSION_STRING;
  return m;
}

TuningDb& Library::tuning_db_locked(const TuningMetadata& device) {
  const std::string path = db_path(device);
  auto it = tuning_dbs_.find(path);
  if (it != tuning_dbs_.end()) return it->second;
  TuningDb db(device);
  if (!path.empty()) {
    std::string warning;
    db = load_tuning_db(path, device, &warning);
    if (!warning.empty()) warn_once("tuning-db:" + path, warning);
  }
  return tuning_dbs_.emplace(path, std::move(db)).first->second;
}

std::function<bool(const TunedEntry&)> Library::current_entries(const TuningMetadata& device,
                                                                const std::string& db_path) {
  return [device, db_path](const TunedEntry& e) {
    const std::string why = tuned_entry_stale_reason(e, device);
    if (!why.empty())
      warn_once("tuning-db-stale:" + db_path,
                fmt::format("the tuning database {} has entries this build does not use ({}, and maybe others): "
                            "they are tuned again in tuning mode On (or by `fp8gemm tune`); until then the "
                            "heuristic plans them",
                            db_path.empty() ? std::string("in memory") : db_path, why));
    return why.empty();
  };
}

std::optional<KernelSpec> Library::find_tuned(const TuningMetadata& device, const GemmProblem& p) {
  std::lock_guard<std::mutex> lock(tuning_mutex_);
  const TunedEntry* e = tuning_db_locked(device).find(p, current_entries(device, db_path(device)));
  if (e == nullptr) return std::nullopt;
  return e->spec;
}

std::string Library::db_path(const TuningMetadata& device) const {
  return disk_.dir().empty() ? std::string() : tuning_db_path(disk_.dir(), device);
}

void Library::record_tuned(const TuningMetadata& device, const GemmProblem& p, const TunedEntry& measured) {
  TunedEntry entry = TuningDb::keyed(p, measured);
  stamp_tuned_entry(entry, device);
  std::lock_guard<std::mutex> lock(tuning_mutex_);
  TuningDb& db = tuning_db_locked(device);
  db.put(p, entry);
  if (disk_.dir().empty()) return;
  TuningDb one(device);  // merge just this entry into the file (others may have written meanwhile)
  one.put(p, entry);
  const std::string path = tuning_db_path(disk_.dir(), device);
  if (const int err = save_tuning_db(path, one))
    log(LogLevel::Warn, "could not write the tuning database {}: {}", path, std::strerror(err));
}

KernelSpec Library::tuned_or_tune(const TuningMetadata& device, const GemmProblem& p,
                                  const std::function<TunedEntry()>& tune) {
  const std::string key = tuning_db_path(disk_.dir(), device) + "|" + TuningDb::bucket_key(p);
  std::promise<KernelSpec> promise;
  std::shared_future<KernelSpec> shared;
  {
    std::lock_guard<std::mutex> lock(tuning_mutex_);
    if (const TunedEntry* e = tuning_db_locked(device).find(p, current_entries(device, db_path(device))))
      return e->spec;
    auto it = tuning_in_flight_.find(key);
    if (it != tuning_in_flight_.end()) {
      shared = it->second;
    } else {
      tuning_in_flight_.emplace(key, promise.get_future().share());
    }
  }
  if (shared.valid()) return shared.get();  // another thread is tuning this problem
  KernelSpec spec;
  try {
    const TunedEntry entry = tune();
    record_tuned(device, p, entry);
    spec = entry.spec;
    promise.set_value(spec);
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(tuning_mutex_);
    tuning_in_flight_.erase(key);
    throw;
  }
  std::lock_guard<std::mutex> lock(tuning_mutex_);
  tuning_in_flight_.erase(key);  // the database answers from now on
  return spec;
}

std::vector<TuningDb> Library::databases_for_this_software() {
  std::vector<TuningDb> out;
  if (disk_.dir().empty()) return out;
  const std::string dir = disk_.dir() + "/tuning";
  for (const std::string& name : list_files(dir)) {
    if (name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    const std::optional<std::string> text = read_file(dir + "/" + name);
    std::string why = text ? "" : "cannot read it";
    const std::optional<TuningDb> db = text ? TuningDb::from_json(*text, &why) : std::nullopt;
    if (!db)  // the README promises one warning for a database the library cannot use
      warn_once("tuning-db:" + dir + "/" + name,
                fmt::format("ignoring the tuning database {}/{}: {}; the heuristic plans its problems", dir, name,
                            why));
    else if (db->metadata().nvrtc_version == nvrtc_version() &&
             db->metadata().library_version == FP8GEMM_VERSION_STRING)
      out.push_back(*db);
  }
  return out;
}

std::optional<TuningMetadata> device0_metadata() {
  const std::optional<DeviceProps> device = try_query_device(0);
  if (!device) return std::nullopt;
  return device_metadata(*device);
}

KernelKind kernel_kind_of(GemmKind kind, const char* fn) {
  if (const Family* f = family_of_gemm_kind(static_cast<int>(kind))) return f->kind;
  fail(ErrorCode::InvalidArgument, "{}: unknown GemmShape kind {}", fn, static_cast<int>(kind));
}

void check_gemm_shape(const GemmShape& s, const char* fn) {
  const Family& f = family(kernel_kind_of(s.kind, fn));
  const std::string shape = fmt::format("shape m={} n={} k={}", s.m, s.n, s.k);
  auto bad = [&](const std::string& what) { fail(ErrorCode::InvalidArgument, "{}: {} {}", fn, shape, what); };
  if (s.m < 0 || s.n < 0 || s.k < 0) bad("has a negative size; sizes must be >= 0");
  if (s.m > kMaxDimension || s.n > kMaxDimension || s.k > kMaxDimension)
    bad(fmt::format("is too large: M, N and K must each be at most {}", kMaxDimension));
  if (s.n % f.n_multiple != 0) bad(fmt::format("needs N % {} == 0 (rows of D start 16-byte aligned)", f.n_multiple));
  if (s.k == 0 || s.k % 16 != 0) bad("needs K > 0 and K % 16 == 0");
  if (s.k > f.max_k)
    bad(fmt::format("has K > {}, the most the kernels with 128x128 B scales take; split K", f.max_k));
  if (s.groups < 1 || s.groups > kMaxDimension) bad(fmt::format("has groups = {}; it must be in [1, {}]", s.groups, kMaxDimension));
  if (f.m_grouping == 2 && s.m > 0 && s.groups > s.m)
    bad(fmt::format("has groups = {} > m; a masked shape's m is groups x expected_m with expected_m >= 1", s.groups));
  // (k-grouped: m is the rows of one group's D, and D holds every group's.)
  const int64_t d_rows = f.k_at_run_time ? s.groups * s.m : s.m;
  if (f.k_at_run_time && d_rows > kMaxDimension)
    bad(fmt::format("has groups x m = {} rows of D; they must be at most {}", d_rows, kMaxDimension));
  if (!tile_count_fits(d_rows, s.n, f.groups_in_plan ? s.groups : 1))
    bad(fmt::format("has more than {} output tiles of 64 x 16; split it", kMaxTiles));
}

bool tunable(KernelKind kind) { return is_gemm(kind); }

int64_t k_grouped_planning_k(int64_t k, int64_t groups) {
  return std::max<int64_t>(128, m_bucket((k + groups - 1) / std::max<int64_t>(groups, 1)));
}

GemmProblem planned_problem(const GemmShape& shape, const char* fn) {
  GemmProblem p;
  p.kind = kernel_kind_of(shape.kind, fn);
  const Family& f = family(p.kind);
  // m: a k-grouped shape's m is one group's rows (D holds them all); a contiguous one's total
  // rows vary from call to call with the experts' padding (planned by bucket).
  p.m = f.k_at_run_time ? shape.groups * shape.m : f.m_grouping == 1 && shape.m > 0 ? m_bucket(shape.m) : shape.m;
  p.n = shape.n;
  // k: a k-grouped shape's k is all groups' columns; planned at the expected K per group.
  p.k = f.k_at_run_time ? k_grouped_planning_k(shape.k, shape.groups) : shape.k;
  p.groups = f.m_grouping != 0 || f.k_at_run_time ? std::max<int64_t>(shape.groups, 1) : 1;
  return p;
}

GemmShape grouped_call_shape(GemmKind kind, int64_t a_rows, int64_t a_cols, int64_t n, int64_t groups,
                             int64_t expected_m) {
  // (Masked: the shape's m is groups x expected_m, as GemmKind documents.)
  const bool masked = family(kernel_kind_of(kind, "grouped_call_shape")).m_grouping == 2;
  return GemmShape{masked ? groups * expected_m : a_rows, n, a_cols, kind, groups};
}

std::optional<KernelSpec> device0_tuned(const GemmProblem& problem) {
  if (current_tuning_mode() == TuningMode::Off || !tunable(problem.kind)) return std::nullopt;
  const std::optional<TuningMetadata> metadata = device0_metadata();
  if (!metadata) return std::nullopt;
  return Library::instance().find_tuned(*metadata, problem);
}

namespace {

// The tuning database's winner for a problem's first call in this context, tuning it first
// in mode On; nothing in mode Off. Tuning allocates operands, synchronizes the context and
// compiles candidates: not in cache-only mode (nothing may compile), nor on a stream being
// captured (the capture would be invalidated). Those calls read the database as mode Cached.
std::optional<KernelSpec> tuned_for_first_call(const CallContext& call, DeviceRuntime& runtime,
                                               const GemmProblem& problem) {
  TuningMode mode = current_tuning_mode();
  if (mode == TuningMode::Off || !tunable(problem.kind)) return std::nullopt;
  if (mode == TuningMode::On && (current_cache_only() || call.capturing())) mode = TuningMode::Cached;
  Library& library = Library::instance();
  const TuningMetadata metadata = device_metadata(runtime.props());
  if (mode == TuningMode::Cached) return library.find_tuned(metadata, problem);
  return library.tuned_or_tune(metadata, problem, [&] {
    return tune_problem(runtime, library.store(), problem, TunerSettings{}).best;
  });
}

}  // namespace

const LaunchPlan& plan_for_call(const CallContext& call, DeviceRuntime& runtime, const GemmProblem& problem) {
  if (const LaunchPlan* plan = runtime.find_plan(problem)) return *plan;
  const std::optional<KernelSpec> tuned = tuned_for_first_call(call, runtime, problem);
  PlanOptions options;
  options.may_compile = !current_cache_only();
  options.tuned = tuned ? &*tuned : nullptr;
  return runtime.plan(problem, Library::instance().store(), options);
}

DeviceRuntime& call_runtime(const CallContext& call) {
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  return runtime;
}

DeviceTraits planning_traits(int requested_sms) {
  constexpr int kDefaultSms = 132;  // H100 SXM, H800, H200
  DeviceTraits traits;
  traits.num_sms = requested_sms > 0 ? requested_sms : kDefaultSms;
  if (requested_sms > 0) return traits;
  if (const std::optional<DeviceProps> device = try_query_device(0)) {
    traits.num_sms = device->sm_count;
    traits.max_smem_bytes = device->max_smem_optin;
  }
  return traits;
}

CallContext::CallContext(Stream stream) : stream_(stream) {
  const DriverApi& cu = driver();
  CUcontext current = nullptr;
  check_cu(cu.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  const auto handle = reinterpret_cast<uintptr_t>(stream);
  // nullptr, CU_STREAM_LEGACY (1) and CU_STREAM_PER_THREAD (2) mean "the current context".
  if (handle > 2) check_cu(cu.cuStreamGetCtx(reinterpret_cast<CUstream>(stream), &context_), "cuStreamGetCtx");
  else context_ = current;
  if (context_ == nullptr) {
    int count = 0;
    check_cu(cu.cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0) fail(ErrorCode::NoDevice, "the CUDA driver reports no device");
    CUdevice device = 0;
    check_cu(cu.cuDeviceGet(&device, 0), "cuDeviceGet");
    check_cu(cu.cuDevicePrimaryCtxRetain(&context_, device), "cuDevicePrimaryCtxRetain");
    check_cu(cu.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
    return;
  }
  if (context_ != current) {
    check_cu(cu.cuCtxPushCurrent(context_), "cuCtxPushCurrent");
    pushed_ = true;
  }
}

bool CallContext::capturing() const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  // (The legacy stream answers CUDA_ERROR_STREAM_CAPTURE_IMPLICIT while a blocking stream of
  // its context is captured.)
  const CUresult r = driver().cuStreamIsCapturing(reinterpret_cast<CUstream>(stream_), &status);
  return r != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_NONE;
}

CallContext::~CallContext() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver().cuCtxPopCurrent(&popped);
  }
}

}  // namespace fp8gemm::detail
