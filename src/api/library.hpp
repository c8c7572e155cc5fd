#pragma once

#include <cuda.h>

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <vector>
#include <mutex>
#include <utility>

#include "cache/disk_cache.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "heuristics/heuristics.hpp"
#include "runtime/device_runtime.hpp"
#include "runtime/kernel_store.hpp"
#include "tuning/tuner.hpp"
#include "tuning/tuning_db.hpp"

namespace fp8gemm::detail {

// The process-wide state, and the only one: the disk cache, the compiled-kernel store
// and one DeviceRuntime per CUDA context. Created at first use and never destroyed
// (the driver may already be gone when static destructors run).
class Library {
 public:
  static Library& instance();

  DiskCache& disk() { return disk_; }
  KernelStore& store() { return store_; }

  // The runtime of `context`, created on first use; `context` must be current.
  DeviceRuntime& runtime(CUcontext context);

  // Tuning databases, one per device kind, read from the cache directory at first use
  // (a corrupt or mismatched file is reported once and treated as empty). Nothing is
  // read or written when the cache is memory-only. A problem is looked up by its kind, N, K
  // and problem_groups: the entry tuned at its M, else the nearest M of its bucket (TuningDb::find).
  std::optional<KernelSpec> find_tuned(const TuningMetadata& device, const GemmProblem& problem);
  // Records a measured winner and merges it into the database file.
  void record_tuned(const TuningMetadata& device, const GemmProblem& problem, const TunedEntry& entry);
  // Tuning mode On: the database's winner, else runs `tune` and records its result. Threads
  // asking for problems of the same M bucket (same device kind and TuningDb::bucket_key) at
  // once share one tuning run; a failure is rethrown to each and not remembered.
  KernelSpec tuned_or_tune(const TuningMetadata& device, const GemmProblem& problem,
                           const std::function<TunedEntry()>& tune);
  // Every database file of the cache directory that was measured with this library and
  // NVRTC (any GPU), read from disk at each call: their winners are what a GPU-less
  // prewarm compiles so that cache-only processes on those GPUs find their kernels.
  std::vector<TuningDb> databases_for_this_software();
  // Passes the entries of a device's database that this build still uses (entry_stamp.hpp);
  // the first one it rejects is reported once per database file.
  // The file of a device's database ("" when the cache is memory-only).
  std::string db_path(const TuningMetadata& device) const;
  static std::function<bool(const TunedEntry&)> current_entries(const TuningMetadata& device,
                                                                const std::string& db_path);

  // What each device's runtimes have loaded and planned (stats()), by ordinal.
  std::vector<DeviceStats> device_stats();

 private:
  Library();

  DiskCache disk_;
  KernelStore store_;
  TuningDb& tuning_db_locked(const TuningMetadata& device);

  std::mutex mutex_;
  // By context handle and the driver's id of the context: a handle may come back for a new
  // context once its old one is destroyed (cuCtxDestroy, cudaDeviceReset), whose modules and
  // launch plans died with it; an id is never reused.
  std::map<std::pair<CUcontext, unsigned long long>, std::unique_ptr<DeviceRuntime>> runtimes_;
  std::mutex tuning_mutex_;
  std::map<std::string, TuningDb> tuning_dbs_;  // by file path
  std::map<std::string, std::shared_future<KernelSpec>> tuning_in_flight_;  // by path + problem key
};

// Per-context counts summed per device (a device may have several contexts), in ordinal order.
std::vector<DeviceStats> stats_by_device(const std::vector<DeviceStats>& per_context);

// What the tuning database of a device is keyed by: its name and SM count, the driver,
// NVRTC and library versions.
TuningMetadata device_metadata(const DeviceProps& device);

// The same for device 0 when a driver and a device are present (planning without a call
// context: prewarm, kernel_name).
std::optional<TuningMetadata> device0_metadata();

// The kernel family of a GemmShape's kind, and the multiple N must be of (fp32 D: 4, bf16:
// 8). Throws Error(InvalidArgument) naming `fn` for a kind outside the enum.
KernelKind kernel_kind_of(GemmKind kind, const char* fn);
// The rules a GemmShape must follow wherever one is planned without a call (prewarm, tune,
// kernel_name): the same sizes and limits the GEMM of its kind accepts (README, "Limits").
// Throws Error(InvalidArgument) naming `fn` and the rule.
void check_gemm_shape(const GemmShape& shape, const char* fn);
// Whether the tuner covers a kernel kind: the GEMMs (dense forward and weight gradient,
// m-grouped contiguous and masked, k-grouped weight gradient).
bool tunable(KernelKind kind);
// The K a k-grouped problem of k columns in `groups` groups is planned with: the power-of-two
// bucket of the mean K per group (at least 128), so that a batch's varying token counts keep
// the kernel.
int64_t k_grouped_planning_k(int64_t k, int64_t groups);

// A shape as the library plans it, tunes it and keys its tuning database entry: its kernel
// kind; M: GroupedContiguous its total M's power-of-two bucket (as
// gemm_fp8_nt_grouped_contiguous plans it), KGroupedWeightGradient all groups' rows
// (groups x M), the others M itself; N; K: KGroupedWeightGradient k_grouped_planning_k, the
// others K itself; and for the grouped kinds its groups (at least 1; a GroupedContiguous
// shape's groups are the experts its rows are split over when timed).
// Throws Error(InvalidArgument) naming `fn` for a kind outside the enum.
GemmProblem planned_problem(const GemmShape& shape, const char* fn);

// The GemmShape a grouped GEMM call stands for (planned, tuned and prewarmed as that shape):
// A's rows and columns, N, the groups and, masked, expected_m (its m is groups x expected_m).
GemmShape grouped_call_shape(GemmKind kind, int64_t a_rows, int64_t a_cols, int64_t n, int64_t groups,
                             int64_t expected_m = 0);

// The tuning database's winner for a problem on device 0, if the tuning mode is not Off.
std::optional<KernelSpec> device0_tuned(const GemmProblem& problem);

// The plan of a validated problem in the runtime's context (the call's, current): after the
// first call one lookup; the first call takes the tuning database's winner (tuning it first
// in mode On, except in cache-only mode or while the call's stream is being captured: there
// as in mode Cached), else the heuristic's choice, and compiles nothing in cache-only mode.
class CallContext;
const LaunchPlan& plan_for_call(const CallContext& call, DeviceRuntime& runtime, const GemmProblem& problem);

// The runtime of a call's context, checked for a device the kernels run on (sm_90, else
// Error(UnsupportedDevice) naming it).
DeviceRuntime& call_runtime(const CallContext& call);

// What to plan for when no call context is at hand (prewarm, kernel_name): the
// requested SM count, else device 0's, else a 132-SM H100/H200.
DeviceTraits planning_traits(int requested_sms);

// Makes the context a call runs in current for the scope of one call: the stream's
// context, else the thread's current one, else device 0's primary context (as the CUDA
// runtime would pick). Restores the previous context on exit if it had to switch.
class CallContext {
 public:
  explicit CallContext(Stream stream);
  ~CallContext();
  CallContext(const CallContext&) = delete;
  CallContext& operator=(const CallContext&) = delete;

  CUcontext context() const { return context_; }
  // Whether the call's stream is being captured into a CUDA graph (also when the driver
  // cannot tell, or the legacy stream would join another stream's capture).
  bool capturing() const;

 private:
  Stream stream_ = nullptr;
  CUcontext context_ = nullptr;
  bool pushed_ = false;
};

}  // namespace fp8gemm::detail
