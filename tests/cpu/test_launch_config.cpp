#include <gtest/gtest.h>

#include <string>

#include "codegen/embedded_kernels.hpp"
#include "problem/problem.hpp"
#include "runtime/launch_config.hpp"

using namespace fp8gemm::detail;

// GEMM launches: programmatic stream serialization (the kernels wait with
// griddepcontrol.wait before any global access), plus the cluster dimension for 2-CTA
// kernels; the occupancy query of a cluster kernel goes without it.
TEST(LaunchConfig, GemmLaunchesAllowProgrammaticSerialization) {
  const KernelSpec plain{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{128, 128, 5, 8}};
  const KernelLayout layout = kernel_layout(plain);
  CUlaunchAttribute attrs[2];
  CUlaunchConfig c = gemm_launch_config(layout, 132, nullptr, attrs);
  EXPECT_EQ(c.gridDimX, 132u);
  EXPECT_EQ(c.blockDimX, static_cast<unsigned>(layout.threads));
  EXPECT_EQ(c.sharedMemBytes, static_cast<unsigned>(layout.smem_bytes));
  ASSERT_EQ(c.numAttrs, 1u);
  EXPECT_EQ(c.attrs[0].id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
  EXPECT_EQ(c.attrs[0].value.programmaticStreamSerializationAllowed, 1);

  KernelSpec split = plain;
  split.config.split_k = 2;
  ASSERT_EQ(spec_illegal_reason(split), "");
  const KernelLayout pair = kernel_layout(split);
  ASSERT_EQ(pair.cluster_size, 2);
  c = gemm_launch_config(pair, 66, nullptr, attrs);
  ASSERT_EQ(c.numAttrs, 2u);
  EXPECT_EQ(c.attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  EXPECT_EQ(c.attrs[0].value.clusterDim.x, 2u);
  EXPECT_EQ(c.attrs[1].id, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);

  c = gemm_launch_config(pair, 66, nullptr, attrs, /*programmatic=*/false);
  ASSERT_EQ(c.numAttrs, 1u);
  EXPECT_EQ(c.attrs[0].id, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  c = gemm_launch_config(layout, 132, nullptr, attrs, /*programmatic=*/false);
  EXPECT_EQ(c.numAttrs, 0u);
  EXPECT_EQ(c.attrs, nullptr);
}

// Every GEMM kernel waits for the previous kernel before its first global access: in both
// kernel templates (the embedded text NVRTC compiles) the wait comes before any load, store
// or TMA operation of the kernel body (B excepted in the constant-B variant, which the caller
// opts into), and the producer allows the next kernel.
TEST(LaunchConfig, KernelsWaitBeforeTheirFirstGlobalAccess) {
  int checked = 0;
  for (int i = 0; i < embedded_header_count(); ++i) {
    const std::string name = embedded_headers()[i].name;
    if (name != "fp8gemm/gemm_1d2d.cuh" && name != "fp8gemm/gemm_1d1d.cuh") continue;
    const std::string text = embedded_headers()[i].source;
    const size_t body = text.find("__global__");
    ASSERT_NE(body, std::string::npos) << name;
    const size_t wait = text.find("grid_dependency_wait();", body);
    ASSERT_NE(wait, std::string::npos) << name;
    // The one exception: the dense kernel's constant-B variant loads B early through the
    // load_b_stage helper (defined before the wait, called there only under kEarlyB).
    std::string before = text.substr(body, wait - body);
    const size_t helper = before.find("auto load_b_stage = ");
    if (helper != std::string::npos) {
      const size_t helper_end = before.find("};", helper);
      ASSERT_NE(helper_end, std::string::npos) << name;
      before.erase(helper, helper_end - helper);
      const size_t call = before.find("load_b_stage(");
      const size_t guard = before.find("if constexpr (kEarlyB > 0)");
      ASSERT_NE(guard, std::string::npos) << name << ": B loaded early without the kEarlyB guard";
      EXPECT_GT(call, guard) << name;
      EXPECT_EQ(before.find("load_b_stage(", call + 1), std::string::npos) << name << ": more than one early call";
    }
    for (const char* access : {"tma_load_2d(", "tma_load_3d(", "tma_load_2d_multicast(", "tma_store_2d(",
                               "tma_store_3d(", "ldg_", "st_global", "tile_rows<"})
      EXPECT_EQ(before.find(access), std::string::npos) << name << ": " << access << " before the wait";
    EXPECT_NE(text.find("allow_dependent_launch();", wait), std::string::npos) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}
