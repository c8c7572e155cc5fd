#include "problem/validate.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "driver/device_query.hpp"
#include "problem/problem.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {

static_assert(kMaxDimension == fp8gemm::kMaxDimension && kMaxK1D2D == fp8gemm::kMaxK1D2D &&
                  kMaxTiles == fp8gemm::kMaxTiles,
              "the public limits are the ones validated");

namespace {

// Rejects an argument of `fn` (the public function whose arguments are checked).
template <typename... Args>
[[noreturn]] void bad(const char* fn, fmt::format_string<Args...> format, Args&&... args) {
  fail(ErrorCode::InvalidArgument, "{}: {}", fn, fmt::format(format, std::forward<Args>(args)...));
}

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// The one rule for every pointer of every operation `fn` takes: given, and aligned as the
// kernels' loads (TMA, vector loads) need.
void check_pointer(const char* fn, const void* p, const char* name, unsigned alignment) {
  if (p == nullptr) fail(ErrorCode::InvalidArgument, "{}: {} is null; pass a device pointer", fn, name);
  if (addr(p) % alignment != 0)
    fail(ErrorCode::InvalidArgument,
         "{}: {} = {} is not {}-byte aligned; the kernels need aligned base addresses (allocate with "
         "cudaMalloc or offset by a multiple of {} bytes)",
         fn, name, p, alignment, alignment);
}

// Leading dimensions and scale strides beyond kMaxDimension elements would overflow the
// kernels' 32-bit coordinates and TMA's stride field.
void check_stride(const char* fn, int64_t value, const char* name) {
  if (value > kMaxDimension)
    bad(fn, "{} = {} is more than {}, the largest leading dimension or stride accepted (elements); copy the operand "
        "into a tighter buffer",
        name, value, kMaxDimension);
}

// A matrix's leading dimension (`name`): at least its `cols` (called `cols_name` in the
// message) and a multiple of `multiple` elements (16-byte row starts); `why` ends the message.
void check_ld(const char* fn, const char* name, int64_t ld, int64_t cols, const char* cols_name, int multiple,
              const char* why = "") {
  if (ld < cols || ld % multiple != 0)
    bad(fn, "{} = {} must be >= {} = {} and a multiple of {}{}", name, ld, cols_name, cols, multiple, why);
}

template <class Scales>
void check_scale_strides(const char* fn, const Scales& s, const char* name) {
  if (s.row_stride > kMaxDimension || s.col_stride > kMaxDimension)
    bad(fn, "{} has strides (row {}, col {}); each must be at most {}", name, s.row_stride, s.col_stride, kMaxDimension);
}

// One stride 1 and the other spanning its dimension: no element shares an address.
template <class Scales>
bool one_to_one(const Scales& s) {
  const bool row_major = s.col_stride == 1 && (s.rows == 1 || s.row_stride >= s.cols);
  const bool col_major = s.row_stride == 1 && (s.cols == 1 || s.col_stride >= s.rows);
  return row_major || col_major;
}

// [begin, end) in bytes, computed in 128 bits: sizes and strides within the limits still
// multiply past 2^64, where 64-bit arithmetic would wrap (and overlaps go unseen).
struct Range {
  unsigned __int128 begin, end;
  const char* name;
};

constexpr unsigned __int128 kAddressSpaceEnd = static_cast<unsigned __int128>(1) << 64;

// The bytes [p, p + extent): an operand reaching past the 64-bit address space is no buffer
// anybody has, whatever its sizes say (`what` describes them for the message).
Range checked_range(const char* fn, const void* p, __int128 extent, const char* name, const std::string& what) {
  const unsigned __int128 b = addr(p);
  const unsigned __int128 e = b + static_cast<unsigned __int128>(std::max<__int128>(extent, 0));
  if (e > kAddressSpaceEnd)
    bad(fn, "{} ({}) at {} ends past the end of the 64-bit address space; no buffer is that large: check its sizes "
        "and strides",
        name, what, p);
  return {b, e, name};
}

Range matrix_range(const char* fn, const void* p, int64_t rows, int64_t cols, int64_t ld, int64_t elem,
                   const char* name) {
  const __int128 extent = rows <= 0 || cols <= 0 ? 0 : ((__int128{rows} - 1) * ld + cols) * elem;
  return checked_range(fn, p, extent, name, fmt::format("[{}, {}], leading dimension {}", rows, cols, ld));
}

template <class Scales>
Range scale_range(const char* fn, const Scales& s, const char* name) {
  const __int128 extent = s.rows <= 0 || s.cols <= 0
                              ? 0
                              : ((__int128{s.rows} - 1) * s.row_stride + (__int128{s.cols} - 1) * s.col_stride + 1) * 4;
  return checked_range(fn, s.data, extent, name,
                       fmt::format("[{}, {}], strides ({}, {})", s.rows, s.cols, s.row_stride, s.col_stride));
}

}  // namespace

