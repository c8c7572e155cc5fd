#pragma once

// fp8gemm: JIT-compiled FP8 (e4m3) block-scaled GEMMs for NVIDIA Hopper (sm_90a).
//
// Everything that touches the GPU runs asynchronously on the caller's stream,
// allocates nothing per call and synchronizes nothing (except tune() and, in tuning
// mode On, a problem's first call, which time kernels: see Tuning). The library loads the CUDA
// driver (libcuda.so.1) itself at first use; linking it needs no CUDA library
// other than NVRTC, and it loads on machines without a GPU.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fp8gemm/version.hpp"

#if defined(FP8GEMM_BUILDING)
#define FP8GEMM_API __attribute__((visibility("default")))
#else
#define FP8GEMM_API
#endif

struct CUstream_st;

namespace fp8gemm {

// The same type as cudaStream_t and CUstream; nullptr is the legacy default stream.
using Stream = CUstream_st*;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

enum class ErrorCode {
  InvalidArgument,    // a shape, pointer, leading dimension or scale layout breaks a rule
  NoDriver,           // libcuda.so.1 could not be loaded (no NVIDIA driver on this machine)
  NoDevice,           // the driver is there but no CUDA device / no current context usable
  UnsupportedDevice,  // the device is not sm_90 (Hopper)
  CompileFailed,      // NVRTC rejected a generated kernel; the message holds the compile log
  CudaError,          // a CUDA driver call failed
  Internal,           // a bug in fp8gemm: please report it with the message
  NotCached,          // cache-only mode: the kernel is not in the disk cache (run `fp8gemm prewarm`)
};

FP8GEMM_API const char* to_string(ErrorCode code) noexcept;

// Every error the library throws. what() says what was wrong and what to do.
class FP8GEMM_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// ---------------------------------------------------------------------------
// Size limits (README "Limits"): each one broken is an Error(InvalidArgument) naming it
// ---------------------------------------------------------------------------

// M, N, K, groups, leading dimensions and scale strides (elements); the kernels' row, tile
// and coordinate arithmetic is 32-bit.
constexpr int64_t kMaxDimension = (int64_t(1) << 31) - 1024;
// K of gemm_fp8_nt and the m-grouped GEMMs (128x128-scaled B: a tile's B scales for all of
// K sit in shared memory). The weight gradients take K up to kMaxDimension.
constexpr int64_t kMaxK1D2D = int64_t(1) << 20;
// Output tiles of one call, counted as (rows / 64 + groups) x (N / 16 + 1).
constexpr int64_t kMaxTiles = kMaxDimension;

// ---------------------------------------------------------------------------
// Operand descriptions (device pointers; sizes and strides in elements)
// ---------------------------------------------------------------------------

// Every matrix the API reads or writes is one DeviceMatrix: row-major, element (r, c) at
// data[r * ld + c], ld >= cols, data and rows 16-byte aligned. Its element type and whether
// the library writes it make it a type of its own, so that an input cannot be passed for an
// output, nor e4m3 bytes for bf16 values. Scale factors are a DeviceScales (any strides).
template <typename Element, typename Pointer>
struct DeviceMatrix {
  Pointer data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
};

// fp32 scale factors: element (r, c) is data[r * row_stride + c * col_stride].
// "real value = fp8 value x scale".
template <typename Pointer>
struct DeviceScales {
  Pointer data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// The element types (tags only).
namespace element {
struct E4m3;
struct Bf16;
struct Fp32;
}  // namespace element

// An e4m3 matrix, K contiguous ("K-major"): element (r, c) is the byte at data[r * ld + c];
// ld % 16 == 0.
using Fp8Matrix = DeviceMatrix<element::E4m3, const void*>;
// A bf16 output matrix (2 bytes an element); ld % 8 == 0 (16-byte rows).
using Bf16Matrix = DeviceMatrix<element::Bf16, void*>;
// An fp32 matrix (the weight gradients' D and C); ld % 4 == 0 (16-byte rows).
using Fp32Matrix = DeviceMatrix<element::Fp32, float*>;
// A bf16 input of the quantizers; ld % 8 == 0.
using Bf16Input = DeviceMatrix<element::Bf16, const void*>;
// An e4m3 output of the quantizers; ld % 16 == 0 (what gemm_fp8_nt reads).
using Fp8Output = DeviceMatrix<element::E4m3, void*>;
// Scales a GEMM reads.
using ScaleMatrix = DeviceScales<const float*>;
// Scales a quantizer writes: one of the strides is 1 and the other spans the matching
// dimension (no element written twice).
using ScaleOutput = DeviceScales<float*>;

// Number of 128-wide blocks covering `k` (the last may be partial); without overflow for any k.
constexpr int64_t scale_blocks(int64_t k) { return k > 0 ? k / 128 + (k % 128 != 0) : (k + 127) / 128; }

// Column stride of per-token scales for `m` rows: m rounded up to 4 floats (16 bytes);
// without overflow for any m (INT64_MAX where the multiple of 4 is past it).
constexpr int64_t per_token_scale_stride(int64_t m) { return m <= INT64_MAX - 3 ? (m + 3) / 4 * 4 : INT64_MAX; }

// Per-token (1x128) scales of an [m, k] operand in the layout the GEMM reads:
// logical [m, ceil(k/128)], M-major ("column-major"), each column padded to
// per_token_scale_stride(m) floats. Scale of row r, K block j: data[j * stride + r].
// The buffer holds ceil(k/128) * per_token_scale_stride(m) floats.
constexpr ScaleMatrix per_token_scales(const float* data, int64_t m, int64_t k) {
  return ScaleMatrix{data, m, scale_blocks(k), 1, per_token_scale_stride(m)};
}

// Per-block (128x128) scales of an [n, k] operand: logical [ceil(n/128), ceil(k/128)],
// row-major. Scale of the block holding (row r, column c): data[(r/128) * ceil(k/128) + c/128].
// The transposed layout (col_stride 1 replaced by row_stride 1) is accepted too.
constexpr ScaleMatrix block_scales(const float* data, int64_t n, int64_t k) {
  return ScaleMatrix{data, scale_blocks(n), scale_blocks(k), scale_blocks(k), 1};
}

// ---------------------------------------------------------------------------
// GEMMs
// ---------------------------------------------------------------------------

// D [M,N] bf16 = A [M,K] x B [N,K]^T, both e4m3 and K-major ("NT").
//   a_scales: per-token, logical [M, ceil(K/128)], M-major (row_stride == 1), column
//             stride a multiple of 4 floats and >= M; per_token_scales() builds it.
//   b_scales: per-block 128x128, logical [ceil(N/128), ceil(K/128)], row-major or
//             column-major (one stride 1, the other at least that dimension's extent).
// The tensor cores accumulate each 128-wide K block, which is then scaled and added
// into fp32 registers ("promotion every 128 K"). K need not be a multiple of 128.
// Rules: M, N, K >= 0, and K > 0 when M and N are (an empty reduction is rejected);
// K % 16 == 0; N % 8 == 0; 16-byte aligned pointers and rows (b_scales: 4-byte).
// M == 0 or N == 0 does nothing. D must not overlap the inputs.
// Bad input throws Error(InvalidArgument) before anything is launched or written.
// The first call for a new shape may compile a kernel (see prewarm()).
FP8GEMM_API void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales,
                             const Fp8Matrix& b, const ScaleMatrix& b_scales,
                             const Bf16Matrix& d, Stream stream = nullptr);

// Per-call options of gemm_fp8_nt.
struct GemmOptions {
  // B and b_scales stay constant while the call may run: no work enqueued earlier on the
  // stream that may still be running writes them (model weights during inference, where
  // the kernel before the GEMM writes only its activations). GEMM kernels are launched
  // with programmatic dependent launch, so they start while the previous kernel finishes;
  // with this promise a small-M call (M <= 128) may start loading B at once instead of
  // after that kernel has finished, which shortens decode-size calls by up to 11 % (see
  // docs/PERFORMANCE.md). A is still read only after the previous kernel has finished.
  // If the promise is broken, D may be computed from stale B. Results are the same bits
  // as without the option. Such calls run a variant of the kernel ("_cb"), compiled and
  // loaded on first use (make one call before capturing such calls in a CUDA graph) or
  // compiled by prewarm() with PrewarmOptions::b_constant.
  bool b_constant = false;
};

// gemm_fp8_nt with options (same rules and errors as above).
FP8GEMM_API void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales,
                             const Fp8Matrix& b, const ScaleMatrix& b_scales,
                             const Bf16Matrix& d, const GemmOptions& options, Stream stream = nullptr);

