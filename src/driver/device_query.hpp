#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>

#include "driver/driver_api.hpp"

namespace fp8gemm::detail {

// What the library reads of a device, in one place: the call runtimes, runtime_info(),
// the tuning database's device key and planning without a call context all ask here.
struct DeviceProps {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int max_smem_optin = 0;  // dynamic shared memory a kernel may opt in to, bytes
  size_t memory_bytes = 0;

  // The kernels are sm_90a code: Hopper only.
  bool supported() const { return cc_major == 9 && cc_minor == 0; }
};

// The properties of `device`. Throws Error(CudaError) naming the query that failed.
DeviceProps query_device(const DriverApi& cu, CUdevice device);

// Device `ordinal`'s properties, or nullopt without a usable driver, without such a device,
// or when a query fails (planning without a call context falls back to its defaults).
std::optional<DeviceProps> try_query_device(int ordinal);

// The number of devices the driver reports, 0 without a usable driver.
int device_count();

}  // namespace fp8gemm::detail
