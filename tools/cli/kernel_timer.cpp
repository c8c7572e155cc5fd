#include "cli/kernel_timer.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

#include <cupti_activity.h>

namespace fp8gemm::cli {
namespace {

using EnableFn = CUptiResult (*)(CUpti_ActivityKind);  // also cuptiActivityDisable
using RegisterFn = CUptiResult (*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
using FlushFn = CUptiResult (*)(uint32_t);
using NextRecordFn = CUptiResult (*)(uint8_t*, size_t, CUpti_Activity**);
using ResultStringFn = CUptiResult (*)(CUptiResult, const char**);

struct Cupti {
  EnableFn enable = nullptr;
  EnableFn disable = nullptr;
  RegisterFn register_callbacks = nullptr;
  FlushFn flush_all = nullptr;
  NextRecordFn next_record = nullptr;
  ResultStringFn result_string = nullptr;
};
Cupti cupti;

// What the completed buffers held since the last take (CUPTI may call back from its own thread).
std::mutex totals_mutex;
uint64_t total_ns = 0;
int total_kernels = 0;

constexpr size_t kBufferBytes = size_t(8) << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  uint64_t ns = 0;
  int kernels = 0;
  CUpti_Activity* record = nullptr;
  while (cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    // start and end lead every kernel record version the same way.
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    if (k->end > k->start) ns += k->end - k->start;
    ++kernels;
  }
  std::free(buffer);
  const std::lock_guard<std::mutex> lock(totals_mutex);
  total_ns += ns;
  total_kernels += kernels;
}

template <typename Fn>
bool load(void* lib, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return *fn != nullptr;
}

std::string result_text(CUptiResult r) {
  const char* text = nullptr;
  if (cupti.result_string != nullptr && cupti.result_string(r, &text) == CUPTI_SUCCESS && text != nullptr) return text;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

// Opens CUPTI and starts recording kernels; "" on success, else why not.
std::string start() {
  void* lib = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) lib = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr)
    return "cannot open libcupti.so.13 (the CUDA toolkit's profiling library; add its directory, e.g. "
           "<cuda>/extras/CUPTI/lib64 or <cuda>/lib64, to LD_LIBRARY_PATH)";
  if (!load(lib, "cuptiActivityEnable", &cupti.enable) || !load(lib, "cuptiActivityDisable", &cupti.disable) ||
      !load(lib, "cuptiActivityRegisterCallbacks", &cupti.register_callbacks) ||
      !load(lib, "cuptiActivityFlushAll", &cupti.flush_all) ||
      !load(lib, "cuptiActivityGetNextRecord", &cupti.next_record))
    return "libcupti lacks the activity API";
  load(lib, "cuptiGetResultString", &cupti.result_string);
  CUptiResult r = cupti.register_callbacks(buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS) return "cuptiActivityRegisterCallbacks: " + result_text(r);
  r = cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) return "cuptiActivityEnable(CONCURRENT_KERNEL): " + result_text(r);
  return "";
}

}  // namespace

KernelTimer* KernelTimer::instance(std::string* why) {
  static const std::string failure = start();
  static KernelTimer timer;
  if (!failure.empty()) {
    if (why != nullptr) *why = failure;
    return nullptr;
  }
  return &timer;
}

double KernelTimer::take_us(int* kernels) {
  cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const std::lock_guard<std::mutex> lock(totals_mutex);
  const double us = double(total_ns) * 1e-3;
  if (kernels != nullptr) *kernels = total_kernels;
  total_ns = 0;
  total_kernels = 0;
  return us;
}

KernelTimer::Paused::Paused(KernelTimer* timer) : timer_(timer) {
  if (timer_ != nullptr) cupti.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

KernelTimer::Paused::~Paused() {
  if (timer_ != nullptr) cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

}  // namespace fp8gemm::cli