// Weight gradient ("1D1D"): D [M,N] fp32 = C + A [M,K] x B [N,K]^T, both e4m3 and K-major,
// both scaled per token along K: a_scales [M, ceil(K/128)] M-major and b_scales
// [N, ceil(K/128)] N-major (per_token_scales(data, M, K) / per_token_scales(data, N, K)).
// c: nullptr (C = 0), &d (accumulate into D in place), or another [M,N] fp32 matrix that
// does not overlap D. Rules as for gemm_fp8_nt, with N % 4 == 0 for the fp32 rows and
// b_scales 16-byte aligned like a_scales.
// C is read once and D written once, tile by tile (one fp32 addition per element: D =
// fl(C + P), P the promoted product); in place and separate C take the same path. Writes only
// the [M, N] elements of D, never the padding of its rows.
FP8GEMM_API void gemm_fp8_nt_wgrad(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                   const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c = nullptr,
                                   Stream stream = nullptr);

// ---------------------------------------------------------------------------
// Grouped GEMMs (mixture of experts): G experts in one launch
// ---------------------------------------------------------------------------
// Each picks its kernel as gemm_fp8_nt does (tuning database or heuristic, see TuningMode),
// for the GemmShape of the call (see GemmKind): contiguous by the power-of-two bucket of its
// total rows, masked by groups x expected_m and its expert count, k-grouped by all groups'
// rows, the bucket of the mean K per group and its group count.

