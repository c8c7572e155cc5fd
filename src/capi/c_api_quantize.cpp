// The C API's quantizers, the block-scaled transpose and the scale layout conversion.

#include "capi/c_api_internal.hpp"

using namespace fp8gemm;
using namespace fp8gemm::capi;

namespace {

QuantizeOptions read_quantize_options(const fp8gemm_quantize_options_t* options, const char* fn) {
  const fp8gemm_quantize_options_t o = read_versioned(options, fp8gemm_default_quantize_options(), fn, "options");
  QuantizeOptions out;
  out.pow2_scales = o.pow2_scales != 0;
  return out;
}

using Quantizer = void (*)(const Bf16Input&, const Fp8Output&, const ScaleOutput&, const QuantizeOptions&, Stream);

fp8gemm_status_t quantize(Quantizer quantizer, const char* fn, const fp8gemm_bf16_input_t* x,
                          const fp8gemm_fp8_output_t* q, const fp8gemm_scale_output_t* scales,
                          const fp8gemm_quantize_options_t* options, fp8gemm_stream_t stream) {
  return guarded([&] {
    const Bf16Input in = to_cpp(required(x, fn, "x"));
    const Fp8Output out = to_cpp(required(q, fn, "q"));
    const ScaleOutput out_scales = to_cpp(required(scales, fn, "scales"));
    quantizer(in, out, out_scales, read_quantize_options(options, fn), stream);
  });
}

}  // namespace

extern "C" {

fp8gemm_status_t fp8gemm_quantize_per_token(const fp8gemm_bf16_input_t* x, const fp8gemm_fp8_output_t* q,
                                            const fp8gemm_scale_output_t* scales,
                                            const fp8gemm_quantize_options_t* options, fp8gemm_stream_t stream) {
  return quantize(&quantize_per_token, "fp8gemm_quantize_per_token", x, q, scales, options, stream);
}

fp8gemm_status_t fp8gemm_quantize_per_block(const fp8gemm_bf16_input_t* x, const fp8gemm_fp8_output_t* q,
                                            const fp8gemm_scale_output_t* scales,
                                            const fp8gemm_quantize_options_t* options, fp8gemm_stream_t stream) {
  return quantize(&quantize_per_block, "fp8gemm_quantize_per_block", x, q, scales, options, stream);
}

fp8gemm_status_t fp8gemm_quantize_transposed_per_token(const fp8gemm_bf16_input_t* x, const fp8gemm_fp8_output_t* q,
                                                       const fp8gemm_scale_output_t* scales,
                                                       const fp8gemm_quantize_options_t* options,
                                                       fp8gemm_stream_t stream) {
  return quantize(&quantize_transposed_per_token, "fp8gemm_quantize_transposed_per_token", x, q, scales, options,
                  stream);
}

fp8gemm_status_t fp8gemm_transpose_fp8_block_scaled(const fp8gemm_fp8_matrix_t* w,
                                                    const fp8gemm_scale_matrix_t* w_scales,
                                                    const fp8gemm_fp8_output_t* wt,
                                                    const fp8gemm_scale_output_t* wt_scales, fp8gemm_stream_t stream) {
  return guarded([&] {
    const char* fn = "fp8gemm_transpose_fp8_block_scaled";
    const Fp8Matrix in = to_cpp(required(w, fn, "w"));
    const ScaleMatrix in_scales = to_cpp(required(w_scales, fn, "w_scales"));
    const Fp8Output out = to_cpp(required(wt, fn, "wt"));
    transpose_fp8_block_scaled(in, in_scales, out, to_cpp(required(wt_scales, fn, "wt_scales")), stream);
  });
}

fp8gemm_status_t fp8gemm_convert_scales(const fp8gemm_scale_matrix_t* in, const fp8gemm_scale_output_t* out,
                                        fp8gemm_stream_t stream) {
  return guarded([&] {
    const char* fn = "fp8gemm_convert_scales";
    const ScaleMatrix from = to_cpp(required(in, fn, "in"));
    convert_scales(from, to_cpp(required(out, fn, "out")), stream);
  });
}

}  // extern "C"
