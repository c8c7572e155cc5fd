#include "gpu/gpu_support.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace fp8gemm::gputest {
namespace {

__device__ double e4m3_value(uint8_t v) {
  const int sign = v >> 7, exp = (v >> 3) & 15, man = v & 7;
  if (exp == 15 && man == 7) return nan("");
  const double r = exp == 0 ? ldexp(man / 8.0, -6) : ldexp(1.0 + man / 8.0, exp - 7);
  return sign ? -r : r;
}

__global__ void dequantize(const uint8_t* data, int64_t rows, int64_t cols, int64_t ld, const float* scales,
                           int64_t scale_stride, bool per_token, double* out) {
  const int64_t kb = (cols + 127) / 128;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * cols; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i % cols;
    const float s = per_token ? scales[(c / 128) * scale_stride + r] : scales[(r / 128) * kb + c / 128];
    out[i] = e4m3_value(data[r * ld + c]) * double(s);
  }
}

// ref = A x B^T, fp64, 64x64 tiles of 16x16 threads with 4x4 outputs each.
__global__ void gemm_fp64(const double* a, const double* b, double* ref, int64_t m, int64_t n, int64_t k) {
  __shared__ double as[16][64 + 1];
  __shared__ double bs[16][64 + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  double acc[4][4] = {};
  for (int64_t k0 = 0; k0 < k; k0 += 16) {
    for (int i = ty * 16 + tx; i < 16 * 64; i += 256) {
      const int kk = i % 16, rr = i / 16;
      as[kk][rr] = (row0 + rr < m && k0 + kk < k) ? a[(row0 + rr) * k + k0 + kk] : 0.0;
      bs[kk][rr] = (col0 + rr < n && k0 + kk < k) ? b[(col0 + rr) * k + k0 + kk] : 0.0;
    }
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += as[kk][ty * 4 + i] * bs[kk][tx * 4 + j];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int64_t r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < m && c < n) ref[r * n + c] = acc[i][j];
    }
}

__device__ double bf16_value(uint16_t v) { return double(__uint_as_float(uint32_t(v) << 16)); }

struct Sums {
  double err2, ref2;
  unsigned long long max_err_bits, non_finite, touched;
  long long worst_index;
};

__global__ void compare_kernel(const uint16_t* buffer, int64_t rows, int64_t cols, int64_t ld, int64_t guard,
                               const double* ref, Sums* sums, int pass) {
  double err2 = 0, ref2 = 0;
  unsigned long long max_bits = 0, non_finite = 0, touched = 0;
  const int64_t total = rows * ld + 2 * guard;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i - guard;
    const bool inside = j >= 0 && j < rows * ld && j % ld < cols;
    if (!inside) {
      touched += buffer[i] != 0xffff;
      continue;
    }
    const double got = bf16_value(buffer[i]);
    const double want = ref[(j / ld) * cols + j % ld];
    if (!isfinite(got)) {
      ++non_finite;
      continue;
    }
    const double e = fabs(got - want);
    err2 += e * e;
    ref2 += want * want;
    const unsigned long long bits = __double_as_longlong(e);
    if (pass == 1 && bits == sums->max_err_bits) atomicCAS(reinterpret_cast<unsigned long long*>(&sums->worst_index), ~0ull, (unsigned long long)j);
    max_bits = max(max_bits, bits);
  }
  if (pass == 0) {
    atomicAdd(&sums->err2, err2);
    atomicAdd(&sums->ref2, ref2);
    atomicMax(&sums->max_err_bits, max_bits);
    atomicAdd(&sums->non_finite, non_finite);
    atomicAdd(&sums->touched, touched);
  }
}

__global__ void poisoned_kernel(const uint16_t* buffer, int64_t total, unsigned long long* changed) {
  unsigned long long c = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    c += buffer[i] != 0xffff;
  if (c) atomicAdd(changed, c);
}

}  // namespace

std::string sm90_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return std::string("no usable CUDA driver/device (") + cudaGetErrorString(e) + ")";
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) == cudaSuccess && p.major == 9 && p.minor == 0) {
      cudaSetDevice(i);
      return "";
    }
  }
  return "no sm_90 device among " + std::to_string(count);
}

DeviceOperand upload(host::Fp8Operand op) {
  DeviceOperand d;
  d.data = DeviceBuffer(op.data.size());
  d.scales = DeviceBuffer(op.scales.size() * sizeof(float));
  check(cudaMemcpy(d.data.get(), op.data.data(), op.data.size(), cudaMemcpyHostToDevice), "upload data");
  check(cudaMemcpy(d.scales.get(), op.scales.data(), op.scales.size() * 4, cudaMemcpyHostToDevice), "upload scales");
  // Pageable copies may return before they land; streams created non-blocking would not wait.
  check(cudaDeviceSynchronize(), "upload");
  d.host = std::move(op);
  d.host.data.clear();  // the device copy is what counts; keep shapes and scales
  d.host.data.shrink_to_fit();
  return d;
}

