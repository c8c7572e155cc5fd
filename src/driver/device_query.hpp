#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>

#include "driver/driver_api.hpp"
#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::detail {

// What the library reads of a device, in one place: the call runtimes, runtime_info(),
// the tuning database's device key and planning without a call context all ask here. The
// public part (ordinal, name, compute capability, SMs, memory, whether the kernels run on it:
// sm_90) is what runtime_info() reports.
struct DeviceProps : DeviceInfo {
  int max_smem_optin = 0;  // dynamic shared memory a kernel may opt in to, bytes
};

// Whether the library's kernels (sm_90a code) run on a device of this compute capability:
// Hopper only. The one rule: DeviceInfo::supported and validate_device both ask it.
constexpr bool supported_compute_capability(int cc_major, int cc_minor) { return cc_major == 9 && cc_minor == 0; }

// The properties of `device`. Throws Error(CudaError) naming the query that failed.
DeviceProps query_device(const DriverApi& cu, CUdevice device);

// Device `ordinal`'s properties, or nullopt without a usable driver, without such a device,
// or when a query fails (planning without a call context falls back to its defaults).
std::optional<DeviceProps> try_query_device(int ordinal);

// The number of devices the driver reports, 0 without a usable driver.
int device_count();

}  // namespace fp8gemm::detail
