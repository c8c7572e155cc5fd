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

#include <fmt/format.h>

#include "api/library.hpp"
#include "common/shape_file.hpp"
#include "cache/cache_key.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "fp8gemm/version.hpp"
#include "tuning/entry_stamp.hpp"
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
  EXPECT_EQ(detail::parse_tuning_mode("ON"), 2);  // any case
  EXPECT_EQ(detail::parse_tuning_mode("yes"), -1);
}

// Cache-only: a kernel that is not cached is an error naming the prewarm command; once
// compiled (here by turning cache-only off for a moment) the same call works.
TEST(TuningApi, CacheOnlyMissNamesThePrewarmCommand) {
  // A shape no other test compiles, another in every run of the test in one process
  // (--gtest_repeat: the last run's kernel is still in memory).
  static std::atomic<int> runs{0};
  const GemmShape shape{64, 1048 + 32 * runs++, 1040};
  // The test cache directory outlives a run: start without this shape's kernels.
  const std::string kernels = runtime_info().cache_dir + "/kernels";
  const std::string tag = "_n" + std::to_string(shape.n) + "_k1040_";
  for (const std::string& f : detail::list_files(kernels))
    if (f.find(tag) != std::string::npos) std::remove((kernels + "/" + f).c_str());
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
  EXPECT_NO_THROW(prewarm({GemmShape{64, shape.n + 16, 1040}}, PrewarmOptions{}));
  set_cache_only(false);
}

// A GPU-less prewarm also compiles the winners stored in tuning databases of the cache
// directory (measured with this library and NVRTC on any GPU), so that cache-only
// processes on those GPUs find them; databases of other software versions, and entries this
// build does not use (here: unstamped), are passed over.
TEST(TuningApi, PrewarmCompilesTunedWinnersFromTheCacheDirectory) {
  const std::string cache_dir = runtime_info().cache_dir;
  ASSERT_FALSE(cache_dir.empty());
  using namespace detail;
  auto write_db = [&](const std::string& gpu, const std::string& nvrtc, int block_n, bool stamped = true) {
    TuningDb db(TuningMetadata{gpu, 132, 13000, nvrtc, FP8GEMM_VERSION_STRING});
    TunedEntry e;
    e.spec = KernelSpec{KernelKind::Gemm1D2D, 1056, 2048, detail::KernelConfig{64, block_n, 6, 4, 0, 0, 1}};
    e.m_measured = 64;
    e.us = 5;
    e.heuristic = "x";
    e.heuristic_us = 6;
    e = TuningDb::keyed({KernelKind::Gemm1D2D, 64, 1056, 2048}, e);
    if (stamped) stamp_tuned_entry(e, db.metadata());  // as the tuner records it
    db.put({KernelKind::Gemm1D2D, 64, 1056, 2048}, e);
    const std::string path = tuning_db_path(cache_dir, db.metadata());
    EXPECT_EQ(save_tuning_db(path, db), 0);
    return std::make_pair(path, e.spec.slug());
  };
  const auto [mine, mine_slug] = write_db("Test GPU A", nvrtc_version(), 32);
  const auto [other, other_slug] = write_db("Test GPU B", "0.0", 48);
  const auto [unstamped, unstamped_slug] = write_db("Test GPU C", nvrtc_version(), 80, false);
  const PrewarmReport r = prewarm({GemmShape{64, 1056, 2048}}, PrewarmOptions{});
  std::remove(mine.c_str());
  std::remove(other.c_str());
  std::remove(unstamped.c_str());
  EXPECT_EQ(std::find(r.kernel_names.begin(), r.kernel_names.end(), unstamped_slug), r.kernel_names.end())
      << "an entry this build does not use was compiled";
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
  // A device of its own per process and per run of the test (--gtest_repeat).
  static std::atomic<int> test_runs{0};
  const TuningMetadata device{"Test GPU " + std::to_string(::getpid()) + "-" + std::to_string(test_runs++), 132, 13000,
                              nvrtc_version(), FP8GEMM_VERSION_STRING};
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
      if (library.tuned_or_tune(device, GemmProblem{KernelKind::Gemm1D2D, 300, 2048, 1024}, tune) == winner) ++same;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(same.load(), 8);
  // Same bucket (257..512): answered by the database.
  EXPECT_EQ(library.tuned_or_tune(device, GemmProblem{KernelKind::Gemm1D2D, 500, 2048, 1024}, tune), winner);
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
        library.tuned_or_tune(device, GemmProblem{KernelKind::Gemm1D2D, 4000, 2048, 1024}, failing);
      } catch (const std::runtime_error&) {
        ++failures;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 4);
  EXPECT_EQ(runs.load(), 2);
  EXPECT_EQ(library.tuned_or_tune(device, GemmProblem{KernelKind::Gemm1D2D, 4000, 2048, 1024}, tune), winner);
  EXPECT_EQ(runs.load(), 3);
  std::remove(tuning_db_path(runtime_info().cache_dir, device).c_str());
}

