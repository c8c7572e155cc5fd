// A linear layer y = x W^T in FP8 through fp8gemm, from bf16 tensors, all three GEMMs:
//   forward  y  = x W^T : x quantized per token, W per 128x128 block, gemm_fp8_nt
//   dgrad    dx = dy W  : dy quantized per token, W^T by the exact FP8 transpose of the
//                         quantized W (bytes and scale grid), gemm_fp8_nt
//   wgrad    dW = dy^T x: dy^T and x^T quantized per token along the tokens (fused
//                         transpose), gemm_fp8_nt_wgrad into fp32
// Each result is compared with an fp32 reference computed from the same bf16 inputs
// (calc_diff = 1 - 2 sum(a b) / sum(a^2 + b^2), must be < 1e-3), and each step is timed.
//
// Usage: fp8gemm_linear_example [tokens in_features out_features]
// Exit codes: 0 all checks pass; 1 a check failed or an error; 77 no sm_90 GPU (skipped).

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/fp8_host.hpp"
#include "fp8gemm/fp8gemm.hpp"

namespace {

constexpr int kExitSkipped = 77;

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct Device {
  void* p = nullptr;
  explicit Device(size_t bytes) { cuda_check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc"); }
  ~Device() { cudaFree(p); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  template <class T = void>
  T* get() const { return static_cast<T*>(p); }
};

std::vector<uint16_t> random_bf16(int64_t rows, int64_t cols, uint64_t seed, double scale) {
  fp8gemm::host::SplitMix64 rng(seed);
  std::vector<uint16_t> v(size_t(rows * cols));
  for (uint16_t& x : v) x = fp8gemm::host::float_to_bf16(float((rng.uniform() * 2 - 1) * scale));
  return v;
}

// c [m, n] = a [m, k] x b [n, k]^T, or a [m, k] x b [k, n] when b_kn; fp32, on host threads.
std::vector<float> reference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int64_t m, int64_t n,
                             int64_t k, bool b_kn) {
  std::vector<float> af(a.size()), bf(b.size()), c(size_t(m * n));
  for (size_t i = 0; i < a.size(); ++i) af[i] = fp8gemm::host::bf16_to_float(a[i]);
  for (size_t i = 0; i < b.size(); ++i) bf[i] = fp8gemm::host::bf16_to_float(b[i]);
  std::vector<float> bt(size_t(n * k));  // [n, k]
  for (int64_t j = 0; j < n; ++j)
    for (int64_t t = 0; t < k; ++t) bt[size_t(j * k + t)] = b_kn ? bf[size_t(t * n + j)] : bf[size_t(j * k + t)];
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < threads; ++w)
    pool.emplace_back([&, w] {
      for (int64_t i = w; i < m; i += threads)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t t = 0; t < k; ++t) s += double(af[size_t(i * k + t)]) * bt[size_t(j * k + t)];
          c[size_t(i * n + j)] = float(s);
        }
    });
  for (std::thread& t : pool) t.join();
  return c;
}

std::vector<uint16_t> transpose(const std::vector<uint16_t>& v, int64_t rows, int64_t cols) {
  std::vector<uint16_t> t(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[size_t(c * rows + r)] = v[size_t(r * cols + c)];
  return t;
}

double calc_diff(const std::vector<float>& got, const std::vector<float>& want) {
  double xy = 0, xx_yy = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double x = got[i], y = want[i];
    xy += x * y;
    xx_yy += x * x + y * y;
  }
  return xx_yy > 0 ? 1 - 2 * xy / xx_yy : 0;
}

double calc_diff(const std::vector<uint16_t>& got_bf16, const std::vector<float>& want) {
  double xy = 0, xx_yy = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double x = fp8gemm::host::bf16_to_float(got_bf16[i]), y = want[i];
    xy += x * y;
    xx_yy += x * x + y * y;
  }
  return xx_yy > 0 ? 1 - 2 * xy / xx_yy : 0;
}