// Rows of an expert's segment in gemm_fp8_nt_grouped_contiguous start at multiples of this.
constexpr int64_t kGroupedSegmentRows = 128;

// m-grouped contiguous (prefill, training forward/dgrad). A [M, K]: the rows of all experts
// stacked, each expert's segment starting at a multiple of kGroupedSegmentRows (pad each
// segment up to it); a_scales per token over all M rows, as for gemm_fp8_nt.
// group_of_row [M] int32 on the device: the expert of each row, -1 for padding rows.
// B [G * N, K]: the G experts' weights stacked (expert g in rows g*N .. g*N + N-1);
// b_scales [G * ceil(N/128), ceil(K/128)]: each expert's 128x128 block scales, stacked the same
// way, row-major or column-major over all G experts' rows (one stride 1, the other at least
// that dimension's extent). D [M, N] bf16: row r = A row r x B_g^T with g = group_of_row[r];
// padding rows are written as zeros.
// Rules as for gemm_fp8_nt, plus: groups >= 1; b.rows == groups * N; M % kGroupedSegmentRows
// == 0. The host never reads group_of_row (it may change between calls, e.g. in a replayed
// CUDA graph). Device-side bad data writes nothing outside D: an index outside [-1, groups)
// makes its row a padding row (zeros); a 128-row block whose rows belong to different experts
// (a misaligned segment) is computed with the expert of its first row.
FP8GEMM_API void gemm_fp8_nt_grouped_contiguous(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                                const ScaleMatrix& b_scales, const Bf16Matrix& d,
                                                const int32_t* group_of_row, int64_t groups,
                                                Stream stream = nullptr);

// m-grouped masked (decode, CUDA graphs). A [G * max_m, K]: expert g's rows at g*max_m ..;
// a_scales per token over all G * max_m rows. masked_m [G] int32 on the device: expert g uses
// its first masked_m[g] rows (clamped to [0, max_m]). B, b_scales as for the contiguous form.
// D [G * max_m, N] bf16: rows g*max_m + r for r < masked_m[g]; the other rows are not written.
// expected_m: the typical masked_m, used only to choose the kernel (the host never reads
// masked_m, so the call can be captured in a CUDA graph and replayed with new values).
// Rules as for gemm_fp8_nt, plus: groups >= 1; a.rows % groups == 0 (max_m = a.rows / groups);
// b.rows == groups * N; expected_m in [1, max_m].
FP8GEMM_API void gemm_fp8_nt_grouped_masked(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                            const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* masked_m,
                                            int64_t groups, int64_t expected_m, Stream stream = nullptr);

