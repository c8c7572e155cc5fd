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

void launch_quantize(KernelKind kind, const Bf16Input& x, const Fp8Output& q, const ScaleOutput& sf,
                     const QuantizeOptions& options, Stream stream, unsigned grid) {
  CallContext call(stream);
  DeviceRuntime& runtime = Library::instance().runtime(call.context());
  const DeviceProps& device = runtime.props();
  validate_device(device.cc_major, device.cc_minor, device.name, device.ordinal);
  KernelSpec spec;
  spec.kind = kind;
  spec.option = options.pow2_scales ? 1 : 0;
  const CUfunction function = runtime.kernel_function(spec, Library::instance().store(), !current_cache_only());

  const void* x_data = x.data;
  void* q_data = q.data;
  float* sf_data = sf.data;
  long long ldx = x.ld, ldq = q.ld, sf_row = sf.row_stride, sf_col = sf.col_stride;
  int rows = static_cast<int>(x.rows), cols = static_cast<int>(x.cols);
  void* args[] = {&x_data, &ldx, &q_data, &ldq, &sf_data, &sf_row, &sf_col, &rows, &cols};
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 256;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = 0;
  config.hStream = reinterpret_cast<CUstream>(stream);
  check_cu(driver().cuLaunchKernelEx(&config, function, args, nullptr), "cuLaunchKernelEx(quantize)");
}

}  // namespace

void quantize_per_token(const Bf16Input& x, const Fp8Output& q, const ScaleOutput& scales,
                        const QuantizeOptions& options, Stream stream) {
  const int64_t groups = scale_blocks(x.cols);
  if (!validate_quantize("quantize_per_token", x, q, scales, x.rows, groups)) return;
  // One warp per (row, group), 8 per block; a grid-stride loop past ~16 blocks per SM.
  const int64_t items = x.rows * groups;
  const unsigned grid = static_cast<unsigned>(std::clamp<int64_t>((items + 7) / 8, 1, 132 * 16));
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
  const int64_t token_blocks = scale_blocks(x.rows), hidden_blocks = (x.cols + 31) / 32;
  if (!validate_quantize("quantize_transposed_per_token", x, q, scales, x.cols, token_blocks, true)) return;
  if (token_blocks * hidden_blocks > int64_t(0x7fffffff))
    fail(ErrorCode::InvalidArgument, "quantize_transposed_per_token: [{}, {}] is too large for one launch; split it",
         x.rows, x.cols);
  // One CTA per 128 tokens x 32 hidden columns.
  launch_quantize(KernelKind::QuantizeTransposed1x128, x, q, scales, options, stream,
                  static_cast<unsigned>(token_blocks * hidden_blocks));
}

}  // namespace fp8gemm
