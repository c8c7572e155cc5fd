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
    report_items(t_info.devices, on_device, user_data, nullptr, [](const DeviceInfo& d, fp8gemm_device_info_t& out) {
      out.ordinal = d.ordinal;
      out.name = d.name.c_str();
      out.cc_major = d.cc_major;
      out.cc_minor = d.cc_minor;
      out.sm_count = d.sm_count;
      out.memory_bytes = d.memory_bytes;
      out.supported = d.supported ? 1 : 0;
    });
    report_items(t_info.settings, on_setting, user_data, nullptr, [](const Setting& x, fp8gemm_setting_t& out) {
      out.name = x.name.c_str();
      out.value = x.value.c_str();
      out.source = x.source.c_str();
    });
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

fp8gemm_status_t fp8gemm_device_stats(fp8gemm_device_stats_fn on_device, void* user_data, size_t* count) {
  return guarded([&] {
    report_items(fp8gemm::stats().devices, on_device, user_data, count,
                 [](const DeviceStats& d, fp8gemm_device_stats_t& out) {
                   out.device = d.device;
                   out.modules_loaded = d.modules_loaded;
                   out.plans = d.plans;
                 });
  });
}

}  // extern "C"
