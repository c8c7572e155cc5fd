#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "cache/disk_cache.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "heuristics/heuristics.hpp"
#include "runtime/device_runtime.hpp"
#include "runtime/kernel_store.hpp"

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

 private:
  Library();

  DiskCache disk_;
  KernelStore store_;
  std::mutex mutex_;
  std::unordered_map<CUcontext, std::unique_ptr<DeviceRuntime>> runtimes_;
};

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

 private:
  CUcontext context_ = nullptr;
  bool pushed_ = false;
};

}  // namespace fp8gemm::detail
