// The C API's GEMMs: dense (bf16 and fp32 out), m-grouped and k-grouped. Each converts the
// descriptors and calls the C++ function, which validates and launches.

#include "capi/c_api_internal.hpp"

using namespace fp8gemm;
using namespace fp8gemm::capi;

namespace {

// The operands every GEMM takes, converted, or InvalidArgument naming the NULL one.
struct Operands {
  Fp8Matrix a;
  ScaleMatrix a_scales;
  Fp8Matrix b;
  ScaleMatrix b_scales;
};

Operands operands(const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
                  const fp8gemm_scale_matrix_t* b_scales, const char* fn) {
  // (Braced initializers are evaluated in order: the first NULL one is named.)
  return {to_cpp(required(a, fn, "a")), to_cpp(required(a_scales, fn, "a_scales")), to_cpp(required(b, fn, "b")),
          to_cpp(required(b_scales, fn, "b_scales"))};
}

// C of the weight gradients: NULL stays NULL (C = 0); a descriptor of D's memory accumulates
// in place (the C++ API recognizes it by its data and ld, not by the pointer).
const Fp32Matrix* optional_c(const fp8gemm_fp32_matrix_t* c, Fp32Matrix* storage) {
  if (c == nullptr) return nullptr;
  *storage = to_cpp(*c);
  return storage;
}

KernelConfig read_config(const fp8gemm_kernel_config_t* config, const char* fn) {
  const fp8gemm_kernel_config_t c =
      read_versioned(&required(config, fn, "config"), fp8gemm_default_kernel_config(), fn, "config");
  return KernelConfig{c.block_m, c.block_n, c.stages, c.group_n, c.multicast, c.tma_store, c.split_k};
}

// A C GEMM entry point: under guarded(), converts the operands and D (InvalidArgument naming
// the first NULL one, in argument order) and hands them to `call`, which reads the rest of
// its arguments and calls the C++ function.
template <typename CMatrix, typename Call>
fp8gemm_status_t gemm_entry(const char* fn, const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales,
                            const fp8gemm_fp8_matrix_t* b, const fp8gemm_scale_matrix_t* b_scales, const CMatrix* d,
                            Call&& call) {
  return guarded([&] {
    const Operands o = operands(a, a_scales, b, b_scales, fn);
    call(o, to_cpp(required(d, fn, "d")));
  });
}

}  // namespace

