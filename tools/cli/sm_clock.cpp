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
using ClockReasonsFn = int (*)(NvmlDevice, unsigned long long*);
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
// Clock event reasons that hold the clock down under load: software power cap (0x4), hardware
// slowdown (0x8), software thermal slowdown (0x20), hardware thermal slowdown (0x40), hardware
// power brake (0x80). (Not idle 0x1, application clocks 0x2, sync boost 0x10.)
constexpr unsigned long long kHeldReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

struct Nvml {
  ClockInfoFn clock_info = nullptr;
  ClockReasonsFn clock_reasons = nullptr;  // nullptr: this NVML has neither name of the call
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
  // (Named "...ClocksEventReasons" since driver 535, "...ClocksThrottleReasons" before.)
  nvml.clock_reasons = reinterpret_cast<ClockReasonsFn>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (nvml.clock_reasons == nullptr)
    nvml.clock_reasons = reinterpret_cast<ClockReasonsFn>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
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
  if (nvml.clock_info(nvml.device, kNvmlClockSm, &mhz) == 0 && mhz > 0) samples_.mhz.push_back(mhz);
  unsigned long long reasons = 0;
  if (nvml.clock_reasons != nullptr && nvml.clock_reasons(nvml.device, &reasons) == 0) {
    ++samples_.reasons_read;
    if ((reasons & kHeldReasons) != 0) ++samples_.held;
  }
}

SmClock::Samples SmClock::take() {
  Samples s;
  std::swap(s, samples_);
  return s;
}

}  // namespace fp8gemm::cli
