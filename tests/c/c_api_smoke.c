/* A C99 program using libfp8gemm through fp8gemm.h alone: the version, the error rule (a
 * status and this thread's message naming the broken rule), a valid dense GEMM reaching
 * the driver, and the admin calls against the test's own cache directory (prewarm, listing,
 * clearing). Exits 0 when every check holds; prints each failure. */

#include <stdio.h>
#include <string.h>

#include "fp8gemm/fp8gemm.h"

static int failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s (status message: \"%s\")\n", what, fp8gemm_last_error_message());
    ++failures;
  }
}

static int contains(const char* text, const char* needle) { return strstr(text, needle) != NULL; }

static void count_kernel(const fp8gemm_cached_kernel_t* kernel, void* user_data) {
  if (strcmp(kernel->status, "ok") == 0) ++*(size_t*)user_data;
}

int main(void) {
  const int64_t m = 64, n = 128, k = 256;
  int major = -1, minor = -1, patch = -1;
  fp8gemm_runtime_info_t info = fp8gemm_default_runtime_info();
  fp8gemm_fp8_matrix_t a, b;
  fp8gemm_bf16_matrix_t d;
  fp8gemm_scale_matrix_t a_scales, b_scales;
  fp8gemm_status_t status;
  fp8gemm_gemm_shape_t shape = fp8gemm_make_gemm_shape(m, n, k, FP8GEMM_GEMM_FORWARD, 1);
  fp8gemm_prewarm_report_t report = fp8gemm_default_prewarm_report();
  fp8gemm_cache_clear_report_t cleared = fp8gemm_default_cache_clear_report();
  char name[128];
  size_t needed = 0, listed = 0, ok_entries = 0;

  /* The library is the header's version. */
  check(fp8gemm_version(&major, &minor, &patch) == FP8GEMM_SUCCESS, "fp8gemm_version");
  check(major == FP8GEMM_VERSION_MAJOR && minor == FP8GEMM_VERSION_MINOR && patch == FP8GEMM_VERSION_PATCH,
        "library version == header version");
  check(strcmp(fp8gemm_version_string(), FP8GEMM_VERSION_STRING) == 0, "version string");
  check(fp8gemm_runtime_info(&info, NULL, NULL, NULL) == FP8GEMM_SUCCESS, "fp8gemm_runtime_info");

  /* Fake device pointers: a call that validates is refused before anything reads them where
   * there is no driver, and the checks that need one to be absent are skipped otherwise. */
  a.data = (const void*)(uintptr_t)0x100000000ull;
  a.rows = m;
  a.cols = k;
  a.ld = k;
  b.data = (const void*)(uintptr_t)0x200000000ull;
  b.rows = n;
  b.cols = k;
  b.ld = k;
  d.data = (void*)(uintptr_t)0x300000000ull;
  d.rows = m;
  d.cols = n;
  d.ld = n;
  a_scales = fp8gemm_per_token_scales((const float*)(uintptr_t)0x400000000ull, m, k);
  b_scales = fp8gemm_block_scales((const float*)(uintptr_t)0x500000000ull, n, k);

  /* A broken rule: InvalidArgument, and the message says which. */
  a.ld = k + 8;
  status = fp8gemm_gemm_fp8_nt(&a, &a_scales, &b, &b_scales, &d, NULL);
  check(status == FP8GEMM_ERROR_INVALID_ARGUMENT, "a.ld not a multiple of 16 is InvalidArgument");
  check(contains(fp8gemm_last_error_message(), "a.ld = 264 must be >= K = 256 and a multiple of 16"),
        "the message names the leading-dimension rule");
  a.ld = k;
  check(fp8gemm_gemm_fp8_nt(NULL, &a_scales, &b, &b_scales, &d, NULL) == FP8GEMM_ERROR_INVALID_ARGUMENT &&
            contains(fp8gemm_last_error_message(), "a is NULL"),
        "a NULL descriptor is InvalidArgument");

  /* Valid arguments reach the driver. */
  if (info.driver_version == 0) {
    status = fp8gemm_gemm_fp8_nt(&a, &a_scales, &b, &b_scales, &d, NULL);
    check(status == FP8GEMM_ERROR_NO_DRIVER || status == FP8GEMM_ERROR_NO_DEVICE,
          "a valid GEMM without a usable driver is NoDriver (or NoDevice)");
    check(fp8gemm_last_error_message()[0] != '\0', "the no-driver failure has a message");
  } else {
    printf("skipped: the GEMM without a driver (a CUDA driver is present: %s)\n", info.driver);
  }

  /* Success empties the message. */
  check(fp8gemm_version(NULL, NULL, NULL) == FP8GEMM_SUCCESS && fp8gemm_last_error_message()[0] == '\0',
        "a successful call leaves an empty message");

  /* Admin calls, in this test's own cache directory (emptied first): compile, name, list, clear. */
  check(fp8gemm_clear_cache(1, 1, NULL) == FP8GEMM_SUCCESS, "fp8gemm_clear_cache before the test");
  check(fp8gemm_prewarm(&shape, 1, NULL, &report) == FP8GEMM_SUCCESS, "fp8gemm_prewarm");
  check(report.kernels == 1 && report.compiled == 1 && report.kernel_name_count == 1 && report.not_saved == 0,
        "one kernel, compiled and saved");
  check(fp8gemm_kernel_name(&shape, NULL, NULL, 0, &needed) == FP8GEMM_SUCCESS && needed > 1 &&
            needed <= sizeof name,
        "fp8gemm_kernel_name size query");
  check(fp8gemm_kernel_name(&shape, NULL, name, sizeof name, NULL) == FP8GEMM_SUCCESS &&
            strcmp(name, report.kernel_names[0]) == 0,
        "fp8gemm_kernel_name is the prewarmed kernel");
  check(fp8gemm_cached_kernels(count_kernel, &ok_entries, &listed) == FP8GEMM_SUCCESS && listed >= 1 &&
            ok_entries == listed,
        "fp8gemm_cached_kernels lists usable entries");
  check(fp8gemm_clear_cache(1, 0, &cleared) == FP8GEMM_SUCCESS && cleared.kernels == listed &&
            cleared.failed_count == 0,
        "fp8gemm_clear_cache removes them");
  check(fp8gemm_cached_kernels(NULL, NULL, &listed) == FP8GEMM_SUCCESS && listed == 0, "the cache is empty");

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("C API smoke test passed (library %s, cache %s)\n", fp8gemm_version_string(), info.cache_dir);
  return 0;
}