// An entry this build does not use (here: written before entries recorded their kernel; the
// same holds for a kernel or planner change under one version string) plans by the heuristic in
// mode Cached, is tuned again in mode On, and is counted by cached_tuning_databases().
TEST(TuningApi, StaleEntriesAreTunedAgain) {
  using namespace detail;
  static std::atomic<int> test_runs{0};
  const TuningMetadata device{"Test GPU S " + std::to_string(::getpid()) + "-" + std::to_string(test_runs++), 132,
                              13000, nvrtc_version(), FP8GEMM_VERSION_STRING};
  Library& library = Library::instance();
  const GemmProblem p{KernelKind::Gemm1D2D, 300, 2048, 1024};
  const KernelSpec old_winner{KernelKind::Gemm1D2D, 2048, 1024, detail::KernelConfig{64, 128, 8, 8, 0, 1, 1}};
  const KernelSpec new_winner{KernelKind::Gemm1D2D, 2048, 1024, detail::KernelConfig{128, 128, 5, 8, 0, 1, 1}};
  TuningDb db(device);
  TunedEntry e;
  e.spec = old_winner;
  e.us = 10;
  e.heuristic = "x";
  e.heuristic_us = 11;
  db.put(p, e);
  const std::string path = tuning_db_path(runtime_info().cache_dir, device);
  ASSERT_EQ(save_tuning_db(path, db), 0);
  auto listed = [&path]() -> CachedTuningDatabase {
    for (const CachedTuningDatabase& t : cached_tuning_databases())
      if (t.file == path) return t;
    return {};
  };
  EXPECT_EQ(listed().status, "ok");
  EXPECT_EQ(listed().problems, 1u);
  EXPECT_EQ(listed().problems_stale, 1u);
  EXPECT_EQ(library.find_tuned(device, p), std::nullopt);
  int runs = 0;
  auto tune = [&] {
    ++runs;
    TunedEntry t;
    t.spec = new_winner;
    t.us = 9;
    t.heuristic = new_winner.slug();
    t.heuristic_us = 9;
    return t;
  };
  EXPECT_EQ(library.tuned_or_tune(device, p, tune), new_winner);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(library.tuned_or_tune(device, p, tune), new_winner);  // now current
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(library.find_tuned(device, p), new_winner);
  EXPECT_EQ(listed().problems_stale, 0u);
  std::string warning;
  const TuningDb back = load_tuning_db(path, device, &warning);
  ASSERT_NE(back.find(p), nullptr);
  EXPECT_EQ(back.find(p)->kernel_key, kernel_cache_key(new_winner));
  std::remove(path.c_str());
}

namespace {

detail::TunedEntry tuned_entry(const detail::KernelSpec& spec) {
  detail::TunedEntry e;
  e.spec = spec;
  e.us = 5;
  e.heuristic = "x";
  e.heuristic_us = 6;
  return e;
}

// Records a winner for a shape as tune() does (under the problem the library plans).
void record(detail::TuningDb* db, const GemmShape& shape, const detail::KernelSpec& spec) {
  const detail::GemmProblem p = detail::planned_problem(shape, "test");
  const detail::GemmProblem problem{p.kind, p.m, p.n, p.k, p.groups};
  detail::TunedEntry e = detail::TuningDb::keyed(problem, tuned_entry(spec));
  detail::stamp_tuned_entry(e, db->metadata());  // as the tuner records it
  db->put(problem, e);
}

const detail::TunedEntry* lookup(const detail::TuningDb& db, const GemmShape& shape) {
  const detail::GemmProblem p = detail::planned_problem(shape, "test");
  return db.find(p);
}

}  // namespace

