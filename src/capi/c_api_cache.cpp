// The C API's kernel cache side: prewarm, kernel names, listing and clearing the disk cache.

#include "capi/c_api_internal.hpp"

using namespace fp8gemm;
using namespace fp8gemm::capi;

namespace {

// What the strings of the last report returned on this thread point into (the header
// promises them until the next call of the same function on the thread).
struct PrewarmStrings {
  PrewarmReport report;
  std::vector<const char*> names;
};
thread_local PrewarmStrings t_prewarm;

struct ClearStrings {
  std::vector<std::string> failed;
  std::vector<const char*> pointers;
};
thread_local ClearStrings t_clear;

PrewarmOptions read_prewarm_options(const fp8gemm_prewarm_options_t* options, const char* fn) {
  const fp8gemm_prewarm_options_t o = read_versioned(options, fp8gemm_default_prewarm_options(), fn, "options");
  PrewarmOptions out;
  out.jobs = o.jobs;
  out.num_sms = o.num_sms;
  out.b_constant = o.b_constant != 0;
  if (o.on_progress != nullptr)
    out.on_progress = [callback = o.on_progress, user = o.user_data](const PrewarmProgress& p) {
      fp8gemm_prewarm_progress_t c = library_struct<fp8gemm_prewarm_progress_t>();
      c.done = p.done;
      c.total = p.total;
      c.kernel = p.kernel.c_str();
      c.compiled = p.compiled ? 1 : 0;
      c.source = p.source.c_str();
      c.elapsed_s = p.elapsed_s;
      callback(&c, user);
    };
  return out;
}

void write_clear_report(const CacheClearReport& r, fp8gemm_cache_clear_report_t* report) {
  if (report == nullptr) return;
  t_clear.failed = r.failed;
  t_clear.pointers = c_strings(t_clear.failed);
  fp8gemm_cache_clear_report_t c = library_struct<fp8gemm_cache_clear_report_t>();
  c.kernels = r.kernels;
  c.tuning_files = r.tuning_files;
  c.other = r.other;
  c.failed_count = t_clear.pointers.size();
  c.failed = t_clear.pointers.data();
  write_versioned(report, c);
}

}  // namespace

extern "C" {

fp8gemm_status_t fp8gemm_prewarm(const fp8gemm_gemm_shape_t* shapes, size_t count,
                                 const fp8gemm_prewarm_options_t* options, fp8gemm_prewarm_report_t* report) {
  return guarded([&] {
    const char* fn = "fp8gemm_prewarm";
    // Every argument is checked before anything is compiled.
    if (report != nullptr) check_struct_size(*report, fn, "report");
    const std::vector<GemmShape> list = read_shapes(shapes, count, fn);
    const PrewarmOptions cpp_options = read_prewarm_options(options, fn);
    PrewarmReport r = prewarm(list, cpp_options);
    if (report == nullptr) return;
    t_prewarm.report = std::move(r);
    t_prewarm.names = c_strings(t_prewarm.report.kernel_names);
    const PrewarmReport& kept = t_prewarm.report;
    fp8gemm_prewarm_report_t c = library_struct<fp8gemm_prewarm_report_t>();
    c.shapes = kept.shapes;
    c.kernels = kept.kernels;
    c.compiled = kept.compiled;
    c.from_disk = kept.from_disk;
    c.from_memory = kept.from_memory;
    c.num_sms = kept.num_sms;
    c.seconds = kept.seconds;
    c.kernel_name_count = t_prewarm.names.size();
    c.kernel_names = t_prewarm.names.data();
    c.compiled_and_skipped = kept.compiled_and_skipped;
    c.not_saved = kept.not_saved;
    c.not_saved_reason = kept.not_saved_reason.c_str();
    write_versioned(report, c);
  });
}

fp8gemm_status_t fp8gemm_kernel_name(const fp8gemm_gemm_shape_t* shape, const fp8gemm_gemm_options_t* options,
                                     char* buffer, size_t capacity, size_t* needed) {
  return guarded([&] {
    const char* fn = "fp8gemm_kernel_name";
    const fp8gemm_gemm_shape_t& given = required(shape, fn, "shape");
    const GemmShape s = to_cpp(read_versioned(&given, fp8gemm_default_gemm_shape(), fn, "shape"));
    if (buffer == nullptr && capacity > 0)
      invalid("{}: buffer is NULL but capacity = {}; pass NULL with capacity 0 to ask for the size", fn, capacity);
    const std::string name = options != nullptr ? kernel_name(s, read_gemm_options(options, fn)) : kernel_name(s);
    if (needed != nullptr) *needed = name.size() + 1;
    if (buffer == nullptr) return;  // a size query
    if (capacity == 0)  // not even the NUL fits: nothing is written
      throw StatusError{FP8GEMM_ERROR_BUFFER_TOO_SMALL,
                        fmt::format("fp8gemm: buffer too small: {}: the name needs {} bytes (NUL included), the "
                                    "buffer holds 0 (pass NULL with capacity 0 to ask for the size)",
                                    fn, name.size() + 1)};
    const size_t written = std::min(name.size(), capacity - 1);
    std::memcpy(buffer, name.data(), written);
    buffer[written] = '\0';
    if (written < name.size())
      throw StatusError{FP8GEMM_ERROR_BUFFER_TOO_SMALL,
                        fmt::format("fp8gemm: buffer too small: {}: the name needs {} bytes (NUL included), the "
                                    "buffer holds {}",
                                    fn, name.size() + 1, capacity)};
  });
}

fp8gemm_status_t fp8gemm_cached_kernels(fp8gemm_cached_kernel_fn on_kernel, void* user_data, size_t* count) {
  return guarded([&] {
    report_items(cached_kernels(), on_kernel, user_data, count, [](const CachedKernel& k, fp8gemm_cached_kernel_t& c) {
      c.file = k.file.c_str();
      c.kernel = k.kernel.c_str();
      c.bytes = k.bytes;
      c.category = k.category.c_str();
      c.status = k.status.c_str();
      c.stale = k.stale ? 1 : 0;
    });
  });
}

fp8gemm_status_t fp8gemm_cached_tuning_databases(fp8gemm_cached_tuning_database_fn on_database, void* user_data,
                                                 size_t* count) {
  return guarded([&] {
    report_items(cached_tuning_databases(), on_database, user_data, count,
                 [](const CachedTuningDatabase& t, fp8gemm_cached_tuning_database_t& c) {
                   c.file = t.file.c_str();
                   c.status = t.status.c_str();
                   c.readable = t.readable ? 1 : 0;
                   c.problems = t.problems;
                   c.gpu = t.gpu.c_str();
                   c.nvrtc = t.nvrtc.c_str();
                   c.library = t.library.c_str();
                   c.sms = t.sms;
                   c.driver = t.driver;
                   c.problems_stale = t.problems_stale;
                 });
  });
}

fp8gemm_status_t fp8gemm_clear_cache(int kernels, int tuning, fp8gemm_cache_clear_report_t* report) {
  return guarded([&] {
    if (report != nullptr) check_struct_size(*report, "fp8gemm_clear_cache", "report");
    write_clear_report(clear_cache(kernels != 0, tuning != 0), report);
  });
}

fp8gemm_status_t fp8gemm_clear_stale_cache(fp8gemm_cache_clear_report_t* report) {
  return guarded([&] {
    if (report != nullptr) check_struct_size(*report, "fp8gemm_clear_stale_cache", "report");
    write_clear_report(clear_stale_cache(), report);
  });
}

}  // extern "C"
