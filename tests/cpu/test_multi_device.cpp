// Several devices in one process, on the CPU: a faked second device (fewer SMs, less shared
// memory) is planned for its own traits while both share one compiled binary per kernel;
// tuning databases are files of their own per device kind; the per-device stats sum each
// device's contexts.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/library.hpp"
#include "cache/disk_cache.hpp"
#include "driver/driver_api.hpp"
#include "fp8gemm/fp8gemm.h"
#include "runtime/kernel_store.hpp"
#include "runtime/planner.hpp"
#include "support/temp_dir.hpp"
#include "tuning/tuning_db.hpp"

using namespace fp8gemm::detail;

namespace {

// The H200 and a faked second device: half its SMs and 99 KB of shared memory per block.
const DeviceTraits kH200{132, 232448};
const DeviceTraits kSmallDevice{66, 101376};

}  // namespace

TEST(MultiDevice, EachDeviceIsPlannedForItsOwnTraits) {
  testing::internal::CaptureStderr();
  DiskCache memory_only("");
  testing::internal::GetCapturedStderr();
  KernelStore store(memory_only);
  int differ = 0;
  for (const GemmProblem& p : {GemmProblem{KernelKind::Gemm1D2D, 4096, 7168, 2048},
                               GemmProblem{KernelKind::Gemm1D2D, 128, 2112, 7168},
                               GemmProblem{KernelKind::Gemm1D1D, 2112, 4096, 7168}}) {
    SCOPED_TRACE(testing::Message() << "m=" << p.m << " n=" << p.n << " k=" << p.k);
    const PlannedKernel big = plan_kernel(p, kH200, store);
    const PlannedKernel small = plan_kernel(p, kSmallDevice, store);
    EXPECT_LE(kernel_layout(big.spec).smem_bytes, kH200.max_smem_bytes) << big.spec.slug();
    EXPECT_LE(kernel_layout(small.spec).smem_bytes, kSmallDevice.max_smem_bytes) << small.spec.slug();
    differ += !(big.spec == small.spec);
    // The same kernel planned again, for either device, is the one binary already built.
    EXPECT_EQ(plan_kernel(p, kH200, store).binary.get(), big.binary.get());
  }
  EXPECT_GT(differ, 0) << "the faked device's shared memory should change some plan";
}

TEST(MultiDevice, TuningDatabasesAreKeyedByTheDeviceKind) {
  const fp8gemm::test::TempDir dir;
  const TuningMetadata h200{"NVIDIA H200", 132, 13000, "13.0", "0.1.0"};
  const TuningMetadata h100{"NVIDIA H100 PCIe", 114, 13000, "13.0", "0.1.0"};
  const TuningMetadata fewer_sms{"NVIDIA H200", 66, 13000, "13.0", "0.1.0"};  // a partition of the same GPU
  EXPECT_NE(tuning_db_path(dir.path(), h200), tuning_db_path(dir.path(), h100));
  EXPECT_NE(tuning_db_path(dir.path(), h200), tuning_db_path(dir.path(), fewer_sms));
  const GemmProblem p{KernelKind::Gemm1D2D, 4096, 7168, 2048};
  TunedEntry e;
  e.spec = KernelSpec{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{256, 128, 3, 8, 0, 0, 1}};
  e.m_measured = 4096;
  e.us = 100.0;
  TuningDb db(h200);
  db.put(p, e);
  ASSERT_EQ(save_tuning_db(tuning_db_path(dir.path(), h200), db), 0);
  std::string warning;
  EXPECT_NE(load_tuning_db(tuning_db_path(dir.path(), h200), h200, &warning).find(p), nullptr);
  for (const TuningMetadata& other : {h100, fewer_sms}) {
    EXPECT_EQ(load_tuning_db(tuning_db_path(dir.path(), other), other, &warning).find(p), nullptr) << other.gpu_name;
    EXPECT_EQ(warning, "");  // no file for that device yet: nothing to warn about
  }
}

TEST(MultiDevice, StatsSumEachDevicesContexts) {
  const std::vector<fp8gemm::DeviceStats> merged =
      stats_by_device({{1, 3, 2}, {0, 5, 1}, {1, 2, 4}});  // device 1 has two contexts
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].device, 0);
  EXPECT_EQ(merged[0].modules_loaded, 5u);
  EXPECT_EQ(merged[0].plans, 1u);
  EXPECT_EQ(merged[1].device, 1);
  EXPECT_EQ(merged[1].modules_loaded, 5u);
  EXPECT_EQ(merged[1].plans, 6u);
  EXPECT_TRUE(stats_by_device({}).empty());
}

TEST(MultiDevice, StatsListNoDeviceBeforeAnyCall) {
  std::string why;
  if (try_driver(&why) != nullptr) GTEST_SKIP() << "a CUDA driver is present: GPU work may have run in this process";
  EXPECT_TRUE(fp8gemm::stats().devices.empty());
  size_t count = 99;
  EXPECT_EQ(fp8gemm_device_stats(nullptr, nullptr, &count), FP8GEMM_SUCCESS);
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(fp8gemm_device_stats(nullptr, nullptr, nullptr), FP8GEMM_SUCCESS);
}