namespace {

// gemm_fp8_nt's rules, for the caller `fn` (the grouped forms check each expert's view of B
// through it).
bool validate_1d2d(const char* fn, const Fp8Matrix& a, const ScaleMatrix& sa, const Fp8Matrix& b, const ScaleMatrix& sb,
                   const Bf16Matrix& d) {
  const int64_t m = a.rows, k = a.cols, n = b.rows;
  // Sizes.
  if (a.rows < 0 || a.cols < 0) bad(fn, "A has negative size [{}, {}]; sizes must be >= 0", a.rows, a.cols);
  if (b.rows < 0 || b.cols < 0) bad(fn, "B has negative size [{}, {}]; sizes must be >= 0", b.rows, b.cols);
  if (d.rows < 0 || d.cols < 0) bad(fn, "D has negative size [{}, {}]; sizes must be >= 0", d.rows, d.cols);
  if (b.cols != k) bad(fn, "B is [N, K] = [{}, {}] but A is [M, K] = [{}, {}]: the K of A and B must match", b.rows, b.cols, m, k);
  if (d.rows != m || d.cols != n)
    bad(fn, "D is [{}, {}] but must be [M, N] = [{}, {}] (M from A's rows, N from B's rows)", d.rows, d.cols, m, n);
  if (k % 16 != 0) bad(fn, "K = {} is not a multiple of 16; FP8 rows must start 16-byte aligned (pad K with zeros)", k);
  if (n % 8 != 0) bad(fn, "N = {} is not a multiple of 8; bf16 rows of D must start 16-byte aligned (pad N)", n);
  if (m > kMaxDimension || n > kMaxDimension || k > kMaxDimension)
    bad(fn, "M, N and K must be at most {} (got {}, {}, {}); split the problem", kMaxDimension, m, n, k);
  if (k > kMaxK1D2D)
    bad(fn, "K = {} is more than {}, the most these kernels take (a tile's B scales for all of K sit in shared memory); "
        "split K and add the partial products",
        k, kMaxK1D2D);
  if (m == 0 || n == 0) return false;
  if (k == 0) bad(fn, "K = 0: an empty reduction has no scales to apply; fill D with zeros instead");
  if (!tile_count_fits(m, n, 1))
    bad(fn, "M x N = {} x {} has more than {} output tiles of 64 x 16; split the call along M", m, n, kMaxTiles);

  // Pointers and leading dimensions.
  check_pointer(fn, a.data, "a.data", 16);
  check_pointer(fn, b.data, "b.data", 16);
  check_pointer(fn, d.data, "d.data", 16);
  check_pointer(fn, sa.data, "a_scales.data", 16);
  check_pointer(fn, sb.data, "b_scales.data", 4);
  check_ld(fn, "a.ld", a.ld, k, "K", 16, " (bytes between row starts)");
  check_ld(fn, "b.ld", b.ld, k, "K", 16, " (bytes between row starts)");
  check_ld(fn, "d.ld", d.ld, n, "N", 8, " (16-byte row starts)");
  check_stride(fn, a.ld, "a.ld");
  check_stride(fn, b.ld, "b.ld");
  check_stride(fn, d.ld, "d.ld");
  check_scale_strides(fn, sa, "a_scales");
  check_scale_strides(fn, sb, "b_scales");

  // Scale layouts.
  const int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
  if (sa.rows != m || sa.cols != kb)
    bad(fn, "a_scales is [{}, {}] but must be [M, ceil(K/128)] = [{}, {}] (one fp32 scale per row "
        "and 128-wide K block); build it with fp8gemm::per_token_scales()",
        sa.rows, sa.cols, m, kb);
  if (sa.row_stride != 1 || sa.col_stride < m || sa.col_stride % 4 != 0)
    bad(fn, "a_scales has strides (row {}, col {}) but must be M-major: row_stride == 1 and a "
        "col_stride that is a multiple of 4 and >= M = {} (per_token_scale_stride(M) = {}). "
        "Per-token scales stored K-major ([M][ceil(K/128)]) must be transposed first",
        sa.row_stride, sa.col_stride, m, per_token_scale_stride(m));
  if (sb.rows != nb || sb.cols != kb)
    bad(fn, "b_scales is [{}, {}] but must be [ceil(N/128), ceil(K/128)] = [{}, {}] (one fp32 scale "
        "per 128x128 block of B); build it with fp8gemm::block_scales()",
        sb.rows, sb.cols, nb, kb);
  if (!one_to_one(sb))
    bad(fn, "b_scales has strides (row {}, col {}): one stride must be 1 and the other at least "
        "the extent of that dimension (row-major or column-major, no overlap)",
        sb.row_stride, sb.col_stride);

  // D must not alias an input: the kernel reads inputs while it writes D.
  const Range rd = matrix_range(fn, d.data, m, n, d.ld, 2, "D");
  for (const Range& r : {matrix_range(fn, a.data, m, k, a.ld, 1, "A"), matrix_range(fn, b.data, n, k, b.ld, 1, "B"),
                         scale_range(fn, sa, "a_scales"), scale_range(fn, sb, "b_scales")}) {
    if (rd.begin < r.end && r.begin < rd.end)
      bad(fn, "D overlaps {} in memory; the output must be a separate buffer", r.name);
  }
  return true;
}

}  // namespace

