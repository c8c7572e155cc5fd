#include "problem/validate.hpp"

#include <cstdint>

#include "problem/problem.hpp"
#include "util/error.hpp"

namespace fp8gemm::detail {
namespace {

constexpr const char* kFn = "gemm_fp8_nt";

template <typename... Args>
[[noreturn]] void bad(fmt::format_string<Args...> format, Args&&... args) {
  fail(ErrorCode::InvalidArgument, "{}: {}", kFn, fmt::format(format, std::forward<Args>(args)...));
}

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

void check_pointer(const void* p, const char* name, unsigned alignment) {
  if (p == nullptr) bad("{} is null; pass a device pointer", name);
  if (addr(p) % alignment != 0)
    bad("{} = {} is not {}-byte aligned; TMA needs aligned base addresses (allocate with "
        "cudaMalloc or offset by a multiple of {} bytes)",
        name, p, alignment, alignment);
}

struct Range {
  uintptr_t begin, end;  // [begin, end) in bytes
  const char* name;
};

Range matrix_range(const void* p, int64_t rows, int64_t cols, int64_t ld, int64_t elem,
                   const char* name) {
  const uintptr_t b = addr(p);
  return {b, b + static_cast<uintptr_t>(((rows - 1) * ld + cols) * elem), name};
}

Range scale_range(const ScaleMatrix& s, const char* name) {
  const uintptr_t b = addr(s.data);
  const int64_t last = (s.rows - 1) * s.row_stride + (s.cols - 1) * s.col_stride;
  return {b, b + static_cast<uintptr_t>((last + 1) * 4), name};
}

}  // namespace

bool validate_gemm_fp8_nt(const Fp8Matrix& a, const ScaleMatrix& sa, const Fp8Matrix& b,
                          const ScaleMatrix& sb, const Bf16Matrix& d) {
  const int64_t m = a.rows, k = a.cols, n = b.rows;
  // Sizes.
  if (a.rows < 0 || a.cols < 0) bad("A has negative size [{}, {}]; sizes must be >= 0", a.rows, a.cols);
  if (b.rows < 0 || b.cols < 0) bad("B has negative size [{}, {}]; sizes must be >= 0", b.rows, b.cols);
  if (d.rows < 0 || d.cols < 0) bad("D has negative size [{}, {}]; sizes must be >= 0", d.rows, d.cols);
  if (b.cols != k) bad("B is [N, K] = [{}, {}] but A is [M, K] = [{}, {}]: the K of A and B must match", b.rows, b.cols, m, k);
  if (d.rows != m || d.cols != n)
    bad("D is [{}, {}] but must be [M, N] = [{}, {}] (M from A's rows, N from B's rows)", d.rows, d.cols, m, n);
  if (k % 16 != 0) bad("K = {} is not a multiple of 16; FP8 rows must start 16-byte aligned (pad K with zeros)", k);
  if (n % 8 != 0) bad("N = {} is not a multiple of 8; bf16 rows of D must start 16-byte aligned (pad N)", n);
  if (m > kMaxDimension || n > kMaxDimension || k > kMaxDimension)
    bad("M, N and K must be at most {} (got {}, {}, {}); split the problem", kMaxDimension, m, n, k);
  if (m == 0 || n == 0) return false;
  if (k == 0) bad("K = 0: an empty reduction has no scales to apply; fill D with zeros instead");
  if ((m / 64 + 1) * (n / 16 + 1) > kMaxDimension) bad("M x N = {} x {} has too many output tiles; split the call along M", m, n);

  // Pointers and leading dimensions.
  check_pointer(a.data, "a.data", 16);
  check_pointer(b.data, "b.data", 16);
  check_pointer(d.data, "d.data", 16);
  check_pointer(sa.data, "a_scales.data", 16);
  check_pointer(sb.data, "b_scales.data", 4);
  if (a.ld < k || a.ld % 16 != 0)
    bad("a.ld = {} must be >= K = {} and a multiple of 16 (bytes between row starts)", a.ld, k);
  if (b.ld < k || b.ld % 16 != 0)
    bad("b.ld = {} must be >= K = {} and a multiple of 16 (bytes between row starts)", b.ld, k);
  if (d.ld < n || d.ld % 8 != 0)
    bad("d.ld = {} must be >= N = {} and a multiple of 8 (16-byte row starts)", d.ld, n);

  // Scale layouts.
  const int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
  if (sa.rows != m || sa.cols != kb)
    bad("a_scales is [{}, {}] but must be [M, ceil(K/128)] = [{}, {}] (one fp32 scale per row "
        "and 128-wide K block); build it with fp8gemm::per_token_scales()",
        sa.rows, sa.cols, m, kb);
  if (sa.row_stride != 1 || sa.col_stride < m || sa.col_stride % 4 != 0)
    bad("a_scales has strides (row {}, col {}) but must be M-major: row_stride == 1 and a "
        "col_stride that is a multiple of 4 and >= M = {} (per_token_scale_stride(M) = {}). "
        "Per-token scales stored K-major ([M][ceil(K/128)]) must be transposed first",
        sa.row_stride, sa.col_stride, m, per_token_scale_stride(m));
  if (sb.rows != nb || sb.cols != kb)
    bad("b_scales is [{}, {}] but must be [ceil(N/128), ceil(K/128)] = [{}, {}] (one fp32 scale "
        "per 128x128 block of B); build it with fp8gemm::block_scales()",
        sb.rows, sb.cols, nb, kb);
  const bool row_major = sb.col_stride == 1 && (sb.rows == 1 || sb.row_stride >= sb.cols);
  const bool col_major = sb.row_stride == 1 && (sb.cols == 1 || sb.col_stride >= sb.rows);
  if (!row_major && !col_major)
    bad("b_scales has strides (row {}, col {}): one stride must be 1 and the other at least "
        "the extent of that dimension (row-major or column-major, no overlap)",
        sb.row_stride, sb.col_stride);

  // D must not alias an input: the kernel reads inputs while it writes D.
  const Range rd = matrix_range(d.data, m, n, d.ld, 2, "D");
  for (const Range& r : {matrix_range(a.data, m, k, a.ld, 1, "A"), matrix_range(b.data, n, k, b.ld, 1, "B"),
                         scale_range(sa, "a_scales"), scale_range(sb, "b_scales")}) {
    if (rd.begin < r.end && r.begin < rd.end)
      bad("D overlaps {} in memory; the output must be a separate buffer", r.name);
  }
  return true;
}

void validate_device(int cc_major, int cc_minor, const std::string& name, int ordinal) {
  if (cc_major != 9 || cc_minor != 0)
    fail(ErrorCode::UnsupportedDevice,
         "device {} ({}) has compute capability {}.{}; fp8gemm kernels need sm_90 (H100, H800, "
         "H200). Select a Hopper device with cudaSetDevice or pass a stream created on one",
         ordinal, name, cc_major, cc_minor);
}

}  // namespace fp8gemm::detail