// k-grouped weight gradient (mixture-of-experts backward): for every group g,
//   D[g] [M, N] fp32 = C[g] + A_g [M, K_g] x B_g [N, K_g]^T, all groups in one launch.
// A [M, K] and B [N, K] (e4m3, K-major) hold the groups' columns side by side, each group
// starting on a 128-column block boundary: group g starts at column sum over h < g of
// k_grouped_columns(K_h), spans K_g columns, and the columns from its end to the next
// boundary must hold zeros in A and B (the kernel reads whole 128-column blocks). This is
// the layout quantize_transposed_per_token writes when called per group with q.data and
// scales.data offset to the group's first block (and the padding zeroed once).
// a_scales [M, ceil(K/128)] M-major and b_scales [N, ceil(K/128)] N-major as for
// gemm_fp8_nt_wgrad (per_token_scales(data, M, K) / (data, N, K)): group g's scales are the
// columns of its blocks, so scale blocks restart at each group and its last may be partial.
// group_k [groups] int32 on the device: K_g (any value >= 0; the host never reads it, so a
// call can be captured in a CUDA graph and replayed with new counts). K_g = 0 gives D[g] =
// C[g] (zeros without C).
// D [groups * M, N] fp32: group g's matrix in rows g*M .. g*M + M-1; c: nullptr (C = 0), &d
// (accumulate in place: tiles of empty groups are not touched), or a separate [groups * M, N]
// matrix. Rules as for gemm_fp8_nt_wgrad, plus groups >= 1 and d.rows == groups * M.
// Device-side bad data writes nothing outside D: a negative K_g counts as 0, and columns a
// group claims past A's K are cut off (groups past the end compute with fewer or no blocks).
FP8GEMM_API void gemm_fp8_nt_wgrad_k_grouped(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                             const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                                             const int32_t* group_k, int64_t groups, Stream stream = nullptr);

// Columns a group of k columns occupies in gemm_fp8_nt_wgrad_k_grouped's A and B; without
// overflow for any k (INT64_MAX where the multiple of 128 is past it).
constexpr int64_t k_grouped_columns(int64_t k) {
  return k <= 0 ? 0 : k <= INT64_MAX - 127 ? (k + 127) / 128 * 128 : INT64_MAX;
}

// The tile configuration of a GEMM kernel. gemm_fp8_nt and the others choose one
// themselves; the overloads below run a given one (for tuners, tests and experiments).
struct KernelConfig {
  int block_m = 128;  // rows per tile: 64 (one math warpgroup), 128 or 256 (two), 192 (three)
  int block_n = 128;  // columns per tile: multiple of 16 (weight gradient: of 8), <= 192 (<= 128 with block_m 192 or 256)
  int stages = 4;     // TMA pipeline depth; must fit in shared memory
  int group_n = 8;    // tile rasterization: stripes of this many N blocks (M blocks: m-grouped contiguous, multicast != 1, one expert's B (N x K) <= 24 MiB)
  int multicast = 0;  // 0 none; 1: CTA pairs share A; 2: CTA pairs share B (clusters of two)
  // Epilogue: 1 = through shared-memory 64x64 slabs and TMA stores overlapping the next
  // tile (needs block_n >= 64 and 8 KB of shared memory per slab: BLOCK_M x BLOCK_N x 2
  // bytes when block_n % 64 == 0; otherwise the last slab of each 64-row wave overlaps
  // the one before); 2 = the same through one 8 KB slab per math warpgroup (more shared
  // memory for stages); 0 = direct stores; -1 = 1 when block_n % 64 == 0 (% 128 with
  // split_k = 2), else 0.
  int tma_store = -1;
  // 2: CTA pairs split K for the same tile and add their partial sums on chip (small M;
  // deterministic; excludes multicast). 1: no split.
  int split_k = 1;
};

// gemm_fp8_nt with exactly `config` (compiled and loaded on first use, then cached like
// any kernel). An illegal config throws Error(InvalidArgument) saying why, before
// anything is launched.
FP8GEMM_API void gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& a_scales,
                             const Fp8Matrix& b, const ScaleMatrix& b_scales,
                             const Bf16Matrix& d, const KernelConfig& config, Stream stream = nullptr);

// gemm_fp8_nt_wgrad with exactly `config`: block_m 64, 128 or 192, block_n a multiple of 8
// from 16 up to 192 (128 with block_m 192), stages that fit in shared memory, any group_n; multicast 0, split_k 1 and
// tma_store 0 (-1 reads as 0): the weight-gradient kernel has none of them. An illegal
// config throws Error(InvalidArgument) saying why, before anything is launched.
FP8GEMM_API void gemm_fp8_nt_wgrad(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                   const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                                   const KernelConfig& config, Stream stream = nullptr);

