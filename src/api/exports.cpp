// libfp8gemm.so is the fp8gemm_core archive linked whole; only declarations marked
// FP8GEMM_API (include/fp8gemm/) are exported from it.
