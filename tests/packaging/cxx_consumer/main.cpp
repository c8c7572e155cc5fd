// A downstream C++ program: one dense GEMM through the installed C++ API. Without an NVIDIA
// driver the call must fail with ErrorCode::NoDriver (the documented answer), having checked
// its arguments first; with a driver, this program only reports what it found.
#include <cstdio>

#include <fp8gemm/fp8gemm.hpp>

int main() {
  const fp8gemm::RuntimeInfo info = fp8gemm::runtime_info();
  std::printf("consumer (C++): fp8gemm %s, driver: %s\n", info.library_version.c_str(), info.driver.c_str());
  // Device pointers (distinct 16 MB regions) are never dereferenced on the host; without a
  // driver nothing is launched.
  const int64_t m = 128, n = 256, k = 512;
  auto region = [](int i) { return reinterpret_cast<float*>(static_cast<uintptr_t>(i) << 24); };
  const fp8gemm::Fp8Matrix a{region(1), m, k, k}, b{region(2), n, k, k};
  const fp8gemm::ScaleMatrix sa = fp8gemm::per_token_scales(region(3), m, k);
  const fp8gemm::ScaleMatrix sb = fp8gemm::block_scales(region(4), n, k);
  const fp8gemm::Bf16Matrix d{region(5), m, n, n};
  try {
    fp8gemm::gemm_fp8_nt(a, sa, b, sb, d);
    std::printf("consumer (C++): the call was accepted (a driver is present)\n");
    return info.driver_version != 0 ? 0 : 1;
  } catch (const fp8gemm::Error& e) {
    std::printf("consumer (C++): %s: %s\n", fp8gemm::to_string(e.code()), e.what());
    if (info.driver_version == 0) return e.code() == fp8gemm::ErrorCode::NoDriver ? 0 : 1;
    return 0;  // with a driver (no device here, say) any library error is an honest answer
  }
}