// The grouped GEMMs with exactly `config` (same rules and errors as the calls above, the
// config checked before anything is launched; an illegal one throws Error(InvalidArgument)
// saying why). The m-grouped forms take the forward kernel's configs without split_k:
// contiguous block_m 64 or 128 with multicast 0 or 2 (a CTA pair over two M blocks shares B
// where both lie in one expert, else each CTA loads its own), masked block_m 64, 128 or 256
// (a 256-row tile computes the rows past masked_m of its expert, never stores them) with
// multicast 0, or 2 for tiles of up to 128 rows (a CTA pair over two M blocks of one expert
// shares B; a partner block past masked_m stores nothing). The k-grouped weight gradient
// takes gemm_fp8_nt_wgrad's configs. The config does not depend on the row counts on the
// device: one kernel serves every call of that N and K.
FP8GEMM_API void gemm_fp8_nt_grouped_contiguous(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                                const ScaleMatrix& b_scales, const Bf16Matrix& d,
                                                const int32_t* group_of_row, int64_t groups,
                                                const KernelConfig& config, Stream stream = nullptr);
FP8GEMM_API void gemm_fp8_nt_grouped_masked(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                            const ScaleMatrix& b_scales, const Bf16Matrix& d, const int32_t* masked_m,
                                            int64_t groups, int64_t expected_m, const KernelConfig& config,
                                            Stream stream = nullptr);
FP8GEMM_API void gemm_fp8_nt_wgrad_k_grouped(const Fp8Matrix& a, const ScaleMatrix& a_scales, const Fp8Matrix& b,
                                             const ScaleMatrix& b_scales, const Fp32Matrix& d, const Fp32Matrix* c,
                                             const int32_t* group_k, int64_t groups, const KernelConfig& config,
                                             Stream stream = nullptr);

// ---------------------------------------------------------------------------
// Quantization: bf16 -> e4m3 with fp32 scales, in the layouts the GEMMs read
// ---------------------------------------------------------------------------

// The layouts gemm_fp8_nt reads (see per_token_scales() and block_scales()).
constexpr ScaleOutput per_token_scale_output(float* data, int64_t m, int64_t k) {
  return ScaleOutput{data, m, scale_blocks(k), 1, per_token_scale_stride(m)};
}
constexpr ScaleOutput block_scale_output(float* data, int64_t n, int64_t k) {
  return ScaleOutput{data, scale_blocks(n), scale_blocks(k), scale_blocks(k), 1};
}

struct QuantizeOptions {
  // Scales rounded up to powers of two (dequantization is then exact in any precision).
  bool pow2_scales = false;
};

// The rule, per group of values, bit for bit: amax = max(max |x|, 1e-4); scale =
// amax / 448 (or the smallest power of two >= amax / 448); q = e4m3(x * (448 / amax)) (or
// x * (1 / scale)), fp32 multiply, round to nearest even, saturating at +-448. Zero groups
// get the tiny scale 1e-4 / 448 and zero bytes. Each reads x once and writes q and the
// scales once.

// Per-token: one scale per row and 128 columns (activations; A of gemm_fp8_nt). x, q
// [rows, cols]; scales [rows, ceil(cols/128)] (per_token_scale_output for the GEMM).
FP8GEMM_API void quantize_per_token(const Bf16Input& x, const Fp8Output& q, const ScaleOutput& scales,
                                    const QuantizeOptions& options = {}, Stream stream = nullptr);

// Per-block: one scale per 128x128 block (weights; B of gemm_fp8_nt). x, q [rows, cols];
// scales [ceil(rows/128), ceil(cols/128)] (block_scale_output for the GEMM).
FP8GEMM_API void quantize_per_block(const Bf16Input& x, const Fp8Output& q, const ScaleOutput& scales,
                                    const QuantizeOptions& options = {}, Stream stream = nullptr);

// Transpose + per-token: x [T, H] -> q [H, T] with one scale per hidden index and 128
// tokens (what the weight gradient needs of activations and output gradients); scales
// [H, ceil(T/128)] (per_token_scale_output(data, H, T) for the GEMM).
FP8GEMM_API void quantize_transposed_per_token(const Bf16Input& x, const Fp8Output& q, const ScaleOutput& scales,
                                               const QuantizeOptions& options = {}, Stream stream = nullptr);

// Exact transpose of a 128x128-scaled e4m3 matrix, e.g. dgrad's B: W [N, K] -> W^T [K, N].
// The bytes and the grid of block scales move together (w_scales [ceil(N/128),
// ceil(K/128)] -> wt_scales [ceil(K/128), ceil(N/128)]); nothing is requantized.
FP8GEMM_API void transpose_fp8_block_scaled(const Fp8Matrix& w, const ScaleMatrix& w_scales, const Fp8Output& wt,
                                            const ScaleOutput& wt_scales, Stream stream = nullptr);

