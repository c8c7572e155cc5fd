#include "runtime/device_runtime.hpp"

#include <algorithm>
#include <mutex>

#include "driver/driver_api.hpp"
#include "families/family.hpp"
#include "heuristics/heuristics.hpp"
#include "runtime/launch_config.hpp"
#include "runtime/planner.hpp"
#include "runtime/stats.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace fp8gemm::detail {

DeviceRuntime::DeviceRuntime(CUcontext context) : context_(context) {
  const DriverApi& cu = driver();
  CUdevice device = 0;
  check_cu(cu.cuCtxGetDevice(&device), "cuCtxGetDevice");
  props_ = query_device(cu, device);
}

CUfunction DeviceRuntime::kernel_function(const KernelSpec& spec, KernelStore& store, bool may_compile) {
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto f = functions_.find(spec);
    if (f != functions_.end()) return f->second.function;
  }
  const std::shared_ptr<const KernelBinary> binary = store.get(spec, nullptr, may_compile);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto f = functions_.find(spec);
  return f != functions_.end() ? f->second.function : load(*binary).function;
}

const LaunchPlan* DeviceRuntime::find_plan(const GemmProblem& problem) {
  const GemmProblem key = problem.plan_key();
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = plans_.find(key);
  return it == plans_.end() ? nullptr : &it->second;
}

const LaunchPlan& DeviceRuntime::plan(const GemmProblem& problem, KernelStore& store, const PlanOptions& options) {
  const GemmProblem key = problem.plan_key();
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
  }
  // First sight of this shape on this device: choose, build and load outside the lock
  // (compiling can take a second; other shapes keep launching meanwhile).
  const PlannedKernel planned = plan_kernel(problem, traits(), store, options);
  LaunchPlan p = finish_plan(problem.m, planned.spec, *planned.binary);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  const auto [it, added] = plans_.emplace(key, p);
  if (added) plans_made_.fetch_add(1, std::memory_order_relaxed);
  return it->second;
}

const LaunchPlan& DeviceRuntime::plan(int64_t m, const KernelSpec& spec, KernelStore& store, bool may_compile) {
  const SpecPlanKey key{m, spec};
  {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = spec_plans_.find(key);
    if (it != spec_plans_.end()) return it->second;
  }
  const std::shared_ptr<const KernelBinary> binary = store.get(spec, nullptr, may_compile);
  // An explicit config runs as asked, even where the planner would have skipped it.
  if (binary->resources.slow_path())
    log(LogLevel::Warn, "kernel {} compiled to a slow path ({}): it runs as asked, but expect it to be slow",
        spec.slug(), binary->resources.slow_path_reason());
  LaunchPlan p = finish_plan(m, spec, *binary);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  const auto [it, added] = spec_plans_.emplace(key, p);
  if (added) plans_made_.fetch_add(1, std::memory_order_relaxed);
  return it->second;
}

LaunchPlan DeviceRuntime::finish_plan(int64_t m, const KernelSpec& spec, const KernelBinary& binary) {
  LaunchPlan p;
  p.spec = spec;
  p.layout = kernel_layout(spec);
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto f = functions_.find(spec);
  const LoadedKernel& loaded = f != functions_.end() ? f->second : load(binary);
  p.function = loaded.function;
  // Persistent grid: whole clusters (a GPC with an odd number of free SMs leaves one idle),
  // as many as heuristics' persistent_clusters gives.
  const KernelConfig& c = spec.config;
  const bool grouped = family(spec.kind).rows_on_device;
  p.grid = static_cast<unsigned>(persistent_clusters(spec, m, loaded.max_clusters, traits()) * p.layout.cluster_size);
  // Grouped kernels: m only stands for the expected size (the real row counts live on the
  // device), so the boxes are whole.
  const bool short_m = m < c.block_m && !grouped;
  p.a_box_rows = short_m && c.multicast != 1 ? static_cast<int>((m + 7) / 8 * 8) : p.layout.a_box_rows;
  p.sfa_box_rows = short_m ? static_cast<int>((m + 3) / 4 * 4) : c.block_m;
  p.stage_tx_bytes = static_cast<unsigned>((c.multicast == 1 ? c.block_m : p.a_box_rows) * 128 +
                                           c.block_n * 128 + p.sfa_box_rows * 4 +
                                           (family(spec.kind).fp32_output ? c.block_n * 4 : 0));
  p.constant_b = constant_b_spec(spec, m);
  return p;
}

const DeviceRuntime::LoadedKernel& DeviceRuntime::load(const KernelBinary& binary) {
  const DriverApi& cu = driver();
  CUmodule module = nullptr;
  const CUresult r = cu.cuModuleLoadData(&module, binary.cubin.data());
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_NO_BINARY_FOR_GPU ||
      r == CUDA_ERROR_INVALID_IMAGE)
    check_cu(r, ("cuModuleLoadData(" + binary.spec.slug() +
                 "): the driver cannot load this sm_90a cubin; update the NVIDIA driver to one that "
                 "supports the NVRTC version in use")
                    .c_str());
  check_cu(r, "cuModuleLoadData");
  // Unloaded again if a later step fails (a retry would otherwise load it once more).
  struct Unload {
    CUmodule module;
    ~Unload() {
      if (module != nullptr) driver().cuModuleUnload(module);
    }
  } unload{module};
  CUfunction function = nullptr;
  check_cu(cu.cuModuleGetFunction(&function, module, binary.lowered_name.c_str()), "cuModuleGetFunction");
  const KernelLayout layout = kernel_layout(binary.spec);
  check_cu(cu.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, layout.smem_bytes),
           "cuFuncSetAttribute(max dynamic shared memory)");
  LoadedKernel loaded;
  loaded.function = function;
  loaded.max_clusters = props_.sm_count;
  if (layout.cluster_size > 1) {
    CUlaunchAttribute attrs[2];
    const CUlaunchConfig config =
        gemm_launch_config(layout, static_cast<unsigned>(props_.sm_count), nullptr, attrs, /*programmatic=*/false);
    int clusters = 0;
    check_cu(cu.cuOccupancyMaxActiveClusters(&clusters, function, &config), "cuOccupancyMaxActiveClusters");
    if (clusters < 1)
      fail(ErrorCode::CudaError, "{}: no cluster of {} CTAs fits on device {}", binary.spec.slug(),
           layout.cluster_size, props_.ordinal);
    loaded.max_clusters = clusters;
  }
  unload.module = nullptr;  // loaded for good
  counters().modules_loaded.fetch_add(1);
  modules_loaded_.fetch_add(1, std::memory_order_relaxed);
  log(LogLevel::Debug, "loaded {} on device {} ({} resident {})", binary.spec.slug(), props_.ordinal,
      loaded.max_clusters, layout.cluster_size > 1 ? "clusters" : "CTAs");
  return functions_.emplace(binary.spec, loaded).first->second;
}

}  // namespace fp8gemm::detail
