// runtime_info and stats: what the library sees and has done.

#include "api/library.hpp"
#include "util/error.hpp"
#include "tuning/settings.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "driver/device_query.hpp"
#include "driver/driver_api.hpp"
#include "runtime/planner.hpp"
#include "runtime/stats.hpp"
#include "util/env.hpp"
#include "util/log.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

std::vector<Setting> current_settings() {
  const Environment& e = env();
  auto on_off = [](bool b) { return std::string(b ? "on" : "off"); };
  auto changed = [](const std::string& source, bool differs, const char* call) {
    return differs ? std::string(call) : source;
  };
  const char* modes[] = {"off", "cached", "on"};
  const int mode = static_cast<int>(current_tuning_mode());
  std::vector<Setting> out;
  out.push_back({"FP8GEMM_CACHE_DIR", e.cache_dir.empty() ? "(none)" : e.cache_dir,
                 e.cache_dir_source.empty()                  ? "no FP8GEMM_CACHE_DIR, XDG_CACHE_HOME or HOME"
                 : e.cache_dir_source == "FP8GEMM_CACHE_DIR" ? "FP8GEMM_CACHE_DIR"
                 : e.cache_dir_source == "XDG_CACHE_HOME"    ? "$XDG_CACHE_HOME/fp8gemm"
                                                             : "$HOME/.cache/fp8gemm"});
  out.push_back({"FP8GEMM_DISK_CACHE", on_off(e.disk_cache), e.disk_cache_source});
  out.push_back({"FP8GEMM_CACHE_ONLY", on_off(current_cache_only()),
                 changed(e.cache_only_source, current_cache_only() != e.cache_only, "set_cache_only()")});
  out.push_back({"FP8GEMM_TUNING", mode >= 0 && mode <= 2 ? modes[mode] : "?",
                 changed(e.tuning_source, mode != e.tuning_mode, "set_tuning_mode()")});
  out.push_back({"FP8GEMM_LOG_LEVEL", log_level_word(log_level()),
                 changed(e.log_level_source, log_level() != e.log_level, "changed by the program")});
  return out;
}

}  // namespace

RuntimeInfo runtime_info() {
  RuntimeInfo info;
  info.library_version = FP8GEMM_VERSION_STRING;
  info.nvrtc_version = nvrtc_version();
  DiskCache& disk = Library::instance().disk();
  info.cache_dir = disk.dir().empty() ? "(none)" : disk.dir();
  info.cache_state = disk.state();
  info.settings = current_settings();
  std::string why;
  const DriverApi* cu = try_driver(&why);
  if (cu == nullptr) {
    info.driver = why;
    return info;
  }
  cu->cuDriverGetVersion(&info.driver_version);
  info.driver = "CUDA " + std::to_string(info.driver_version / 1000) + "." +
                std::to_string(info.driver_version % 1000 / 10);
  for (int i = 0, count = device_count(); i < count; ++i) {
    DeviceInfo d;
    d.ordinal = i;
    d.name = "(the driver could not describe this device)";
    if (const std::optional<DeviceProps> props = try_query_device(i)) d = *props;
    info.devices.push_back(d);
  }
  return info;
}

namespace {

// The spec kernel_name names: device 0's tuning database's winner, else the heuristic's choice.
KernelSpec planned_spec(const GemmShape& shape) {
  check_gemm_shape(shape, "kernel_name");
  if (shape.m == 0 || shape.n == 0)
    fail(ErrorCode::InvalidArgument, "kernel_name: shape m={} n={} k={} runs no kernel (M and N must be > 0)", shape.m,
         shape.n, shape.k);
  const GemmProblem p = planned_problem(shape, "kernel_name");
  const std::optional<KernelSpec> tuned = device0_tuned(p);
  PlanOptions options;
  options.may_compile = !current_cache_only();
  if (tuned) options.tuned = &*tuned;
  return plan_kernel(p, planning_traits(0), Library::instance().store(), options).spec;
}

}  // namespace

std::string kernel_name(const GemmShape& shape) { return planned_spec(shape).slug(); }

std::string kernel_name(const GemmShape& shape, const GemmOptions& options) {
  const KernelSpec spec = planned_spec(shape);
  // (constant_b_spec keeps the spec of every kind but the dense forward GEMM.)
  const KernelSpec named = options.b_constant ? constant_b_spec(spec, shape.m) : spec;
  // The variant too is compiled (or found) as a call would, so that the name is that of a
  // usable kernel (cache-only: Error(NotCached) when it is not on disk).
  if (!(named == spec)) Library::instance().store().get(named, nullptr, !current_cache_only());
  return named.slug();
}

Stats stats() {
  Stats s;
  const Counters& c = counters();
  s.gemm_calls = c.gemm_calls.load();
  s.kernels_compiled = c.kernels_compiled.load();
  s.disk_hits = c.disk_hits.load();
  s.modules_loaded = c.modules_loaded.load();
  s.problems_tuned = c.problems_tuned.load();
  s.tuned_plans = c.tuned_plans.load();
  s.disk_rejected = Library::instance().disk().rejected();
  s.devices = Library::instance().device_stats();
  return s;
}

}  // namespace fp8gemm
