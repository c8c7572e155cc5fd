#pragma once

#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cache/disk_cache.hpp"
#include "compiler/resource_report.hpp"
#include "problem/problem.hpp"

namespace fp8gemm::detail {

// A kernel ready to load on any device.
struct KernelBinary {
  KernelSpec spec;
  std::string key;
  std::string cubin;
  std::string lowered_name;
  ResourceUsage resources;
};

// Where get() found a kernel.
enum class KernelSource { Memory, Disk, Compiled };

// Process-wide store of compiled kernels: memory, then the disk cache, then NVRTC
// (and publish). Concurrent requests for the same kernel compile it once.
class KernelStore {
 public:
  explicit KernelStore(DiskCache& disk) : disk_(disk) {}

  // With may_compile false, a kernel that is neither in memory nor on disk throws
  // Error(NotCached) instead of being compiled (cache-only mode).
  std::shared_ptr<const KernelBinary> get(const KernelSpec& spec, KernelSource* source = nullptr,
                                          bool may_compile = true);

  // Writes the disk entry of `spec` (built or found as get() does) again: for a kernel
  // this process holds whose entry the disk has lost since (a cleared or deleted cache).
  void persist(const KernelSpec& spec);

  DiskCache& disk() { return disk_; }

 private:
  std::shared_ptr<const KernelBinary> build(const KernelSpec& spec, KernelSource* source, bool may_compile);

  DiskCache& disk_;
  std::mutex mutex_;
  std::unordered_map<KernelSpec, std::shared_future<std::shared_ptr<const KernelBinary>>, KernelSpecHash>
      kernels_;
};

}  // namespace fp8gemm::detail
