#pragma once

#include <string>

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::detail {

// Checks every rule of gemm_fp8_nt's contract on the host, before anything touches
// the GPU. Throws Error(InvalidArgument) naming the argument and the rule it breaks.
// Returns false when the call has nothing to do (M == 0 or N == 0).
bool validate_gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                          const ScaleMatrix& b_scales, const Bf16Matrix& d);

// The same for gemm_fp8_nt_grouped_contiguous (masked = false; group_info = group_of_row)
// and gemm_fp8_nt_grouped_masked (group_info = masked_m). Returns false when there is
// nothing to do.
bool validate_gemm_grouped(bool masked, const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                           const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* group_info, int64_t groups,
                           int64_t expected_m);

// The same for gemm_fp8_nt_wgrad (C may be null or exactly D).
bool validate_gemm_fp8_nt_wgrad(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c);
// The same for gemm_fp8_nt_wgrad_k_grouped (D and C [groups * M, N], group_k on the device).
bool validate_gemm_k_grouped(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                             const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                             const int32_t* group_k, int64_t groups);

// The same for the quantizers (`op` names the function in the messages): q has x's
// shape, or its transpose when `transposed`; the scales must be [scale_rows, scale_cols].
// Returns false when there is nothing to do (rows == 0 or cols == 0).
bool validate_quantize(const char* op, const Bf16Input& x, const Fp8Output& q, const ScaleOutput& scales,
                       int64_t scale_rows, int64_t scale_cols, bool transposed = false);

// transpose_fp8_block_scaled: w [N, K] and its block scales -> wt [K, N] and the
// transposed scale grid. Returns false when there is nothing to do.
bool validate_fp8_transpose(const Fp8Matrix& w, const ScaleMatrix& w_scales, const Fp8Output& wt,
                            const ScaleOutput& wt_scales);

// convert_scales: same shape, positive input strides, an output layout that writes no
// element twice, no overlap. Returns false when there is nothing to do.
bool validate_scale_copy(const ScaleMatrix& in, const ScaleOutput& out);

// Throws Error(UnsupportedDevice) unless the device is sm_90 (Hopper).
void validate_device(int cc_major, int cc_minor, const std::string& name, int ordinal);

}  // namespace fp8gemm::detail