bool validate_gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& sa, const Fp8Matrix& b,
                          const ScaleMatrix& sb, const Bf16Matrix& d) {
  return validate_1d2d("gemm_fp8_nt", a, sa, b, sb, d);
}

bool validate_gemm_grouped(bool masked, const Fp8Matrix& a, const ScaleMatrix& sa, const Fp8Matrix& b,
                           const ScaleMatrix& sb, const Bf16Matrix& d, const int32_t* group_info, int64_t groups,
                           int64_t expected_m) {
  const char* fn = masked ? "gemm_fp8_nt_grouped_masked" : "gemm_fp8_nt_grouped_contiguous";
  const int64_t n = d.cols, k = a.cols;
  if (groups < 1) bad(fn, "groups = {}: there must be at least one expert", groups);
  if (groups > kMaxDimension) bad(fn, "groups = {} is more than {}", groups, kMaxDimension);
  // The sizes the stacked shapes below multiply by groups, bounded first.
  if (a.rows < 0 || a.cols < 0) bad(fn, "A has negative size [{}, {}]; sizes must be >= 0", a.rows, a.cols);
  if (d.rows < 0 || d.cols < 0) bad(fn, "D has negative size [{}, {}]; sizes must be >= 0", d.rows, d.cols);
  if (n > kMaxDimension || k > kMaxDimension)
    bad(fn, "N = {} (D's columns) and K = {} (A's columns) must be at most {}; split the problem", n, k, kMaxDimension);
  if (n < 0 || b.rows != groups * n)
    bad(fn, "B is [{}, {}] but must be the {} experts' [N, K] matrices stacked: [groups * N, K] = [{}, {}] (N from D's "
        "columns)",
        b.rows, b.cols, groups, groups * n, k);
  const int64_t nb = (n + 127) / 128, kb = (k + 127) / 128;
  if (sb.rows != groups * nb || sb.cols != kb)
    bad(fn, "b_scales is [{}, {}] but must be the experts' block scales stacked: [groups * ceil(N/128), ceil(K/128)] = "
        "[{}, {}]",
        sb.rows, sb.cols, groups * nb, kb);
  // The layout rule on all experts' scales (expert 0's view below cannot see a row stride
  // that makes the experts' blocks overlap, or one that points backwards).
  if (!one_to_one(sb))
    bad(fn, "b_scales has strides (row {}, col {}) over the {} experts' stacked [{}, {}] scales: one stride must be 1 "
        "and the other at least the extent of that dimension (row-major or column-major, no overlap)",
        sb.row_stride, sb.col_stride, groups, sb.rows, sb.cols);
  if (masked) {
    if (a.rows % groups != 0)
      bad(fn, "A has {} rows, not a multiple of groups = {}: the masked layout is [groups * max_m, K]", a.rows, groups);
    const int64_t max_m = a.rows / groups;
    if (max_m > 0 && (expected_m < 1 || expected_m > max_m))
      bad(fn, "expected_m = {} must be in [1, max_m = {}] (the typical masked_m, for the kernel choice)", expected_m, max_m);
  } else if (a.rows % kGroupedSegmentRows != 0) {
    bad(fn, "A has {} rows, not a multiple of {}: every expert's segment starts at a multiple of {} rows (pad each "
        "segment, marking padding rows -1 in group_of_row)",
        a.rows, kGroupedSegmentRows, kGroupedSegmentRows);
  }
  if (a.rows > 0 && n > 0 && !tile_count_fits(a.rows, n, masked ? groups : 1))
    bad(fn, "{} rows x N = {} over {} experts have more than {} output tiles of 64 x 16; split the call", a.rows, n, groups,
        kMaxTiles);
  // The dense rules on expert 0's view of B and its scales.
  const Fp8Matrix b0{b.data, n, b.cols, b.ld};
  const ScaleMatrix sb0{sb.data, nb, sb.cols, sb.row_stride, sb.col_stride};
  if (!validate_1d2d(fn, a, sa, b0, sb0, d)) return false;
  check_pointer(fn, group_info, masked ? "masked_m" : "group_of_row", 4);
  // D against all of B and its scales (the dense check saw expert 0 only), and the group data.
  const Range rd = matrix_range(fn, d.data, d.rows, n, d.ld, 2, "D");
  const Range info = checked_range(fn, group_info, __int128{masked ? groups : a.rows} * 4,
                                   masked ? "masked_m" : "group_of_row",
                                   fmt::format("{} int32 entries", masked ? groups : a.rows));
  for (const Range& r : {matrix_range(fn, b.data, b.rows, k, b.ld, 1, "B"), scale_range(fn, sb, "b_scales"), info})
    if (rd.begin < r.end && r.begin < rd.end)
      bad(fn, "D overlaps {} in memory; the output must be a separate buffer", r.name);
  return true;
}