// What `tune` records for a grouped shape of a shape file is what a call of that shape looks
// up: the call's arguments (rows, columns and groups as the bench passes them, within the
// same M and K buckets) plan the same problem.
TEST(TuningApi, GroupedCallsFindTheWinnersTunedForTheirShapes) {
  using namespace detail;
  const host::ShapeFile file = host::read_shape_file(std::string(FP8GEMM_SHAPES_DIR) + "/deepseek-v3.json");
  ASSERT_FALSE(file.grouped.empty());
  ASSERT_FALSE(file.k_grouped.empty());
  const KernelSpec winner{KernelKind::Gemm1D2D, 0, 0, detail::KernelConfig{64, 48, 6, 4, 0, 0, 1}};
  for (const host::GroupedShape& g : file.grouped) {
    SCOPED_TRACE(fmt::format("{} x {} rows, N={} K={}", g.groups, g.expected_m, g.n, g.k));
    const bool masked = g.kind == GemmKind::GroupedMasked;
    KernelSpec spec = winner;
    spec.kind = masked ? KernelKind::GroupedMasked : KernelKind::GroupedContiguous;
    spec.n = g.n;
    spec.k = g.k;
    TuningDb db;
    record(&db, host::prewarm_shape(g), spec);
    // A batch of the contiguous form: every expert a segment less than expected (the same M
    // bucket for the shapes of the file).
    const int64_t segments = (g.expected_m + kGroupedSegmentRows - 1) / kGroupedSegmentRows;
    const int64_t a_rows = masked ? g.groups * g.max_m : g.groups * std::max<int64_t>(segments - 1, 1) * kGroupedSegmentRows;
    ASSERT_TRUE(masked || m_bucket(a_rows) == m_bucket(host::prewarm_shape(g).m));
    const TunedEntry* e = lookup(db, grouped_call_shape(g.kind, a_rows, g.k, g.n, g.groups, g.expected_m));
    ASSERT_NE(e, nullptr) << "the call does not find the tuned winner";
    EXPECT_EQ(e->spec, spec);
    if (masked) {  // the same rows over other experts are another problem
      EXPECT_EQ(lookup(db, grouped_call_shape(g.kind, a_rows, g.k, g.n, g.groups * 2, g.expected_m / 2)), nullptr);
    } else {  // the contiguous kernel choice does not depend on the expert count
      EXPECT_NE(lookup(db, grouped_call_shape(g.kind, a_rows, g.k, g.n, g.groups * 2)), nullptr);
    }
  }
  for (const host::KGroupedShape& g : file.k_grouped) {
    SCOPED_TRACE(fmt::format("{} groups, M={} N={} K={}", g.groups, g.m, g.n, g.expected_k));
    KernelSpec spec{KernelKind::KGrouped, g.n, 0, detail::KernelConfig{128, 64, 4, 4, 0, 0, 1}};
    TuningDb db;
    record(&db, host::prewarm_shape(g), spec);
    // A batch whose groups hold 3/4 of the expected columns on average: same K bucket.
    const int64_t a_cols = g.groups * k_grouped_columns(g.expected_k * 3 / 4 + 1);
    const TunedEntry* e = lookup(db, grouped_call_shape(GemmKind::KGroupedWeightGradient, g.m, a_cols, g.n, g.groups));
    ASSERT_NE(e, nullptr) << "the call does not find the tuned winner";
    EXPECT_EQ(e->spec, spec);
    // The same rows of D split into other groups are another problem.
    EXPECT_EQ(lookup(db, grouped_call_shape(GemmKind::KGroupedWeightGradient, g.m / 2, a_cols * 2, g.n, g.groups * 2)),
              nullptr);
  }
}

