#include "driver/device_query.hpp"

namespace fp8gemm::detail {

namespace {

// Fills `props` from the driver; on failure returns the error and names the query in `failed`.
CUresult read_device(const DriverApi& cu, CUdevice device, DeviceProps& props, const char*& failed) {
  props.ordinal = static_cast<int>(device);
  char name[256] = {0};
  CUresult r = cu.cuDeviceGetName(name, sizeof(name) - 1, device);
  if (r != CUDA_SUCCESS) {
    failed = "cuDeviceGetName";
    return r;
  }
  props.name = name;
  const struct {
    CUdevice_attribute attribute;
    int* value;
    const char* call;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &props.cc_major, "cuDeviceGetAttribute(cc major)"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &props.cc_minor, "cuDeviceGetAttribute(cc minor)"},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &props.sm_count, "cuDeviceGetAttribute(SM count)"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &props.max_smem_optin,
       "cuDeviceGetAttribute(smem opt-in)"},
  };
  for (const auto& a : attributes) {
    r = cu.cuDeviceGetAttribute(a.value, a.attribute, device);
    if (r != CUDA_SUCCESS) {
      failed = a.call;
      return r;
    }
  }
  props.supported = supported_compute_capability(props.cc_major, props.cc_minor);
  r = cu.cuDeviceTotalMem(&props.memory_bytes, device);
  if (r != CUDA_SUCCESS) failed = "cuDeviceTotalMem";
  return r;
}

}  // namespace

DeviceProps query_device(const DriverApi& cu, CUdevice device) {
  DeviceProps props;
  const char* failed = "";
  check_cu(read_device(cu, device, props, failed), failed);
  return props;
}

std::optional<DeviceProps> try_query_device(int ordinal) {
  const DriverApi* cu = try_driver(nullptr);
  CUdevice device = 0;
  if (cu == nullptr || ordinal < 0 || ordinal >= device_count() || cu->cuDeviceGet(&device, ordinal) != CUDA_SUCCESS)
    return std::nullopt;
  DeviceProps props;
  const char* failed = "";
  if (read_device(*cu, device, props, failed) != CUDA_SUCCESS) return std::nullopt;
  props.ordinal = ordinal;
  return props;
}

int device_count() {
  const DriverApi* cu = try_driver(nullptr);
  int count = 0;
  if (cu == nullptr || cu->cuDeviceGetCount(&count) != CUDA_SUCCESS) return 0;
  return count;
}

}  // namespace fp8gemm::detail