// Copies scales of the same shape from one layout into another, e.g. per-token scales
// stored K-major ([M][ceil(K/128)], row_stride = ceil(K/128), col_stride = 1) into the
// M-major layout gemm_fp8_nt reads (per_token_scale_output).
FP8GEMM_API void convert_scales(const ScaleMatrix& in, const ScaleOutput& out, Stream stream = nullptr);

// ---------------------------------------------------------------------------
// Kernel cache
// ---------------------------------------------------------------------------

// Which GEMM a shape is for. Forward: gemm_fp8_nt. WeightGradient: gemm_fp8_nt_wgrad. GroupedContiguous: m is the total
// (padded) number of rows and groups the experts (tune() splits the rows over them; the kernel choice does not use
// them). GroupedMasked: m is groups x expected_m and groups the experts (what the kernel choice uses).
// KGroupedWeightGradient: gemm_fp8_nt_wgrad_k_grouped with A [m, k] (all groups' columns) and `groups` groups.
enum class GemmKind { Forward = 0, WeightGradient = 1, GroupedContiguous = 2, GroupedMasked = 3,
                      KGroupedWeightGradient = 4 };

struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  GemmKind kind = GemmKind::Forward;
  int64_t groups = 1;  // the grouped kinds' groups (1 = unknown: m planned, and tuned, as one matrix)
};

struct PrewarmProgress {
  size_t done = 0;         // shapes planned (their kernel compiled or found)
  size_t total = 0;        // distinct non-empty shapes
  std::string kernel;      // the kernel of the shape just finished
  bool compiled = false;   // true: compiled now; false: found in the cache
  // Where the shape's kernel came from: "compiled", "on disk", or "shared" (the kernel of an
  // earlier shape of this prewarm, or already loaded in this process).
  std::string source;
  double elapsed_s = 0.0;
};

struct PrewarmOptions {
  // Compile threads; 0 = one per hardware thread.
  int jobs = 0;
  // Multiprocessor count to plan for (1 to 1024); 0 = the current device's, else 132
  // (H100/H200 SXM). Negative jobs or num_sms outside [0, 1024] throw InvalidArgument.
  int num_sms = 0;
  // Called after each kernel, from the worker thread that finished it (serialized). An
  // exception it throws stops the prewarm (no further shape is started; kernels already
  // built stay cached) and is rethrown by prewarm() once its threads have stopped.
  std::function<void(const PrewarmProgress&)> on_progress;
  // Also build the kernels gemm_fp8_nt runs with GemmOptions::b_constant (dense shapes
  // with M <= 128 whose kernel has such a variant).
  bool b_constant = false;
};

struct PrewarmReport {
  size_t shapes = 0;
  size_t kernels = 0;         // distinct kernels the shapes need
  size_t compiled = 0;        // compiled by this call (candidates rejected for spilling not counted)
  size_t from_disk = 0;       // found valid in the disk cache
  size_t from_memory = 0;     // already loaded in this process
  int num_sms = 0;            // multiprocessor count planned for
  double seconds = 0.0;
  std::vector<std::string> kernel_names;
  // Candidates the planner compiled and then passed over (they spilled to local memory, or
  // ptxas serialized their wgmma): their entries are on disk too, but no shape runs them.
  size_t compiled_and_skipped = 0;
  // Kernels of `kernel_names` that are not in the disk cache after the call (0 when every
  // kernel was persisted), and why: the cache is memory-only (FP8GEMM_DISK_CACHE=0, no
  // directory, a directory that cannot be created or written) or a write failed (disk full).
  // A prewarm exists to fill the disk: the CLI exits non-zero when this is not 0.
  size_t not_saved = 0;
  std::string not_saved_reason;
};

// Compiles (or finds) every kernel the shapes need, in parallel, into the disk cache: what
// each shape's GEMM runs on device 0 (its tuning database's winner, else the heuristic's
// choice), plus the winners other databases of the cache directory hold for the shape
// (measured with this library and NVRTC on any GPU). Needs NVRTC but no GPU. Throws
// Error(InvalidArgument) for an invalid shape and Error(CompileFailed) if a kernel does not
// compile.
FP8GEMM_API PrewarmReport prewarm(const std::vector<GemmShape>& shapes,
                                  const PrewarmOptions& options = {});

// ---------------------------------------------------------------------------
// Introspection
// ---------------------------------------------------------------------------

