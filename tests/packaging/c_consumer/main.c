/* A downstream C99 program: one dense GEMM through the installed C API. Without an NVIDIA
 * driver the call must return FP8GEMM_ERROR_NO_DRIVER (the documented answer) with a message;
 * with a driver, this program only reports what it got. */
#include <stdint.h>
#include <stdio.h>

#include <fp8gemm/fp8gemm.h>

int main(void) {
  const int64_t m = 128, n = 256, k = 512;
  /* Distinct 16 MB device regions, never dereferenced on the host. */
  const fp8gemm_fp8_matrix_t a = {(const void*)((uintptr_t)1 << 24), m, k, k};
  const fp8gemm_fp8_matrix_t b = {(const void*)((uintptr_t)2 << 24), n, k, k};
  const fp8gemm_bf16_matrix_t d = {(void*)((uintptr_t)5 << 24), m, n, n};
  const fp8gemm_scale_matrix_t sa = fp8gemm_per_token_scales((const float*)((uintptr_t)3 << 24), m, k);
  const fp8gemm_scale_matrix_t sb = fp8gemm_block_scales((const float*)((uintptr_t)4 << 24), n, k);
  fp8gemm_runtime_info_t info = fp8gemm_default_runtime_info();
  fp8gemm_status_t status;

  if (fp8gemm_runtime_info(&info, NULL, NULL, NULL) != FP8GEMM_SUCCESS) {
    fprintf(stderr, "consumer (C): fp8gemm_runtime_info failed: %s\n", fp8gemm_last_error_message());
    return 1;
  }
  printf("consumer (C): fp8gemm %s\n", fp8gemm_version_string());
  status = fp8gemm_gemm_fp8_nt(&a, &sa, &b, &sb, &d, NULL);
  printf("consumer (C): %s: %s\n", fp8gemm_status_string(status), fp8gemm_last_error_message());
  if (info.driver_version == 0) return status == FP8GEMM_ERROR_NO_DRIVER ? 0 : 1;
  return 0; /* with a driver, any answer the library gives is reported above */
}
