#include "driver/driver_api.hpp"

#include <dlfcn.h>

#include <mutex>

#include "util/error.hpp"

namespace fp8gemm::detail {
namespace {

struct Loaded {
  DriverApi api;
  std::string error;  // empty when the driver is usable
  ErrorCode code = ErrorCode::NoDriver;
};

const Loaded& loaded() {
  static const Loaded state = [] {
    Loaded l;
    void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = ::dlerror();
      l.error = std::string("libcuda.so.1 could not be loaded (") + (e ? e : "unknown") +
                "); install the NVIDIA driver or run on a machine with a GPU";
      return l;
    }
    auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(::dlsym(handle, "cuGetProcAddress_v2"));
    if (get_proc == nullptr) {
      l.error = "the NVIDIA driver is too old (no cuGetProcAddress_v2); CUDA 12.3 or newer is required";
      return l;
    }
    bool ok = true;
    auto load = [&](auto& fn, const char* name, int version) {
      void* p = nullptr;
      CUdriverProcAddressQueryResult status{};
      if (get_proc(name, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
          p == nullptr) {
        if (ok) l.error = std::string("the NVIDIA driver lacks ") + name + "; update the driver";
        ok = false;
        return;
      }
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    DriverApi& a = l.api;
    load(a.cuInit, "cuInit", 2000);
    load(a.cuDriverGetVersion, "cuDriverGetVersion", 2020);
    load(a.cuGetErrorName, "cuGetErrorName", 6000);
    load(a.cuGetErrorString, "cuGetErrorString", 6000);
    load(a.cuDeviceGet, "cuDeviceGet", 2000);
    load(a.cuDeviceGetCount, "cuDeviceGetCount", 2000);
    load(a.cuDeviceGetName, "cuDeviceGetName", 2000);
    load(a.cuDeviceGetAttribute, "cuDeviceGetAttribute", 2000);
    load(a.cuDeviceTotalMem, "cuDeviceTotalMem", 3020);
    load(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000);
    load(a.cuCtxGetCurrent, "cuCtxGetCurrent", 4000);
    load(a.cuCtxSetCurrent, "cuCtxSetCurrent", 4000);
    load(a.cuCtxPushCurrent, "cuCtxPushCurrent", 4000);
    load(a.cuCtxPopCurrent, "cuCtxPopCurrent", 4000);
    load(a.cuCtxGetDevice, "cuCtxGetDevice", 2000);
    load(a.cuCtxGetId, "cuCtxGetId", 12000);
    load(a.cuStreamGetCtx, "cuStreamGetCtx", 9020);
    load(a.cuStreamIsCapturing, "cuStreamIsCapturing", 10000);
    load(a.cuModuleLoadData, "cuModuleLoadData", 2000);
    load(a.cuModuleUnload, "cuModuleUnload", 2000);
    load(a.cuModuleGetFunction, "cuModuleGetFunction", 2000);
    load(a.cuFuncSetAttribute, "cuFuncSetAttribute", 9000);
    load(a.cuFuncGetAttribute, "cuFuncGetAttribute", 2020);
    load(a.cuLaunchKernelEx, "cuLaunchKernelEx", 11060);
    load(a.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled", 12000);
    load(a.cuOccupancyMaxActiveClusters, "cuOccupancyMaxActiveClusters", 11070);
    load(a.cuMemAlloc, "cuMemAlloc", 3020);
    load(a.cuMemFree, "cuMemFree", 3020);
    load(a.cuMemcpyHtoD, "cuMemcpyHtoD", 3020);
    load(a.cuMemsetD8, "cuMemsetD8", 3020);
    load(a.cuCtxSynchronize, "cuCtxSynchronize", 2000);
    load(a.cuStreamCreate, "cuStreamCreate", 2000);
    load(a.cuStreamSynchronize, "cuStreamSynchronize", 2000);
    load(a.cuStreamDestroy, "cuStreamDestroy", 4000);
    load(a.cuEventCreate, "cuEventCreate", 2000);
    load(a.cuEventRecord, "cuEventRecord", 2000);
    load(a.cuEventSynchronize, "cuEventSynchronize", 2000);
    load(a.cuEventElapsedTime, "cuEventElapsedTime", 2000);
    load(a.cuEventDestroy, "cuEventDestroy", 4000);
    if (!ok) return l;
    if (const CUresult r = a.cuInit(0); r != CUDA_SUCCESS) {
      const char* name = nullptr;
      a.cuGetErrorName(r, &name);
      l.error = std::string("cuInit failed (") + (name ? name : "?") +
                "): the driver found no usable GPU (check nvidia-smi and CUDA_VISIBLE_DEVICES)";
      l.code = ErrorCode::NoDevice;
    }
    return l;
  }();
  return state;
}

}  // namespace

const DriverApi* try_driver(std::string* why) {
  const Loaded& l = loaded();
  if (!l.error.empty()) {
    if (why != nullptr) *why = l.error;
    return nullptr;
  }
  return &l.api;
}

const DriverApi& driver() {
  const Loaded& l = loaded();
  if (!l.error.empty()) fail(l.code, "{}", l.error);
  return l.api;
}

void check_cu(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return;
  const char* name = "?";
  const char* text = "?";
  if (const DriverApi* api = try_driver(nullptr)) {
    api->cuGetErrorName(result, &name);
    api->cuGetErrorString(result, &text);
  }
  fail(ErrorCode::CudaError, "{} failed: {} ({})", call, name ? name : "?", text ? text : "?");
}

}  // namespace fp8gemm::detail