// A shape's problem as tune() records it and prewarm and kernel_name look it up.
TEST(TuningApi, PlannedProblemsOfGroupedShapes) {
  using namespace detail;
  const GemmProblem c = planned_problem(GemmShape{30000, 4096, 7168, GemmKind::GroupedContiguous, 8}, "test");
  EXPECT_EQ(c.kind, KernelKind::GroupedContiguous);
  EXPECT_EQ(c.m, 32768);  // the bucket of the total rows
  EXPECT_EQ(c.k, 7168);
  EXPECT_EQ(c.groups, 8);
  const GemmProblem m = planned_problem(GemmShape{32 * 20, 4096, 2048, GemmKind::GroupedMasked, 32}, "test");
  EXPECT_EQ(m.m, 640);
  EXPECT_EQ(m.groups, 32);
  const GemmProblem k = planned_problem(GemmShape{4096, 7168, 4 * 7000, GemmKind::KGroupedWeightGradient, 4}, "test");
  EXPECT_EQ(k.kind, KernelKind::KGrouped);
  EXPECT_EQ(k.m, 4 * 4096);  // all groups' rows
  EXPECT_EQ(k.k, 8192);      // the bucket of the mean K per group
  EXPECT_EQ(k.groups, 4);
  const GemmProblem d = planned_problem(GemmShape{4096, 7168, 2048, GemmKind::Forward, 8}, "test");
  EXPECT_EQ(d.groups, 1);  // dense shapes have no groups
  try {
    planned_problem(GemmShape{1, 8, 16, static_cast<GemmKind>(9)}, "kernel_name");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("kernel_name"), std::string::npos) << e.what();
  }
}

// tune() checks grouped shapes before it looks for a GPU: the dense rules, groups >= 1, a
// masked m of at least one row per expert, and at most 2^31 - 1024 rows of a k-grouped D.
TEST(TuningApi, TuneValidatesGroupedShapes) {
  auto expect_invalid = [](const GemmShape& s, const std::string& words) {
    SCOPED_TRACE(words);
    try {
      tune({s});
      ADD_FAILURE() << "expected InvalidArgument";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_invalid(GemmShape{640, 4096, 2048, GemmKind::GroupedMasked, 0}, "groups = 0");
  expect_invalid(GemmShape{20, 4096, 2048, GemmKind::GroupedMasked, 32}, "groups = 32 > m");
  expect_invalid(GemmShape{4096, 4100, 2048, GemmKind::GroupedContiguous, 8}, "N % 8 == 0");
  expect_invalid(GemmShape{4096, 7168, 1000, GemmKind::KGroupedWeightGradient, 4}, "K % 16 == 0");
  expect_invalid(GemmShape{int64_t(1) << 28, 7168, 4096, GemmKind::KGroupedWeightGradient, 16}, "rows of D");
  expect_invalid(GemmShape{4096, 7168, 4096, GemmKind::KGroupedWeightGradient, -1}, "groups = -1");
  // Empty shapes have nothing to tune: no GPU is needed to say so.
  EXPECT_TRUE(tune({GemmShape{0, 4096, 2048, GemmKind::GroupedMasked, 4},
                    GemmShape{4096, 0, 2048, GemmKind::KGroupedWeightGradient, 4}})
                  .empty());
}

// A GPU-less prewarm compiles the grouped winners of the databases in the cache directory
// too, found under the problems their shapes plan.
TEST(TuningApi, PrewarmCompilesTunedGroupedWinners) {
  using namespace detail;
  const std::string cache_dir = runtime_info().cache_dir;
  ASSERT_FALSE(cache_dir.empty());
  const GemmShape contiguous{512, 1072, 1024, GemmKind::GroupedContiguous, 4};
  const GemmShape masked{4 * 48, 1072, 1024, GemmKind::GroupedMasked, 4};
  const GemmShape k_grouped{256, 1076, 4 * 1024, GemmKind::KGroupedWeightGradient, 4};
  const KernelSpec winners[] = {
      {KernelKind::GroupedContiguous, 1072, 1024, detail::KernelConfig{128, 48, 5, 4, 0, 0, 1}},
      {KernelKind::GroupedMasked, 1072, 1024, detail::KernelConfig{64, 80, 6, 4, 0, 0, 1}},
      {KernelKind::KGrouped, 1076, 0, detail::KernelConfig{128, 48, 4, 4, 0, 0, 1}}};
  TuningDb db(TuningMetadata{"Test GPU G " + std::to_string(::getpid()), 132, 13000, nvrtc_version(),
                             FP8GEMM_VERSION_STRING});
  record(&db, contiguous, winners[0]);
  record(&db, masked, winners[1]);
  record(&db, k_grouped, winners[2]);
  const std::string path = tuning_db_path(cache_dir, db.metadata());
  ASSERT_EQ(save_tuning_db(path, db), 0);
  const PrewarmReport r = prewarm({contiguous, masked, k_grouped}, PrewarmOptions{});
  std::remove(path.c_str());
  for (const KernelSpec& w : winners)
    EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), w.slug()), r.kernel_names.end())
        << "the tuned winner " << w.slug() << " was not compiled";
}
