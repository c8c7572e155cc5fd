// The C API's runtime information and counters.

#include "capi/c_api_internal.hpp"

using namespace fp8gemm;
using namespace fp8gemm::capi;

namespace {

// What the strings of the last fp8gemm_runtime_info on this thread point into.
thread_local RuntimeInfo t_info;

}  // namespace

extern "C" {

fp8gemm_status_t fp8gemm_runtime_info(fp8gemm_runtime_info_t* info, fp8gemm_device_info_fn on_device,
                                      fp8gemm_setting_fn on_setting, void* user_data) {
  return guarded([&] {
    const char* fn = "fp8gemm_runtime_info";
    check_struct_size(required(info, fn, "info", "an fp8gemm_runtime_info_t"), fn, "info");
    t_info = runtime_info();
    fp8gemm_runtime_info_t c = library_struct<fp8gemm_runtime_info_t>();
    c.library_version = t_info.library_version.c_str();
    c.nvrtc_version = t_info.nvrtc_version.c_str();
    c.cache_dir = t_info.cache_dir.c_str();
    c.cache_state = t_info.cache_state.c_str();
    c.driver = t_info.driver.c_str();
    c.driver_version = t_info.driver_version;
    c.device_count = t_info.devices.size();
    c.setting_count = t_info.settings.size();
    write_versioned(info, c);
    if (on_device != nullptr)
      for (const DeviceInfo& d : t_info.devices) {
        fp8gemm_device_info_t device = library_struct<fp8gemm_device_info_t>();
        device.ordinal = d.ordinal;
        device.name = d.name.c_str();
        device.cc_major = d.cc_major;
        device.cc_minor = d.cc_minor;
        device.sm_count = d.sm_count;
        device.memory_bytes = d.memory_bytes;
        device.supported = d.supported ? 1 : 0;
        on_device(&device, user_data);
      }
    if (on_setting != nullptr)
      for (const Setting& s : t_info.settings) {
        fp8gemm_setting_t setting = library_struct<fp8gemm_setting_t>();
        setting.name = s.name.c_str();
        setting.value = s.value.c_str();
        setting.source = s.source.c_str();
        on_setting(&setting, user_data);
      }
  });
}

fp8gemm_status_t fp8gemm_stats(fp8gemm_stats_t* stats) {
  return guarded([&] {
    const char* fn = "fp8gemm_stats";
    check_struct_size(required(stats, fn, "stats", "an fp8gemm_stats_t"), fn, "stats");
    const Stats s = fp8gemm::stats();
    fp8gemm_stats_t c = library_struct<fp8gemm_stats_t>();
    c.gemm_calls = s.gemm_calls;
    c.kernels_compiled = s.kernels_compiled;
    c.problems_tuned = s.problems_tuned;
    c.tuned_plans = s.tuned_plans;
    c.disk_hits = s.disk_hits;
    c.disk_rejected = s.disk_rejected;
    c.modules_loaded = s.modules_loaded;
    write_versioned(stats, c);
  });
}

}  // extern "C"
