// quantize_per_token / quantize_per_block: validate -> kernel (cached like any other) -> launch.

#include <algorithm>

#include "api/library.hpp"
#include "driver/driver_api.hpp"
#include "problem/validate.hpp"
#include "tuning/settings.hpp"
#include "util/error.hpp"

namespace fp8gemm {

using namespace detail;

namespace {

// Loads (or builds) a utility kernel and launches it with 256 threads per block.
void launch_utility(KernelKind kind, int option, unsigned grid, void** args, Stream stream) {
  CallContext call(stream);
  DeviceRuntime& runtime = call_runtime(call);
  KernelSpec spec;
  spec.kind = kind;
  spec.option = option;
  const CUfunction function = runtime.kernel_function(spec, Library::instance().store(), !current_cache_only());
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 256;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = 0;
  config.hStream = reinterpret_cast<CUstream>(stream);
  check_cu(driver().cuLaunchKernelEx(&config, function, args, nullptr),
           ("cuLaunchKernelEx(" + spec.slug() + ")").c_str());
}

void launch_quantize(KernelKind kind, const Bf16Input& x, const Fp8Output& q, const ScaleOutput& sf,
                     const QuantizeOptions& options, Stream stream, unsigned grid) {
  const void* x_data = x.data;
  void* q_data = q.data;
  float* sf_data = sf.data;
  long long ldx = x.ld, ldq = q.ld, sf_row = sf.row_stride, sf_col = sf.col_stride;
  int rows = static_cast<int>(x.rows), cols = static_cast<int>(x.cols);
  void* args[] = {&x_data, &ldx, &q_data, &ldq, &sf_data, &sf_row, &sf_col, &rows, &cols};
  launch_utility(kind, options.pow2_scales ? 1 : 0, grid, args, stream);
}

// out(r, c) = in(r, c) over [rows, cols] with the given strides (validated by the caller).
void launch_copy_scales(const float* in, int64_t in_row_stride, int64_t in_col_stride, float* out,
                        int64_t out_row_stride, int64_t out_col_stride, int64_t rows, int64_t cols, Stream stream) {
  long long irs = in_row_stride, ics = in_col_stride, ors = out_row_stride, ocs = out_col_stride;
  int r = static_cast<int>(rows), c = static_cast<int>(cols);
  void* args[] = {&in, &irs, &ics, &out, &ors, &ocs, &r, &c};
  const unsigned grid = static_cast<unsigned>(std::clamp<int64_t>((rows * cols + 255) / 256, 1, 132 * 8));
  launch_utility(KernelKind::CopyScales, 0, grid, args, stream);
}

}  // namespace

void quantize_per_token(const Bf16Input& x, const Fp8Output& q, const ScaleOutput& scales,
                        const QuantizeOptions& options, Stream stream) {
  const int64_t groups = scale_blocks(x.cols);
  if (!validate_quantize("quantize_per_token", x, q, scales, x.rows, groups)) return;
  // One warp per batch of 8 rows x one 128-column group (kBatchRows in quantize.cuh), 8 per
  // block; past 2^24 blocks the warps loop (grid-stride).
  const int64_t batches = (x.rows + 7) / 8 * groups;
  const unsigned grid = static_cast<unsigned>(std::clamp<int64_t>((batches + 7) / 8, 1, int64_t(1) << 24));
  launch_quantize(KernelKind::Quantize1x128, x, q, scales, options, stream, grid);
}

void quantize_per_block(const Bf16Input& x, const Fp8Output& q, const ScaleOutput& scales,
                        const QuantizeOptions& options, Stream stream) {
  const int64_t block_rows = scale_blocks(x.rows), block_cols = scale_blocks(x.cols);
  if (!validate_quantize("quantize_per_block", x, q, scales, block_rows, block_cols)) return;
  if (block_rows * block_cols > int64_t(0x7fffffff))
    fail(ErrorCode::InvalidArgument, "quantize_per_block: {} x {} blocks is too many for one launch; split the tensor",
         block_rows, block_cols);
  // One CTA per 128x128 block.
  launch_quantize(KernelKind::Quantize128x128, x, q, scales, options, stream,
                  static_cast<unsigned>(block_rows * block_cols));
}

void quantize_transposed_per_token(const Bf16Input& x, const Fp8Output& q, const ScaleOutput& scales,
                                   const QuantizeOptions& options, Stream stream) {
  const int64_t token_blocks = scale_blocks(x.rows);
  if (!validate_quantize("quantize_transposed_per_token", x, q, scales, x.cols, token_blocks, true)) return;
  const int64_t hidden_blocks = (x.cols + 63) / 64;  // (x.cols is at most kMaxDimension now)
  if (token_blocks * hidden_blocks > int64_t(0x7fffffff))
    fail(ErrorCode::InvalidArgument, "quantize_transposed_per_token: [{}, {}] is too large for one launch; split it",
         x.rows, x.cols);
  // One CTA per 128 tokens x 64 hidden columns (kTransposeHidden in quantize.cuh).
  launch_quantize(KernelKind::QuantizeTransposed1x128, x, q, scales, options, stream,
                  static_cast<unsigned>(token_blocks * hidden_blocks));
}

void transpose_fp8_block_scaled(const Fp8Matrix& w, const ScaleMatrix& w_scales, const Fp8Output& wt,
                                const ScaleOutput& wt_scales, Stream stream) {
  if (!validate_fp8_transpose(w, w_scales, wt, wt_scales)) return;
  const int64_t tiles = ((w.rows + 63) / 64) * ((w.cols + 63) / 64);
  if (tiles > int64_t(0x7fffffff))
    fail(ErrorCode::InvalidArgument, "transpose_fp8_block_scaled: [{}, {}] is too large for one launch; split it",
         w.rows, w.cols);
  const void* w_data = w.data;
  void* wt_data = wt.data;
  long long ldw = w.ld, ldwt = wt.ld;
  int rows = static_cast<int>(w.rows), cols = static_cast<int>(w.cols);
  void* args[] = {&w_data, &ldw, &wt_data, &ldwt, &rows, &cols};
  launch_utility(KernelKind::TransposeFp8, 0, static_cast<unsigned>(tiles), args, stream);
  // The scale grid moves with the data: wt_scales(j, i) = w_scales(i, j).
  launch_copy_scales(w_scales.data, w_scales.col_stride, w_scales.row_stride, wt_scales.data, wt_scales.row_stride,
                     wt_scales.col_stride, wt_scales.rows, wt_scales.cols, stream);
}

void convert_scales(const ScaleMatrix& in, const ScaleOutput& out, Stream stream) {
  if (!validate_scale_copy(in, out)) return;
  launch_copy_scales(in.data, in.row_stride, in.col_stride, out.data, out.row_stride, out.col_stride, out.rows,
                     out.cols, stream);
}

}  // namespace fp8gemm
