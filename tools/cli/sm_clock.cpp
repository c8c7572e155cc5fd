#include "cli/sm_clock.hpp"

#include <dlfcn.h>

#include <cuda_runtime_api.h>

namespace fp8gemm::cli {
namespace {

// The few NVML entry points used, declared by their C ABI (nvml.h is not part of the toolkit
// here): results are an int enum (0 = success), devices opaque pointers.
using NvmlDevice = struct NvmlDeviceOpaque*;
using InitFn = int (*)();
using HandleByBusIdFn = int (*)(const char*, NvmlDevice*);
using ClockInfoFn = int (*)(NvmlDevice, int, unsigned*);
using ErrorStringFn = const char* (*)(int);
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
  ClockInfoFn clock_info = nullptr;
  ErrorStringFn error_string = nullptr;
  NvmlDevice device = nullptr;
};
Nvml nvml;

std::string error_text(int r) {
  const char* text = nvml.error_string != nullptr ? nvml.error_string(r) : nullptr;
  return text != nullptr ? text : "NVML error " + std::to_string(r);
}

// Opens NVML for CUDA device `device`; "" on success, else why not.
std::string open(int device) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return "cannot open libnvidia-ml.so.1 (installed with the NVIDIA driver)";
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto by_bus_id = reinterpret_cast<HandleByBusIdFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  nvml.clock_info = reinterpret_cast<ClockInfoFn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  nvml.error_string = reinterpret_cast<ErrorStringFn>(dlsym(lib, "nvmlErrorString"));
  if (init == nullptr || by_bus_id == nullptr || nvml.clock_info == nullptr) return "libnvidia-ml lacks the clock API";
  if (const int r = init(); r != 0) return "nvmlInit: " + error_text(r);
  // (NVML numbers devices its own way: the CUDA device is found by its PCI bus id.)
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess)
    return "cannot read the PCI bus id of CUDA device " + std::to_string(device);
  if (const int r = by_bus_id(bus_id, &nvml.device); r != 0)
    return std::string("NVML does not know ") + bus_id + ": " + error_text(r);
  return "";
}

}  // namespace

SmClock* SmClock::instance(int device, std::string* why) {
  static const std::string failure = open(device);
  static SmClock clock;
  if (!failure.empty()) {
    if (why != nullptr) *why = failure;
    return nullptr;
  }
  return &clock;
}

void SmClock::sample() {
  unsigned mhz = 0;
  if (nvml.clock_info(nvml.device, kNvmlClockSm, &mhz) == 0 && mhz > 0) samples_.push_back(mhz);
}

std::vector<double> SmClock::take() {
  std::vector<double> v;
  v.swap(samples_);
  return v;
}

}  // namespace fp8gemm::cli