bool validate_quantize(const char* op, const Bf16Input& x, const Fp8Output& q, const ScaleOutput& sf,
                       int64_t scale_rows, int64_t scale_cols, bool transposed) {
  auto reject = [op](const std::string& what) { fail(ErrorCode::InvalidArgument, "{}: {}", op, what); };
  if (x.rows < 0 || x.cols < 0) reject(fmt::format("x has negative size [{}, {}]; sizes must be >= 0", x.rows, x.cols));
  const int64_t q_rows = transposed ? x.cols : x.rows, q_cols = transposed ? x.rows : x.cols;
  if (q.rows != q_rows || q.cols != q_cols)
    reject(fmt::format("q is [{}, {}] but must be [{}, {}]: {} x's shape [{}, {}]", q.rows, q.cols, q_rows, q_cols,
                       transposed ? "the transpose of" : "the same as", x.rows, x.cols));
  if (x.rows > kMaxDimension || x.cols > kMaxDimension)
    reject(fmt::format("rows and cols must be at most {} (got {}, {}); split the tensor", kMaxDimension, x.rows, x.cols));
  if (x.rows == 0 || x.cols == 0) return false;
  check_pointer(op, x.data, "x.data", 16);
  check_pointer(op, q.data, "q.data", 16);
  check_pointer(op, sf.data, "scales.data", 4);
  check_ld(op, "x.ld", x.ld, x.cols, "cols", 8, " (16-byte row starts)");
  check_ld(op, "q.ld", q.ld, q.cols, "its cols", 16, " (what gemm_fp8_nt reads)");
  if (x.ld > kMaxDimension || q.ld > kMaxDimension || sf.row_stride > kMaxDimension || sf.col_stride > kMaxDimension)
    reject(fmt::format("x.ld = {}, q.ld = {} and the scale strides ({}, {}) must each be at most {}", x.ld, q.ld,
                       sf.row_stride, sf.col_stride, kMaxDimension));
  if (sf.rows != scale_rows || sf.cols != scale_cols)
    reject(fmt::format("scales is [{}, {}] but must be [{}, {}] for x of [{}, {}]", sf.rows, sf.cols, scale_rows,
                       scale_cols, x.rows, x.cols));
  if (!one_to_one(sf))
    reject(fmt::format("scales has strides (row {}, col {}): one stride must be 1 and the other at least the "
                       "extent of that dimension (row-major or column-major, no element written twice)",
                       sf.row_stride, sf.col_stride));
  // The outputs must not overlap the input or each other.
  const Range rx = matrix_range(op, x.data, x.rows, x.cols, x.ld, 2, "x");
  const Range rq = matrix_range(op, q.data, q.rows, q.cols, q.ld, 1, "q");
  const Range rs = scale_range(op, sf, "scales");
  for (const auto& [a, b] : {std::pair{rq, rx}, std::pair{rs, rx}, std::pair{rs, rq}})
    if (a.begin < b.end && b.begin < a.end)
      reject(fmt::format("{} overlaps {} in memory; outputs must be separate buffers", a.name, b.name));
  return true;
}