class Timer {
 public:
  Timer() {
    cudaEventCreate(&a_);
    cudaEventCreate(&b_);
    cudaEventRecord(a_);
  }
  ~Timer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  double us() {
    cudaEventRecord(b_);
    cuda_check(cudaEventSynchronize(b_), "step");
    float ms = 0;
    cudaEventElapsedTime(&ms, a_, b_);
    return ms * 1e3;
  }

 private:
  cudaEvent_t a_, b_;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace fp8gemm;
  const int64_t t = argc > 3 ? std::atoll(argv[1]) : 512;   // tokens
  const int64_t h = argc > 3 ? std::atoll(argv[2]) : 1024;  // in features
  const int64_t o = argc > 3 ? std::atoll(argv[3]) : 768;   // out features
  bool gpu = false;
  for (const DeviceInfo& d : runtime_info().devices) gpu = gpu || d.supported;
  if (!gpu) {
    std::printf("linear: no sm_90 GPU; skipped\n");
    return kExitSkipped;
  }
  try {
    const std::vector<uint16_t> x = random_bf16(t, h, 1, 2.0), w = random_bf16(o, h, 2, 0.05),
                                dy = random_bf16(t, o, 3, 1.0);
    Device dx_in(x.size() * 2), dw_in(w.size() * 2), ddy_in(dy.size() * 2);
    cuda_check(cudaMemcpy(dx_in.get(), x.data(), x.size() * 2, cudaMemcpyHostToDevice), "upload x");
    cuda_check(cudaMemcpy(dw_in.get(), w.data(), w.size() * 2, cudaMemcpyHostToDevice), "upload W");
    cuda_check(cudaMemcpy(ddy_in.get(), dy.data(), dy.size() * 2, cudaMemcpyHostToDevice), "upload dy");

    // FP8 copies and their scales, in the layouts gemm_fp8_nt reads.
    const int64_t ldh = (h + 15) / 16 * 16, ldo = (o + 15) / 16 * 16;
    Device xq(size_t(t * ldh)), wq(size_t(o * ldh)), dyq(size_t(t * ldo)), wtq(size_t(h * ldo));
    Device sx(size_t(scale_blocks(h) * per_token_scale_stride(t)) * 4), sw(size_t(scale_blocks(o) * scale_blocks(h)) * 4),
        sdy(size_t(scale_blocks(o) * per_token_scale_stride(t)) * 4), swt(size_t(scale_blocks(h) * scale_blocks(o)) * 4);
    Device y(size_t(t * o) * 2), dx(size_t(t * h) * 2);
    // wgrad operands: dy^T [o, t] and x^T [h, t], 1x128 scales along t; dW [o, h] fp32.
    const int64_t ldt = (t + 15) / 16 * 16;
    Device dytq(size_t(o * ldt)), xtq(size_t(h * ldt)), dw(size_t(o * h) * 4);
    Device sdyt(size_t(scale_blocks(t) * per_token_scale_stride(o)) * 4),
        sxt(size_t(scale_blocks(t) * per_token_scale_stride(h)) * 4);

    double quantize_forward_us = 0, forward_us = 0, quantize_dgrad_us = 0, dgrad_us = 0, quantize_wgrad_us = 0,
           wgrad_us = 0;
    // Twice: the first pass compiles (or loads) the kernels, the second is timed.
    for (int pass = 0; pass < 2; ++pass) {
      // Forward.
      Timer q1;
      quantize_per_token({dx_in.get(), t, h, h}, {xq.get(), t, h, ldh}, per_token_scale_output(sx.get<float>(), t, h));
      quantize_per_block({dw_in.get(), o, h, h}, {wq.get(), o, h, ldh}, block_scale_output(sw.get<float>(), o, h));
      quantize_forward_us = q1.us();
      Timer g1;
      gemm_fp8_nt({xq.get(), t, h, ldh}, per_token_scales(sx.get<float>(), t, h), {wq.get(), o, h, ldh},
                  block_scales(sw.get<float>(), o, h), {y.get(), t, o, o});
      forward_us = g1.us();

      // dgrad: dx [t, h] = dy [t, o] x W [o, h] = dy x (W^T [h, o])^T.
      Timer q2;
      quantize_per_token({ddy_in.get(), t, o, o}, {dyq.get(), t, o, ldo},
                         per_token_scale_output(sdy.get<float>(), t, o));
      transpose_fp8_block_scaled({wq.get(), o, h, ldh}, block_scales(sw.get<float>(), o, h), {wtq.get(), h, o, ldo},
                                 block_scale_output(swt.get<float>(), h, o));
      quantize_dgrad_us = q2.us();
      Timer g2;
      gemm_fp8_nt({dyq.get(), t, o, ldo}, per_token_scales(sdy.get<float>(), t, o), {wtq.get(), h, o, ldo},
                  block_scales(swt.get<float>(), h, o), {dx.get(), t, h, h});
      dgrad_us = g2.us();

      // wgrad: dW [o, h] = dy^T [o, t] x (x^T [h, t])^T, K = t.
      Timer q3;
      quantize_transposed_per_token({ddy_in.get(), t, o, o}, {dytq.get(), o, t, ldt},
                                    per_token_scale_output(sdyt.get<float>(), o, t));
      quantize_transposed_per_token({dx_in.get(), t, h, h}, {xtq.get(), h, t, ldt},
                                    per_token_scale_output(sxt.get<float>(), h, t));
      quantize_wgrad_us = q3.us();
      Timer g3;
      gemm_fp8_nt_wgrad({dytq.get(), o, t, ldt}, per_token_scales(sdyt.get<float>(), o, t), {xtq.get(), h, t, ldt},
                        per_token_scales(sxt.get<float>(), h, t), {dw.get<float>(), o, h, h});
      wgrad_us = g3.us();
    }

    std::vector<uint16_t> y_host(size_t(t * o)), dx_host(size_t(t * h));
    cuda_check(cudaMemcpy(y_host.data(), y.get(), y_host.size() * 2, cudaMemcpyDeviceToHost), "download y");
    cuda_check(cudaMemcpy(dx_host.data(), dx.get(), dx_host.size() * 2, cudaMemcpyDeviceToHost), "download dx");
    const double diff_y = calc_diff(y_host, reference(x, w, t, o, h, false));
    const double diff_dx = calc_diff(dx_host, reference(dy, w, t, h, o, true));
    std::vector<float> dw_host(size_t(o * h));
    cuda_check(cudaMemcpy(dw_host.data(), dw.get(), dw_host.size() * 4, cudaMemcpyDeviceToHost), "download dW");
    const double diff_dw = calc_diff(dw_host, reference(transpose(dy, t, o), transpose(x, t, h), o, h, t, false));
    std::printf("linear T=%lld in=%lld out=%lld (times of the second pass; kernels loaded)\n", (long long)t,
                (long long)h, (long long)o);
    std::printf("  forward  y  = x W^T : calc_diff %.2e  quantize %.0f us, gemm %.0f us\n", diff_y,
                quantize_forward_us, forward_us);
    std::printf("  dgrad    dx = dy W  : calc_diff %.2e  quantize + transpose %.0f us, gemm %.0f us\n", diff_dx,
                quantize_dgrad_us, dgrad_us);
    std::printf("  wgrad    dW = dy^T x: calc_diff %.2e  quantize (transposed) %.0f us, gemm %.0f us\n", diff_dw,
                quantize_wgrad_us, wgrad_us);
    const bool ok = diff_y < 1e-3 && diff_dx < 1e-3 && diff_dw < 1e-3;
    std::printf("linear: %s\n", ok ? "PASS" : "FAIL (calc_diff must be < 1e-3)");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "linear: %s\n", e.what());
    return 1;
  }
}