void reference_gemm(const DeviceOperand& a, const DeviceOperand& b, double* ref, cudaStream_t stream) {
  const host::Fp8Operand& ha = a.host;
  const host::Fp8Operand& hb = b.host;
  DeviceBuffer da(size_t(ha.rows * ha.cols) * 8), db(size_t(hb.rows * hb.cols) * 8);
  dequantize<<<1024, 256, 0, stream>>>(a.data.get<uint8_t>(), ha.rows, ha.cols, ha.ld, a.scales.get<float>(),
                                       ha.scale_stride, ha.per_token, da.get<double>());
  dequantize<<<1024, 256, 0, stream>>>(b.data.get<uint8_t>(), hb.rows, hb.cols, hb.ld, b.scales.get<float>(),
                                       hb.scale_stride, hb.per_token, db.get<double>());
  const dim3 grid(unsigned((hb.rows + 63) / 64), unsigned((ha.rows + 63) / 64));
  gemm_fp64<<<grid, dim3(16, 16), 0, stream>>>(da.get<double>(), db.get<double>(), ref, ha.rows, hb.rows, ha.cols);
  check(cudaGetLastError(), "reference kernels");
  check(cudaStreamSynchronize(stream), "reference");
}

GuardedOutput make_output(int64_t rows, int64_t cols, int64_t ld) {
  GuardedOutput o;
  o.rows = rows;
  o.cols = cols;
  o.ld = ld;
  o.buffer = DeviceBuffer(size_t(o.total()) * 2);
  poison(o);
  check(cudaDeviceSynchronize(), "poison");
  return o;
}

void poison(const GuardedOutput& out, cudaStream_t stream) {
  check(cudaMemsetAsync(out.buffer.get(), 0xff, size_t(out.total()) * 2, stream), "poison");
}

DeviceComparison compare(const GuardedOutput& out, const double* ref) {
  DeviceBuffer sums_buffer(sizeof(Sums));
  Sums init{0, 0, 0, 0, 0, -1};
  check(cudaMemcpy(sums_buffer.get(), &init, sizeof(Sums), cudaMemcpyHostToDevice), "compare init");
  for (int pass = 0; pass < 2; ++pass)
    compare_kernel<<<1024, 256>>>(out.buffer.get<uint16_t>(), out.rows, out.cols, out.ld, out.guard, ref,
                                  sums_buffer.get<Sums>(), pass);
  check(cudaDeviceSynchronize(), "compare");
  Sums s;
  check(cudaMemcpy(&s, sums_buffer.get(), sizeof(Sums), cudaMemcpyDeviceToHost), "compare result");
  DeviceComparison c;
  c.rel_error = s.ref2 > 0 ? std::sqrt(s.err2 / s.ref2) : std::sqrt(s.err2);
  std::memcpy(&c.max_abs_error, &s.max_err_bits, 8);
  c.non_finite = s.non_finite;
  c.touched_outside = s.touched;
  if (s.worst_index >= 0) {
    c.worst_row = s.worst_index / out.ld;
    c.worst_col = s.worst_index % out.ld;
    uint16_t got = 0;
    double want = 0;
    cudaMemcpy(&got, out.d() + s.worst_index, 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(&want, ref + c.worst_row * out.cols + c.worst_col, 8, cudaMemcpyDeviceToHost);
    c.worst_got = host::bf16_to_float(got);
    c.worst_want = want;
  }
  return c;
}

bool all_poisoned(const GuardedOutput& out) {
  DeviceBuffer changed(8);
  check(cudaMemset(changed.get(), 0, 8), "memset");
  poisoned_kernel<<<256, 256>>>(out.buffer.get<uint16_t>(), out.total(), changed.get<unsigned long long>());
  unsigned long long c = 0;
  check(cudaMemcpy(&c, changed.get(), 8, cudaMemcpyDeviceToHost), "poison check");
  return c == 0;
}

std::string DeviceComparison::describe() const {
  char text[256];
  std::snprintf(text, sizeof(text),
                "rel_error=%.3e max_abs=%.3e non_finite=%llu touched_outside=%llu worst (%lld, %lld): got %.6g want %.6g",
                rel_error, max_abs_error, non_finite, touched_outside, (long long)worst_row, (long long)worst_col,
                worst_got, worst_want);
  return text;
}

}  // namespace fp8gemm::gputest