bool validate_fp8_transpose(const Fp8Matrix& w, const ScaleMatrix& ws, const Fp8Output& wt, const ScaleOutput& wts) {
  auto reject = [](const std::string& what) {
    fail(ErrorCode::InvalidArgument, "transpose_fp8_block_scaled: {}", what);
  };
  if (w.rows < 0 || w.cols < 0) reject(fmt::format("w has negative size [{}, {}]", w.rows, w.cols));
  if (wt.rows != w.cols || wt.cols != w.rows)
    reject(fmt::format("wt is [{}, {}] but must be the transpose of w's [{}, {}]", wt.rows, wt.cols, w.rows, w.cols));
  if (w.rows > kMaxDimension || w.cols > kMaxDimension)
    reject(fmt::format("sizes must be at most {} (got {}, {})", kMaxDimension, w.rows, w.cols));
  if (w.rows == 0 || w.cols == 0) return false;
  const char* fn = "transpose_fp8_block_scaled";
  check_pointer(fn, w.data, "w.data", 16);
  check_pointer(fn, wt.data, "wt.data", 16);
  check_pointer(fn, ws.data, "w_scales.data", 4);
  check_pointer(fn, wts.data, "wt_scales.data", 4);
  check_ld(fn, "w.ld", w.ld, w.cols, "cols", 16);
  check_ld(fn, "wt.ld", wt.ld, wt.cols, "its cols", 16);
  if (w.ld > kMaxDimension || wt.ld > kMaxDimension || ws.row_stride > kMaxDimension ||
      ws.col_stride > kMaxDimension || wts.row_stride > kMaxDimension || wts.col_stride > kMaxDimension)
    reject(fmt::format("leading dimensions and scale strides must each be at most {}", kMaxDimension));
  const int64_t nb = (w.rows + 127) / 128, kb = (w.cols + 127) / 128;
  if (ws.rows != nb || ws.cols != kb)
    reject(fmt::format("w_scales is [{}, {}] but must be [ceil(N/128), ceil(K/128)] = [{}, {}]", ws.rows, ws.cols, nb,
                       kb));
  if (wts.rows != kb || wts.cols != nb)
    reject(fmt::format("wt_scales is [{}, {}] but must be [ceil(K/128), ceil(N/128)] = [{}, {}]", wts.rows, wts.cols,
                       kb, nb));
  if (!one_to_one(ws) || !one_to_one(wts))
    reject("scale strides: one stride must be 1 and the other at least the extent of that dimension");
  const Range rw = matrix_range(fn, w.data, w.rows, w.cols, w.ld, 1, "w"), rwt = matrix_range(fn, wt.data, wt.rows, wt.cols, wt.ld, 1, "wt");
  const Range rs = scale_range(fn, ws, "w_scales"), rts = scale_range(fn, wts, "wt_scales");
  for (const auto& [a, b] : {std::pair{rwt, rw}, std::pair{rwt, rs}, std::pair{rts, rw}, std::pair{rts, rs},
                             std::pair{rts, rwt}})
    if (a.begin < b.end && b.begin < a.end)
      reject(fmt::format("{} overlaps {} in memory; outputs must be separate buffers", a.name, b.name));
  return true;
}

