#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace fp8gemm::detail {

// The only caller of the CUDA driver. libcuda.so.1 is opened with dlopen at first
// use, so the library (and its CPU tests) load on machines without a driver; every
// entry point is fetched with cuGetProcAddress at the ABI version named here.
struct DriverApi {
  PFN_cuInit_v2000 cuInit = nullptr;
  PFN_cuDriverGetVersion_v2020 cuDriverGetVersion = nullptr;
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
  PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDeviceGetCount_v2000 cuDeviceGetCount = nullptr;
  PFN_cuDeviceGetName_v2000 cuDeviceGetName = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuDeviceTotalMem_v3020 cuDeviceTotalMem = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuCtxPushCurrent_v4000 cuCtxPushCurrent = nullptr;
  PFN_cuCtxPopCurrent_v4000 cuCtxPopCurrent = nullptr;
  PFN_cuCtxGetDevice_v2000 cuCtxGetDevice = nullptr;
  PFN_cuCtxGetId_v12000 cuCtxGetId = nullptr;
  PFN_cuStreamGetCtx_v9020 cuStreamGetCtx = nullptr;
  PFN_cuStreamIsCapturing_v10000 cuStreamIsCapturing = nullptr;
  PFN_cuModuleLoadData_v2000 cuModuleLoadData = nullptr;
  PFN_cuModuleUnload_v2000 cuModuleUnload = nullptr;
  PFN_cuModuleGetFunction_v2000 cuModuleGetFunction = nullptr;
  PFN_cuFuncSetAttribute_v9000 cuFuncSetAttribute = nullptr;
  PFN_cuFuncGetAttribute_v2020 cuFuncGetAttribute = nullptr;
  PFN_cuLaunchKernelEx_v11060 cuLaunchKernelEx = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 cuTensorMapEncodeTiled = nullptr;
  PFN_cuOccupancyMaxActiveClusters_v11070 cuOccupancyMaxActiveClusters = nullptr;
  // Used by the tuner only (its own buffers, stream and timing).
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD = nullptr;
  PFN_cuMemsetD8_v3020 cuMemsetD8 = nullptr;
  PFN_cuCtxSynchronize_v2000 cuCtxSynchronize = nullptr;
  PFN_cuStreamCreate_v2000 cuStreamCreate = nullptr;
  PFN_cuStreamSynchronize_v2000 cuStreamSynchronize = nullptr;
  PFN_cuStreamDestroy_v4000 cuStreamDestroy = nullptr;
  PFN_cuEventCreate_v2000 cuEventCreate = nullptr;
  PFN_cuEventRecord_v2000 cuEventRecord = nullptr;
  PFN_cuEventSynchronize_v2000 cuEventSynchronize = nullptr;
  PFN_cuEventElapsedTime_v2000 cuEventElapsedTime = nullptr;
  PFN_cuEventDestroy_v4000 cuEventDestroy = nullptr;
};

// The driver table, loaded and cuInit'ed once. Throws Error(NoDriver) when there is no
// usable driver; the message says why.
const DriverApi& driver();

// Like driver(), but returns nullptr and the reason instead of throwing.
const DriverApi* try_driver(std::string* why);

// Throws Error(CudaError) naming the call and the driver's error text unless CUDA_SUCCESS.
void check_cu(CUresult result, const char* call);

}  // namespace fp8gemm::detail
