#include "api/library.hpp"

#include "driver/driver_api.hpp"
#include "util/env.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {

Library::Library() : disk_(env().disk_cache ? env().cache_dir : std::string()), store_(disk_) {}

Library& Library::instance() {
  static Library* library = new Library();
  return *library;
}

DeviceRuntime& Library::runtime(CUcontext context) {
  thread_local CUcontext last_context = nullptr;
  thread_local DeviceRuntime* last_runtime = nullptr;
  if (context == last_context && last_runtime != nullptr) return *last_runtime;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = runtimes_.find(context);
  if (it == runtimes_.end()) it = runtimes_.emplace(context, std::make_unique<DeviceRuntime>(context)).first;
  last_context = context;
  last_runtime = it->second.get();
  return *last_runtime;
}

DeviceTraits planning_traits(int requested_sms) {
  constexpr int kDefaultSms = 132;  // H100 SXM, H800, H200
  DeviceTraits traits;
  traits.num_sms = requested_sms > 0 ? requested_sms : kDefaultSms;
  if (requested_sms > 0) return traits;
  if (const DriverApi* cu = try_driver(nullptr)) {
    int count = 0, sms = 0, smem = 0;
    CUdevice device = 0;
    if (cu->cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0 && cu->cuDeviceGet(&device, 0) == CUDA_SUCCESS &&
        cu->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device) == CUDA_SUCCESS &&
        cu->cuDeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device) ==
            CUDA_SUCCESS) {
      traits.num_sms = sms;
      traits.max_smem_bytes = smem;
    }
  }
  return traits;
}

CallContext::CallContext(Stream stream) {
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

CallContext::~CallContext() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver().cuCtxPopCurrent(&popped);
  }
}

}  // namespace fp8gemm::detail