bool validate_scale_copy(const ScaleMatrix& in, const ScaleOutput& out) {
  auto reject = [](const std::string& what) { fail(ErrorCode::InvalidArgument, "convert_scales: {}", what); };
  if (in.rows < 0 || in.cols < 0) reject(fmt::format("in has negative size [{}, {}]", in.rows, in.cols));
  if (out.rows != in.rows || out.cols != in.cols)
    reject(fmt::format("out is [{}, {}] but in is [{}, {}]; the shapes must match", out.rows, out.cols, in.rows,
                       in.cols));
  if (in.rows > kMaxDimension || in.cols > kMaxDimension || in.rows * in.cols > kMaxDimension)
    reject(fmt::format("at most {} scales per call (got {} x {})", kMaxDimension, in.rows, in.cols));
  if (in.rows == 0 || in.cols == 0) return false;
  check_pointer("convert_scales", in.data, "in.data", 4);
  check_pointer("convert_scales", out.data, "out.data", 4);
  if (in.row_stride > kMaxDimension || in.col_stride > kMaxDimension || out.row_stride > kMaxDimension ||
      out.col_stride > kMaxDimension)
    reject(fmt::format("scale strides must each be at most {}", kMaxDimension));
  if (in.row_stride < 0 || in.col_stride < 0 || (in.rows > 1 && in.row_stride == 0) ||
      (in.cols > 1 && in.col_stride == 0))
    reject(fmt::format("in has strides (row {}, col {}); they must be positive", in.row_stride, in.col_stride));
  if (!one_to_one(out))
    reject(fmt::format("out has strides (row {}, col {}): one stride must be 1 and the other at least the extent "
                       "of that dimension (no element written twice)",
                       out.row_stride, out.col_stride));
  const Range ri = scale_range("convert_scales", in, "in"), ro = scale_range("convert_scales", out, "out");
  if (ri.begin < ro.end && ro.begin < ri.end) reject("out overlaps in; convert into a separate buffer");
  return true;
}