extern "C" {

fp8gemm_status_t fp8gemm_gemm_fp8_nt(const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales,
                                     const fp8gemm_fp8_matrix_t* b, const fp8gemm_scale_matrix_t* b_scales,
                                     const fp8gemm_bf16_matrix_t* d, fp8gemm_stream_t stream) {
  return gemm_entry("fp8gemm_gemm_fp8_nt", a, a_scales, b, b_scales, d, [&](const Operands& o, const Bf16Matrix& out) {
    gemm_fp8_nt(o.a, o.a_scales, o.b, o.b_scales, out, stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_with_options(const fp8gemm_fp8_matrix_t* a,
                                                  const fp8gemm_scale_matrix_t* a_scales,
                                                  const fp8gemm_fp8_matrix_t* b,
                                                  const fp8gemm_scale_matrix_t* b_scales,
                                                  const fp8gemm_bf16_matrix_t* d,
                                                  const fp8gemm_gemm_options_t* options, fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_with_options";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Bf16Matrix& out) {
    gemm_fp8_nt(o.a, o.a_scales, o.b, o.b_scales, out, read_gemm_options(options, fn), stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_with_config(const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales,
                                                 const fp8gemm_fp8_matrix_t* b, const fp8gemm_scale_matrix_t* b_scales,
                                                 const fp8gemm_bf16_matrix_t* d, const fp8gemm_kernel_config_t* config,
                                                 fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_with_config";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Bf16Matrix& out) {
    gemm_fp8_nt(o.a, o.a_scales, o.b, o.b_scales, out, read_config(config, fn), stream);
  });
}

// (C of the weight gradients: optional_c keeps NULL and D's own descriptor apart.)
fp8gemm_status_t fp8gemm_gemm_fp8_nt_wgrad(const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales,
                                           const fp8gemm_fp8_matrix_t* b, const fp8gemm_scale_matrix_t* b_scales,
                                           const fp8gemm_fp32_matrix_t* d, const fp8gemm_fp32_matrix_t* c,
                                           fp8gemm_stream_t stream) {
  return gemm_entry("fp8gemm_gemm_fp8_nt_wgrad", a, a_scales, b, b_scales, d, [&](const Operands& o, const Fp32Matrix& out) {
    Fp32Matrix c_storage;
    gemm_fp8_nt_wgrad(o.a, o.a_scales, o.b, o.b_scales, out, optional_c(c, &c_storage), stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_wgrad_with_config(const fp8gemm_fp8_matrix_t* a,
                                                       const fp8gemm_scale_matrix_t* a_scales,
                                                       const fp8gemm_fp8_matrix_t* b,
                                                       const fp8gemm_scale_matrix_t* b_scales,
                                                       const fp8gemm_fp32_matrix_t* d, const fp8gemm_fp32_matrix_t* c,
                                                       const fp8gemm_kernel_config_t* config, fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_wgrad_with_config";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Fp32Matrix& out) {
    Fp32Matrix c_storage;
    const Fp32Matrix* c_cpp = optional_c(c, &c_storage);
    gemm_fp8_nt_wgrad(o.a, o.a_scales, o.b, o.b_scales, out, c_cpp, read_config(config, fn), stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_grouped_contiguous(const fp8gemm_fp8_matrix_t* a,
                                                        const fp8gemm_scale_matrix_t* a_scales,
                                                        const fp8gemm_fp8_matrix_t* b,
                                                        const fp8gemm_scale_matrix_t* b_scales,
                                                        const fp8gemm_bf16_matrix_t* d, const int32_t* group_of_row,
                                                        int64_t groups, fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_grouped_contiguous";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Bf16Matrix& out) {
    gemm_fp8_nt_grouped_contiguous(o.a, o.a_scales, o.b, o.b_scales, out, group_of_row, groups, stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_grouped_masked(const fp8gemm_fp8_matrix_t* a,
                                                    const fp8gemm_scale_matrix_t* a_scales,
                                                    const fp8gemm_fp8_matrix_t* b,
                                                    const fp8gemm_scale_matrix_t* b_scales,
                                                    const fp8gemm_bf16_matrix_t* d, const int32_t* masked_m,
                                                    int64_t groups, int64_t expected_m, fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_grouped_masked";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Bf16Matrix& out) {
    gemm_fp8_nt_grouped_masked(o.a, o.a_scales, o.b, o.b_scales, out, masked_m, groups, expected_m, stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_wgrad_k_grouped(const fp8gemm_fp8_matrix_t* a,
                                                     const fp8gemm_scale_matrix_t* a_scales,
                                                     const fp8gemm_fp8_matrix_t* b,
                                                     const fp8gemm_scale_matrix_t* b_scales,
                                                     const fp8gemm_fp32_matrix_t* d, const fp8gemm_fp32_matrix_t* c,
                                                     const int32_t* group_k, int64_t groups,
                                                     fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_wgrad_k_grouped";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Fp32Matrix& out) {
    Fp32Matrix c_storage;
    const Fp32Matrix* c_cpp = optional_c(c, &c_storage);
    gemm_fp8_nt_wgrad_k_grouped(o.a, o.a_scales, o.b, o.b_scales, out, c_cpp, group_k, groups, stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_grouped_contiguous_with_config(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_bf16_matrix_t* d, const int32_t* group_of_row,
    int64_t groups, const fp8gemm_kernel_config_t* config, fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_grouped_contiguous_with_config";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Bf16Matrix& out) {
    gemm_fp8_nt_grouped_contiguous(o.a, o.a_scales, o.b, o.b_scales, out, group_of_row, groups,
                                   read_config(config, fn), stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_grouped_masked_with_config(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_bf16_matrix_t* d, const int32_t* masked_m, int64_t groups,
    int64_t expected_m, const fp8gemm_kernel_config_t* config, fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_grouped_masked_with_config";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Bf16Matrix& out) {
    gemm_fp8_nt_grouped_masked(o.a, o.a_scales, o.b, o.b_scales, out, masked_m, groups, expected_m,
                               read_config(config, fn), stream);
  });
}

fp8gemm_status_t fp8gemm_gemm_fp8_nt_wgrad_k_grouped_with_config(
    const fp8gemm_fp8_matrix_t* a, const fp8gemm_scale_matrix_t* a_scales, const fp8gemm_fp8_matrix_t* b,
    const fp8gemm_scale_matrix_t* b_scales, const fp8gemm_fp32_matrix_t* d, const fp8gemm_fp32_matrix_t* c,
    const int32_t* group_k, int64_t groups, const fp8gemm_kernel_config_t* config, fp8gemm_stream_t stream) {
  const char* fn = "fp8gemm_gemm_fp8_nt_wgrad_k_grouped_with_config";
  return gemm_entry(fn, a, a_scales, b, b_scales, d, [&](const Operands& o, const Fp32Matrix& out) {
    Fp32Matrix c_storage;
    const Fp32Matrix* c_cpp = optional_c(c, &c_storage);
    gemm_fp8_nt_wgrad_k_grouped(o.a, o.a_scales, o.b, o.b_scales, out, c_cpp, group_k, groups,
                                read_config(config, fn), stream);
  });
}

}  // extern "C"
