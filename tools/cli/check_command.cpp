#include "cli/check_command.hpp"

#include <cuda_runtime.h>

#include <numeric>

#include <fmt/format.h>

#include "cli/device_buffer.hpp"
#include "common/fp8_host.hpp"
#include "common/reference.hpp"
#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::cli {
namespace {

constexpr int kExitCheckFailed = 3;
constexpr int kExitNoGpu = 4;

}  // namespace

int run_check(const CheckOptions& o) {
  const RuntimeInfo info = runtime_info();
  int device = -1;
  for (const DeviceInfo& d : info.devices)
    if (d.supported) {
      device = d.ordinal;
      break;
    }
  if (device < 0) {
    const std::string why = info.driver_version == 0 ? info.driver : "no sm_90 device among " + std::to_string(info.devices.size());
    fmt::print("check: no sm_90 GPU ({}); {}\n", why, o.skip_without_gpu ? "skipped" : "nothing checked");
    return o.skip_without_gpu ? 0 : kExitNoGpu;
  }
  if (cudaSetDevice(device) != cudaSuccess) throw std::runtime_error("cudaSetDevice failed");

  const host::Fp8Operand a = host::random_operand(o.m, o.k, o.k, true, o.seed);
  const host::Fp8Operand b = host::random_operand(o.n, o.k, o.k, false, o.seed + 1);
  DeviceBuffer da(a.data.size()), db(b.data.size()), dsa(a.scales.size() * 4), dsb(b.scales.size() * 4),
      dd(size_t(o.m * o.n) * 2);
  upload(da.get(), a.data.data(), a.data.size());
  upload(db.get(), b.data.data(), b.data.size());
  upload(dsa.get(), a.scales.data(), a.scales.size() * 4);
  upload(dsb.get(), b.scales.data(), b.scales.size() * 4);
  cudaMemset(dd.get(), 0xff, size_t(o.m * o.n) * 2);

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  const Fp8Matrix ma{da.get(), o.m, o.k, o.k}, mb{db.get(), o.n, o.k, o.k};
  const Bf16Matrix md{dd.get(), o.m, o.n, o.n};
  if (o.config)
    gemm_fp8_nt(ma, per_token_scales(dsa.get<float>(), o.m, o.k), mb, block_scales(dsb.get<float>(), o.n, o.k), md,
                *o.config);
  else
    gemm_fp8_nt(ma, per_token_scales(dsa.get<float>(), o.m, o.k), mb, block_scales(dsb.get<float>(), o.n, o.k), md,
                GemmOptions{o.b_constant});
  cudaEventRecord(stop);
  if (cudaDeviceSynchronize() != cudaSuccess)
    throw std::runtime_error(std::string("kernel failed: ") + cudaGetErrorString(cudaGetLastError()));
  float first_ms = 0;
  cudaEventElapsedTime(&first_ms, start, stop);
  const Stats after_first = stats();
  fmt::print("check: first call {:.2f} ms (compiles {}, kernels read from disk {}, problems tuned {}, config from "
             "the tuning database {})\n",
             first_ms, after_first.kernels_compiled, after_first.disk_hits, after_first.problems_tuned,
             after_first.tuned_plans);
  if (o.expect_warm && (after_first.kernels_compiled > 0 || after_first.problems_tuned > 0)) {
    fmt::print(stderr, "check: --expect-warm, but the first call compiled or tuned (cache or database not warm)\n");
    return 1;
  }

  std::vector<uint16_t> d(size_t(o.m * o.n));
  // (A failed copy is a CUDA error, exit 1; not zeros judged as wrong results.)
  if (const cudaError_t e = cudaMemcpy(d.data(), dd.get(), d.size() * 2, cudaMemcpyDeviceToHost); e != cudaSuccess)
    throw std::runtime_error(std::string("copying D to the host failed: ") + cudaGetErrorString(e));
  std::vector<int64_t> rows(static_cast<size_t>(o.m));
  std::iota(rows.begin(), rows.end(), 0);
  const std::vector<double> ref = host::reference_rows(a, b, rows);
  const host::Comparison c = host::compare_bf16_rows(d.data(), o.n, o.n, rows, ref);
  const bool ok = c.nan_or_unwritten == 0 && c.rel_error < 1e-2;
  const DeviceInfo& dev = info.devices[size_t(device)];
  fmt::print("check: gemm_fp8_nt M={} N={} K={} ({}) on device {} ({}): {} -> {}\n", o.m, o.n, o.k,
             o.config ? "given config" : kernel_name(GemmShape{o.m, o.n, o.k}, GemmOptions{o.b_constant}), device, dev.name, c.describe(),
             ok ? "PASS" : "FAIL");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ok ? 0 : kExitCheckFailed;
}

}  // namespace fp8gemm::cli