namespace {

// gemm_fp8_nt_wgrad's rules (groups == 0) or gemm_fp8_nt_wgrad_k_grouped's (D and C
// [groups * M, N]), for the caller `fn`.
bool validate_1d1d(const char* fn, const Fp8Matrix& a, const ScaleMatrix& sa, const Fp8Matrix& b, const ScaleMatrix& sb,
                   const Fp32Matrix& d, const Fp32Matrix* c, int64_t groups) {
  const int64_t m = a.rows, k = a.cols, n = b.rows;
  if (a.rows < 0 || a.cols < 0) bad(fn, "A has negative size [{}, {}]; sizes must be >= 0", a.rows, a.cols);
  if (b.rows < 0 || b.cols < 0) bad(fn, "B has negative size [{}, {}]; sizes must be >= 0", b.rows, b.cols);
  if (b.cols != k) bad(fn, "B is [N, K] = [{}, {}] but A is [M, K] = [{}, {}]: the K of A and B must match", b.rows, b.cols, m, k);
  if (m > kMaxDimension || n > kMaxDimension || k > kMaxDimension)
    bad(fn, "M, N and K must be at most {} (got {}, {}, {}); split the problem", kMaxDimension, m, n, k);
  if (groups > 0) {
    if (d.rows != groups * m || d.cols != n)
      bad(fn, "D is [{}, {}] but must be [groups * M, N] = [{}, {}] (the {} groups' [M, N] matrices stacked; M from A's "
          "rows, N from B's rows)",
          d.rows, d.cols, groups * m, n, groups);
    if (c != nullptr && (c->rows != groups * m || c->cols != n))
      bad(fn, "C is [{}, {}] but must be [groups * M, N] = [{}, {}]", c->rows, c->cols, groups * m, n);
  } else {
    if (d.rows != m || d.cols != n)
      bad(fn, "D is [{}, {}] but must be [M, N] = [{}, {}] (M from A's rows, N from B's rows)", d.rows, d.cols, m, n);
    if (c != nullptr && (c->rows != m || c->cols != n))
      bad(fn, "C is [{}, {}] but must be [M, N] = [{}, {}]", c->rows, c->cols, m, n);
  }
  const int64_t d_rows = d.rows;
  if (k % 16 != 0) bad(fn, "K = {} is not a multiple of 16; FP8 rows must start 16-byte aligned (pad K with zeros)", k);
  if (n % 4 != 0) bad(fn, "N = {} is not a multiple of 4; fp32 rows of D must start 16-byte aligned (pad N)", n);
  if (groups * m > kMaxDimension) bad(fn, "groups x M = {} x {} must be at most {}; split the call", groups, m, kMaxDimension);
  if (m == 0 || n == 0) return false;
  if (k == 0) bad(fn, "K = 0: an empty reduction; D = C needs no GEMM (copy C into D)");
  if (!tile_count_fits(std::max<int64_t>(groups, 1) * m, n, std::max<int64_t>(groups, 1)))
    bad(fn, "{} x N = {} x {} has more than {} output tiles of 64 x 16; split the call", groups > 0 ? "groups x M" : "M",
        std::max<int64_t>(groups, 1) * m, n, kMaxTiles);
  check_pointer(fn, a.data, "a.data", 16);
  check_pointer(fn, b.data, "b.data", 16);
  check_pointer(fn, d.data, "d.data", 16);
  check_pointer(fn, sa.data, "a_scales.data", 16);
  check_pointer(fn, sb.data, "b_scales.data", 16);
  if (c != nullptr) check_pointer(fn, c->data, "c->data", 16);
  check_ld(fn, "a.ld", a.ld, k, "K", 16);
  check_ld(fn, "b.ld", b.ld, k, "K", 16);
  check_ld(fn, "d.ld", d.ld, n, "N", 4, " (16-byte row starts)");
  if (c != nullptr) check_ld(fn, "c->ld", c->ld, n, "N", 4, " (16-byte row starts)");
  check_stride(fn, a.ld, "a.ld");
  check_stride(fn, b.ld, "b.ld");
  check_stride(fn, d.ld, "d.ld");
  if (c != nullptr) check_stride(fn, c->ld, "c->ld");
  check_scale_strides(fn, sa, "a_scales");
  check_scale_strides(fn, sb, "b_scales");
  const int64_t kb = (k + 127) / 128;
  for (const auto& [s, rows, name] : {std::tuple{&sa, m, "a_scales"}, std::tuple{&sb, n, "b_scales"}}) {
    if (s->rows != rows || s->cols != kb)
      bad(fn, "{} is [{}, {}] but must be [{}, ceil(K/128)] = [{}, {}] (one fp32 scale per row and 128 K)", name, s->rows,
          s->cols, rows, rows, kb);
    if (s->row_stride != 1 || s->col_stride < rows || s->col_stride % 4 != 0)
      bad(fn, "{} has strides (row {}, col {}) but must be row-index-major: row_stride == 1 and a col_stride that is a "
          "multiple of 4 and >= {} (per_token_scales builds it; convert_scales converts other layouts)",
          name, s->row_stride, s->col_stride, rows);
  }
  const Range rd = matrix_range(fn, d.data, d_rows, n, d.ld, 4, "D");
  for (const Range& r : {matrix_range(fn, a.data, m, k, a.ld, 1, "A"), matrix_range(fn, b.data, n, k, b.ld, 1, "B"),
                         scale_range(fn, sa, "a_scales"), scale_range(fn, sb, "b_scales")})
    if (rd.begin < r.end && r.begin < rd.end) bad(fn, "D overlaps {} in memory; the output must be a separate buffer", r.name);
  if (c != nullptr && !(c->data == d.data && c->ld == d.ld)) {
    const Range rc = matrix_range(fn, c->data, d_rows, n, c->ld, 4, "C");
    if (rd.begin < rc.end && rc.begin < rd.end)
      bad(fn, "C overlaps D without being D: pass c = &d to accumulate in place, or a separate buffer");
  }
  return true;
}

}  // namespace

