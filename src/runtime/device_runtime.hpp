#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "driver/device_query.hpp"
#include "heuristics/heuristics.hpp"
#include "problem/gemm_problem.hpp"
#include "problem/problem.hpp"
#include "runtime/kernel_store.hpp"
#include "runtime/planner.hpp"

namespace fp8gemm::detail {

// Everything needed to launch one problem: resolved once per (M, N, K) and context.
struct LaunchPlan {
  CUfunction function = nullptr;
  KernelSpec spec;
  KernelLayout layout;
  unsigned grid = 0;
  // TMA boxes for this M: with M below block_m only the rows that exist are loaded.
  int a_box_rows = 0;
  int sfa_box_rows = 0;
  unsigned stage_tx_bytes = 0;  // bytes landing in one pipeline stage
  // What a call with GemmOptions::b_constant runs instead (constant_b_spec; `spec` itself
  // where no variant pays), resolved once with the plan.
  KernelSpec constant_b;
};

// The kernels loaded in one CUDA context (one device), and the launch plans chosen for
// it. Modules stay loaded for the life of the process.
class DeviceRuntime {
 public:
  // Reads the device's properties; `context` must be current on the calling thread.
  explicit DeviceRuntime(CUcontext context);

  const DeviceProps& props() const { return props_; }
  DeviceTraits traits() const { return DeviceTraits{props_.sm_count, props_.max_smem_optin}; }

  // The plan for a validated problem. After the first call for a shape this is one
  // hash lookup under a shared lock: no hashing of source, no I/O, no allocation.
  // The context must be current (it is where new modules are loaded).
  // `options` matter only the first time a shape is planned in this context.
  // (Plans are kept per problem.plan_key(): problems that differ only in groups the kernel
  // choice ignores share one.)
  const LaunchPlan& plan(const GemmProblem& problem, KernelStore& store, const PlanOptions& options = {});
  // The plan for a validated problem run with a given (legal) kernel spec.
  const LaunchPlan& plan(int64_t m, const KernelSpec& spec, KernelStore& store, bool may_compile = true);
  // A loaded kernel that is not planned per problem (quantization): built or read from
  // the cache on first use, then one lookup.
  CUfunction kernel_function(const KernelSpec& spec, KernelStore& store, bool may_compile = true);

  // The plan of a problem planned before, else nullptr (one lookup under a shared lock).
  const LaunchPlan* find_plan(const GemmProblem& problem);

  // What this runtime has loaded and planned (for stats()).
  uint64_t modules_loaded() const { return modules_loaded_.load(std::memory_order_relaxed); }
  uint64_t plans() const { return plans_made_.load(std::memory_order_relaxed); }

 private:

  struct SpecPlanKey {
    int64_t m;
    KernelSpec spec;
    bool operator==(const SpecPlanKey& o) const { return m == o.m && spec == o.spec; }
  };
  struct SpecPlanKeyHash {
    size_t operator()(const SpecPlanKey& p) const { return KernelSpecHash{}(p.spec) * 31 + std::hash<int64_t>{}(p.m); }
  };
  struct LoadedKernel {
    CUfunction function = nullptr;
    int max_clusters = 0;  // clusters (or CTAs without clusters) resident at once
  };
  // Loads the module and measures its residency. Called with the lock held.
  const LoadedKernel& load(const KernelBinary& binary);
  // Loads the kernel if needed (takes the lock) and sizes the grid for M.
  LaunchPlan finish_plan(int64_t m, const KernelSpec& spec, const KernelBinary& binary);

  CUcontext context_;
  DeviceProps props_;
  std::shared_mutex mutex_;
  std::unordered_map<GemmProblem, LaunchPlan, GemmProblemHash> plans_;  // by plan_key()
  std::unordered_map<SpecPlanKey, LaunchPlan, SpecPlanKeyHash> spec_plans_;
  std::unordered_map<KernelSpec, LoadedKernel, KernelSpecHash> functions_;
  std::atomic<uint64_t> modules_loaded_{0};
  std::atomic<uint64_t> plans_made_{0};
};

}  // namespace fp8gemm::detail
