// Tuning mode and cache-only switches, and how prewarm and planning use tuning
// databases, on a machine without a GPU.

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <vector>

#include "api/library.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "fp8gemm/version.hpp"
#include "tuning/tuning_db.hpp"
#include "util/env.hpp"
#include "util/files.hpp"

using namespace fp8gemm;

TEST(TuningApi, ModeRoundTripAndValidation) {
  const TuningMode before = tuning_mode();
  set_tuning_mode(TuningMode::Off);
  EXPECT_EQ(tuning_mode(), TuningMode::Off);
  set_tuning_mode(TuningMode::On);
  EXPECT_EQ(tuning_mode(), TuningMode::On);
  try {
    set_tuning_mode(static_cast<TuningMode>(7));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  }
  set_tuning_mode(before);
  EXPECT_EQ(detail::parse_tuning_mode("off"), 0);
  EXPECT_EQ(detail::parse_tuning_mode("cached"), 1);
  EXPECT_EQ(detail::parse_tuning_mode("on"), 2);
  EXPECT_EQ(detail::parse_tuning_mode("ON"), -1);
  EXPECT_EQ(detail::parse_tuning_mode("yes"), -1);
}

// Cache-only: a kernel that is not cached is an error naming the prewarm command; once
// compiled (here by turning cache-only off for a moment) the same call works.
TEST(TuningApi, CacheOnlyMissNamesThePrewarmCommand) {
  const GemmShape shape{64, 1048, 1040};  // a shape no other test compiles
  // The test cache directory outlives a run: start without this shape's kernels.
  const std::string kernels = runtime_info().cache_dir + "/kernels";
  for (const std::string& f : detail::list_files(kernels))
    if (f.find("_n1048_k1040_") != std::string::npos) std::remove((kernels + "/" + f).c_str());
  set_cache_only(true);
  try {
    kernel_name(shape);
    set_cache_only(false);
    FAIL() << "expected NotCached (is the kernel already in the test cache directory?)";
  } catch (const Error& e) {
    set_cache_only(false);
    EXPECT_EQ(e.code(), ErrorCode::NotCached) << e.what();
    EXPECT_NE(std::string(e.what()).find("fp8gemm prewarm"), std::string::npos) << e.what();
  }
  const std::string name = kernel_name(shape);  // compiles
  set_cache_only(true);
  EXPECT_EQ(kernel_name(shape), name);  // now found
  set_cache_only(false);
  // prewarm compiles regardless of cache-only.
  set_cache_only(true);
  EXPECT_NO_THROW(prewarm({GemmShape{64, 1064, 1040}}, PrewarmOptions{}));
  set_cache_only(false);
}

// A GPU-less prewarm also compiles the winners stored in tuning databases of the cache
// directory (measured with this library and NVRTC on any GPU), so that cache-only
// processes on those GPUs find them; databases of other software versions are ignored.
TEST(TuningApi, PrewarmCompilesTunedWinnersFromTheCacheDirectory) {
  const std::string cache_dir = runtime_info().cache_dir;
  ASSERT_FALSE(cache_dir.empty());
  using namespace detail;
  auto write_db = [&](const std::string& gpu, const std::string& nvrtc, int block_n) {
    TuningDb db(TuningMetadata{gpu, 132, 13000, nvrtc, FP8GEMM_VERSION_STRING});
    TunedEntry e;
    e.spec = KernelSpec{KernelKind::Gemm1D2D, 1056, 2048, detail::KernelConfig{64, block_n, 6, 4, 0, 0, 1}};
    e.m_measured = 64;
    e.us = 5;
    e.heuristic = "x";
    e.heuristic_us = 6;
    db.put(KernelKind::Gemm1D2D, 64, 1056, 2048, e);
    const std::string path = tuning_db_path(cache_dir, db.metadata());
    EXPECT_EQ(save_tuning_db(path, db), 0);
    return std::make_pair(path, e.spec.slug());
  };
  const auto [mine, mine_slug] = write_db("Test GPU A", nvrtc_version(), 32);
  const auto [other, other_slug] = write_db("Test GPU B", "0.0", 48);
  const PrewarmReport r = prewarm({GemmShape{64, 1056, 2048}}, PrewarmOptions{});
  std::remove(mine.c_str());
  std::remove(other.c_str());
  EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), mine_slug), r.kernel_names.end())
      << "the tuned winner was not compiled";
  EXPECT_EQ(std::find(r.kernel_names.begin(), r.kernel_names.end(), other_slug), r.kernel_names.end())
      << "a database of another NVRTC version was used";
  EXPECT_GE(r.kernels, 2u);  // the heuristic's choice too
}

// Tuning mode On: threads that need the same untuned problem at once share one tuning
// run; the database answers afterwards; a failed run is reported to every waiter and
// retried by the next request.
TEST(TuningApi, ConcurrentRequestsShareOneTuningRun) {
  using namespace detail;
  const TuningMetadata device{"Test GPU " + std::to_string(::getpid()), 132, 13000, nvrtc_version(),
                              FP8GEMM_VERSION_STRING};
  Library& library = Library::instance();
  std::atomic<int> runs{0};
  const KernelSpec winner{KernelKind::Gemm1D2D, 2048, 1024, detail::KernelConfig{128, 128, 5, 8, 0, 1, 1}};
  auto tune = [&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    TunedEntry e;
    e.spec = winner;
    e.m_measured = 300;
    e.us = 10;
    e.heuristic = winner.slug();
    e.heuristic_us = 10;
    return e;
  };
  std::vector<std::thread> threads;
  std::atomic<int> same{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      if (library.tuned_or_tune(device, KernelKind::Gemm1D2D, 300, 2048, 1024, tune) == winner) ++same;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(same.load(), 8);
  // Same bucket (257..512): answered by the database.
  EXPECT_EQ(library.tuned_or_tune(device, KernelKind::Gemm1D2D, 500, 2048, 1024, tune), winner);
  EXPECT_EQ(runs.load(), 1);
  // A failing run reaches every waiter and is not remembered.
  std::atomic<int> failures{0};
  auto failing = [&]() -> TunedEntry {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    throw std::runtime_error("no GPU time");
  };
  threads.clear();
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      try {
        library.tuned_or_tune(device, KernelKind::Gemm1D2D, 4000, 2048, 1024, failing);
      } catch (const std::runtime_error&) {
        ++failures;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 4);
  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(library.tuned_or_tune(device, KernelKind::Gemm1D2D, 4000, 2048, 1024, tune), winner);
  EXPECT_EQ(runs.load(), 3);
  std::remove(tuning_db_path(runtime_info().cache_dir, device).c_str());
}
