#include "runtime/launch_config.hpp"

namespace fp8gemm::detail {

CUlaunchConfig gemm_launch_config(const KernelLayout& layout, unsigned grid, CUstream stream,
                                  CUlaunchAttribute (&attrs)[2], bool programmatic) {
  CUlaunchConfig config{};
  config.gridDimX = grid;
  config.gridDimY = 1;
  config.gridDimZ = 1;
  config.blockDimX = static_cast<unsigned>(layout.threads);
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(layout.smem_bytes);
  config.hStream = stream;
  config.attrs = attrs;
  config.numAttrs = 0;
  if (layout.cluster_size > 1) {
    CUlaunchAttribute& a = attrs[config.numAttrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = static_cast<unsigned>(layout.cluster_size);
    a.value.clusterDim.y = 1;
    a.value.clusterDim.z = 1;
  }
  if (programmatic) {
    CUlaunchAttribute& a = attrs[config.numAttrs++];
    a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    a.value.programmaticStreamSerializationAllowed = 1;
  }
  if (config.numAttrs == 0) config.attrs = nullptr;
  return config;
}

}  // namespace fp8gemm::detail