// The kernel gemm_fp8_nt (or the GEMM of the shape's kind) uses for a shape, planned for device 0 (a 132-SM H100/H200
// without a GPU; its tuning database's winner when it has one), as a readable name: "gemm1d2d_n7168_k2048_bm128_bn112_s5_g8" =
// N, K, block_m, block_n, pipeline stages, rasterization group. It plans the shape as a call
// would, so it compiles the kernel (and any candidate the planner passes over) when the cache
// lacks it, and writes the entries: the name is that of a kernel known to be usable. Shapes
// outside the limits, or with M or N = 0, are Error(InvalidArgument).
FP8GEMM_API std::string kernel_name(const GemmShape& shape);
// The same for a Forward shape called with `options` (GemmOptions::b_constant may pick the "_cb" variant).
FP8GEMM_API std::string kernel_name(const GemmShape& shape, const GemmOptions& options);

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  size_t memory_bytes = 0;
  bool supported = false;  // sm_90
};

// One setting in effect: its environment variable, the value used, and where it came from
// ("FP8GEMM_TUNING=on" as read, "default", or the API call that changed it since).
struct Setting {
  std::string name;
  std::string value;
  std::string source;
};

struct RuntimeInfo {
  std::string library_version;
  std::string nvrtc_version;
  std::string cache_dir;
  std::string cache_state;     // "read-write" or "memory-only (<reason>)"
  std::string driver;          // "CUDA 13.0" or why no driver was found
  int driver_version = 0;      // as cuDriverGetVersion, 0 without a driver
  std::vector<DeviceInfo> devices;
  std::vector<Setting> settings;  // every environment variable the library reads (README, "Settings")
};

FP8GEMM_API RuntimeInfo runtime_info();

// Counters since process start (all threads, all devices).
// What the library has done on one device (all its CUDA contexts together).
struct DeviceStats {
  int device = 0;               // ordinal
  uint64_t modules_loaded = 0;  // kernels loaded onto this device
  uint64_t plans = 0;           // problems (and explicit configs) planned for it: first calls of a shape
};

struct Stats {
  uint64_t gemm_calls = 0;
  uint64_t kernels_compiled = 0;    // NVRTC compiles
  uint64_t problems_tuned = 0;      // problems timed on the GPU to pick a config (tune(), tuning mode On)
  uint64_t tuned_plans = 0;         // problems whose config came from the tuning database
  uint64_t disk_hits = 0;           // kernels read from the disk cache
  uint64_t disk_rejected = 0;       // corrupt / truncated / foreign entries replaced
  uint64_t modules_loaded = 0;      // kernels loaded onto a device (all devices)
  // One entry per device the library has run on, by ordinal: each device loads its own
  // modules and keeps its own plans.
  std::vector<DeviceStats> devices;
};

FP8GEMM_API Stats stats();

// The files of the disk cache's kernels/ directory, each kernel entry read and verified
// (format tag, header and its checksum, key, size and SHA-256 of the cubin, and whether this
// library's key for the slug is the entry's). Reading creates nothing.
struct CachedKernel {
  std::string file;     // path
  std::string kernel;   // slug (entries), else the file name
  uint64_t bytes = 0;   // file size
  // "entry": a kernel entry; `status` is "ok", or why no lookup of this library uses it.
  // "temporary": an unfinished write (`<entry>.tmp.<pid>...`); `status` gives its age.
  // "stray": a file that is no cache file.
  std::string category = "entry";
  std::string status;
  // Removed by clear_stale_cache(): unusable entries, temporaries older than 60 seconds (a
  // live writer's file is younger) and stray files.
  bool stale = false;
};
FP8GEMM_API std::vector<CachedKernel> cached_kernels();

// The tuning databases of the cache directory (tuning/*.json). `status` is "ok", or why the
// library ignores the file ("not readable: ..."); a readable file also says what it was
// measured with. problems_stale counts the entries this build does not use (all of them in a
// file it ignores; in a file in use: those timed against another first choice of the planner,
// or with a kernel that compiles differently now, as after a kernel or planner change under the
// same version string, or written before entries recorded either). The heuristic plans those
// problems until they are tuned again.
struct CachedTuningDatabase {
  std::string file;
  std::string status;
  bool readable = false;
  size_t problems = 0;
  size_t problems_stale = 0;
  std::string gpu, nvrtc, library;
  int sms = 0, driver = 0;
};
FP8GEMM_API std::vector<CachedTuningDatabase> cached_tuning_databases();

