// The C API's tuning side: the tuning mode, cache-only mode and tune().

#include "capi/c_api_internal.hpp"

using namespace fp8gemm;
using namespace fp8gemm::capi;

namespace {

TuneOptions read_tune_options(const fp8gemm_tune_options_t* options, const char* fn) {
  const fp8gemm_tune_options_t o = read_versioned(options, fp8gemm_default_tune_options(), fn, "options");
  TuneOptions out;
  out.candidates = o.candidates;
  out.jobs = o.jobs;
  if (o.on_progress != nullptr)
    out.on_progress = [callback = o.on_progress, user = o.user_data](const TuneProgress& p) {
      const fp8gemm_gemm_shape_t shape = to_c(p.shape);
      fp8gemm_tune_progress_t c = library_struct<fp8gemm_tune_progress_t>();
      c.done = p.done;
      c.total = p.total;
      c.shape = &shape;
      c.kernel = p.kernel.c_str();
      c.elapsed_s = p.elapsed_s;
      callback(&c, user);
    };
  return out;
}

}  // namespace

extern "C" {

fp8gemm_status_t fp8gemm_set_tuning_mode(fp8gemm_tuning_mode_t mode) {
  // A value outside the enum reaches the C++ check, which names it.
  return guarded([&] { set_tuning_mode(static_cast<TuningMode>(mode)); });
}

fp8gemm_status_t fp8gemm_get_tuning_mode(fp8gemm_tuning_mode_t* mode) {
  return guarded([&] {
    required(mode, "fp8gemm_get_tuning_mode", "mode", "an fp8gemm_tuning_mode_t") =
        static_cast<fp8gemm_tuning_mode_t>(tuning_mode());
  });
}

fp8gemm_status_t fp8gemm_set_cache_only(int on) {
  return guarded([&] { set_cache_only(on != 0); });
}

fp8gemm_status_t fp8gemm_get_cache_only(int* on) {
  return guarded([&] { required(on, "fp8gemm_get_cache_only", "cache_only", "an int") = cache_only() ? 1 : 0; });
}

fp8gemm_status_t fp8gemm_tune(const fp8gemm_gemm_shape_t* shapes, size_t count, const fp8gemm_tune_options_t* options,
                              fp8gemm_tune_result_fn on_result, void* user_data, size_t* result_count) {
  return guarded([&] {
    const char* fn = "fp8gemm_tune";
    const std::vector<GemmShape> list = read_shapes(shapes, count, fn);
    const std::vector<TuneResult> results = tune(list, read_tune_options(options, fn));
    if (result_count != nullptr) *result_count = results.size();
    if (on_result == nullptr) return;
    for (const TuneResult& r : results) {
      const fp8gemm_gemm_shape_t shape = to_c(r.shape);
      fp8gemm_tune_result_t c = library_struct<fp8gemm_tune_result_t>();
      c.shape = &shape;
      c.heuristic_kernel = r.heuristic_kernel.c_str();
      c.heuristic_us = r.heuristic_us;
      c.tuned_kernel = r.tuned_kernel.c_str();
      c.tuned_us = r.tuned_us;
      c.candidates_timed = r.candidates_timed;
      on_result(&c, user_data);
    }
  });
}

}  // extern "C"