bool validate_gemm_fp8_nt_wgrad(const Fp8Matrix& a, const ScaleMatrix& sa, const Fp8Matrix& b, const ScaleMatrix& sb,
                                const Fp32Matrix& d, const Fp32Matrix* c) {
  return validate_1d1d("gemm_fp8_nt_wgrad", a, sa, b, sb, d, c, 0);
}

bool validate_gemm_k_grouped(const Fp8Matrix& a, const ScaleMatrix& sa, const Fp8Matrix& b, const ScaleMatrix& sb,
                             const Fp32Matrix& d, const Fp32Matrix* c, const int32_t* group_k, int64_t groups) {
  const char* fn = "gemm_fp8_nt_wgrad_k_grouped";
  if (groups < 1) bad(fn, "groups = {}: there must be at least one group", groups);
  if (groups > kMaxDimension) bad(fn, "groups = {} is more than {}", groups, kMaxDimension);
  if (!validate_1d1d(fn, a, sa, b, sb, d, c, groups)) return false;
  check_pointer(fn, group_k, "group_k", 4);
  const Range rd = matrix_range(fn, d.data, d.rows, d.cols, d.ld, 4, "D");
  const Range info = checked_range(fn, group_k, __int128{groups} * 4, "group_k", fmt::format("{} int32 entries", groups));
  if (rd.begin < info.end && info.begin < rd.end) bad(fn, "D overlaps group_k in memory; the output must be a separate buffer");
  return true;
}

void validate_device(int cc_major, int cc_minor, const std::string& name, int ordinal) {
  if (!supported_compute_capability(cc_major, cc_minor))
    fail(ErrorCode::UnsupportedDevice,
         "device {} ({}) has compute capability {}.{}; fp8gemm kernels need sm_90 (H100, H800, "
         "H200). Select a Hopper device with cudaSetDevice or pass a stream created on one",
         ordinal, name, cc_major, cc_minor);
}

}  // namespace fp8gemm::detail