// Deletes cache files: compiled kernels and/or tuning databases (and temporary files left
// over beside them: older than 60 s; a writer's fresh temporary and the databases' lock
// files stay, so that processes writing meanwhile keep their disk cache). Files that could
// not be removed are listed in `failed` ("<path>: <reason>"); nothing else is reported as
// removed.
struct CacheClearReport {
  size_t kernels = 0;
  size_t tuning_files = 0;
  size_t other = 0;                 // temporaries and stray files
  std::vector<std::string> failed;  // "<path>: <strerror>"
};
FP8GEMM_API CacheClearReport clear_cache(bool kernels, bool tuning);
// Deletes only what cached_kernels() marks stale (and leftover temporaries of the tuning
// databases): kernels = unusable entries removed, other = temporaries and stray files.
FP8GEMM_API CacheClearReport clear_stale_cache();

// ---------------------------------------------------------------------------
// Tuning
// ---------------------------------------------------------------------------

// How gemm_fp8_nt and the other GEMMs pick a kernel config for a problem (kind, N, K, M and, masked and
// k-grouped, the groups; see tune() for how a tuned entry serves an M bucket).
//   Off:    the analytical heuristic only.
//   Cached: the measured winner from the tuning database when it has the problem, else
//           the heuristic. Never times anything on a call. The default.
//   On:     like Cached, but a problem the database lacks is tuned on its first call
//           (candidates compiled and timed on the GPU, with the library's own buffers; the
//           call takes seconds, allocates device memory and synchronizes the context) and
//           the winner is stored. Not on a stream being captured into a CUDA graph, nor in
//           cache-only mode: such first calls plan as in Cached.
// The initial mode comes from FP8GEMM_TUNING=off|cached|on.
enum class TuningMode { Off = 0, Cached = 1, On = 2 };
FP8GEMM_API void set_tuning_mode(TuningMode mode);
FP8GEMM_API TuningMode tuning_mode();

// Cache-only: a kernel missing from the disk cache makes gemm_fp8_nt (and kernel_name)
// throw Error(NotCached) naming the prewarm command, instead of compiling it. For
// production processes that must never compile. prewarm() and tune() still compile.
// The initial value comes from FP8GEMM_CACHE_ONLY=1.
FP8GEMM_API void set_cache_only(bool cache_only);
FP8GEMM_API bool cache_only();

struct TuneProgress {
  size_t done = 0;        // problems tuned so far
  size_t total = 0;       // distinct problems in the request
  GemmShape shape;        // the one just finished
  std::string kernel;     // its winner
  double elapsed_s = 0;   // since tune() started
};

struct TuneOptions {
  int candidates = 8;  // configs timed per problem; the heuristic's first choice is always one of them
  int jobs = 0;        // compile threads; 0 = one per hardware thread
  std::function<void(const TuneProgress&)> on_progress;  // called after each problem
};

struct TuneResult {
  GemmShape shape;
  std::string heuristic_kernel;  // what the heuristic picks ...
  double heuristic_us = 0;       // ... and its time in this measurement
  std::string tuned_kernel;      // the measured winner (stored in the tuning database) ...
  double tuned_us = 0;           // ... and its time: never above heuristic_us
  int candidates_timed = 0;
};

// Tunes each distinct shape (M > 0, N > 0; any GemmKind, timed as the GEMM of its kind; weight
// gradients, dense and k-grouped, are timed accumulating in place, C = D) on the current context's device (else
// device 0): compiles the candidates in parallel, times each on the GPU (warm-up, CUDA events,
// median of batches of back-to-back calls rotating over input copies so that L2 does not
// flatter small shapes; the library's own buffers, random data) and stores the winner in
// the tuning database of that device kind under the M it was timed at. An entry serves its M
// bucket (M rounded up to a power of two): a call whose bucket holds entries of several M takes
// the one tuned at its own M, else the one at the nearest M by ratio. Grouped shapes are timed and stored as they are planned (see GemmKind):
// contiguous at the bucket of its total rows split evenly over `groups` experts (segments
// padded); masked with every expert at expected_m = m / groups rows (rounded up); k-grouped
// with `groups` groups of m rows each, every group at the bucket of the mean K per group.
// Throws Error(InvalidArgument) for an invalid shape (the rules of prewarm(), plus: masked
// m >= groups, k-grouped groups x m <= 2^31 - 1024) before timing anything. Needs an sm_90
// GPU; throws like gemm_fp8_nt otherwise.
FP8GEMM_API std::vector<TuneResult> tune(const std::vector<GemmShape>& shapes, const TuneOptions& options = {});

}  // namespace fp8gemm
