// What a tuned entry must still match to be used: the planner's first choice it was timed
// against and its kernel's cache key, as this build makes them (tuning/entry_stamp.hpp).

#include <gtest/gtest.h>

#include "cache/cache_key.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "fp8gemm/version.hpp"
#include "tuning/entry_stamp.hpp"
#include "tuning/tuner.hpp"
#include "tuning/tuning_db.hpp"

using namespace fp8gemm::detail;

namespace {

TuningMetadata device() { return TuningMetadata{"NVIDIA H200", 132, 13000, nvrtc_version(), FP8GEMM_VERSION_STRING}; }

// An entry as TuningDb::put stores it, tuned at M = 3000 for N = 7168, K = 2048.
TunedEntry tuned(const KernelSpec& winner, int64_t m = 3000) {
  TunedEntry e;
  e.spec = winner;
  e.us = 90;
  e.heuristic = "x";
  e.heuristic_us = 100;
  return TuningDb::keyed({winner.kind, m, winner.n, winner.k}, e);
}

const KernelSpec kWinner{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{192, 128, 4, 8, 0, 1, 1}};

}  // namespace

TEST(EntryStamp, AStampedEntryHoldsInTheBuildThatStampedIt) {
  TunedEntry e = tuned(kWinner);
  EXPECT_NE(tuned_entry_stale_reason(e, device()), "");  // not stamped yet
  stamp_tuned_entry(e, device());
  EXPECT_EQ(e.kernel_key, kernel_cache_key(kWinner));
  EXPECT_EQ(e.planned, tuning_candidates(tuned_problem(e), DeviceTraits{132}, 1).front().slug());
  EXPECT_EQ(tuned_entry_stale_reason(e, device()), "");
  // It survives the file: format 4 keeps both stamps.
  TuningDb db(device());
  db.put(tuned_problem(e), e);
  std::string why;
  const std::optional<TuningDb> back = TuningDb::from_json(db.to_json(), &why);
  ASSERT_TRUE(back) << why;
  const TunedEntry* read = back->find(tuned_problem(e));
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->planned, e.planned);
  EXPECT_EQ(read->kernel_key, e.kernel_key);
  EXPECT_EQ(tuned_entry_stale_reason(*read, device()), "");
}

// A kernel whose code changed since it was timed, and an entry timed against another first
// choice of the planner, are stale; so is one of a file written before the stamps.
TEST(EntryStamp, ChangedKernelsAndPlannerChoicesRetireTheEntry) {
  TunedEntry e = tuned(kWinner);
  stamp_tuned_entry(e, device());
  TunedEntry kernel_changed = e;
  kernel_changed.kernel_key[0] = kernel_changed.kernel_key[0] == '0' ? '1' : '0';
  EXPECT_NE(tuned_entry_stale_reason(kernel_changed, device()).find("compiles differently"), std::string::npos);
  TunedEntry planner_changed = e;
  planner_changed.planned = "gemm1d2d_n7168_k2048_bm64_bn64_s8_g8_ts";
  const std::string why = tuned_entry_stale_reason(planner_changed, device());
  EXPECT_NE(why.find("the planner now picks " + e.planned), std::string::npos) << why;
  EXPECT_NE(why.find("timed against gemm1d2d_n7168_k2048_bm64_bn64_s8_g8_ts"), std::string::npos) << why;
  TunedEntry unstamped = e;
  unstamped.kernel_key.clear();
  EXPECT_NE(tuned_entry_stale_reason(unstamped, device()).find("did not record"), std::string::npos);
  // The planner's choice is the device's: another SM count may plan otherwise, and is checked
  // against its own stamp.
  const TuningMetadata small{"Small GPU", 66, 13000, nvrtc_version(), FP8GEMM_VERSION_STRING};
  TunedEntry other = tuned(kWinner);
  stamp_tuned_entry(other, small);
  EXPECT_EQ(tuned_entry_stale_reason(other, small), "");
}

// TuningDb::find passes over rejected entries as if they were not there: the bucket's next
// nearest entry serves instead.
TEST(EntryStamp, FindPassesOverRejectedEntries) {
  TuningDb db(device());
  TunedEntry at_3000 = tuned(kWinner, 3000), at_4096 = tuned(kWinner, 4096);
  stamp_tuned_entry(at_4096, device());
  db.put(tuned_problem(at_3000), at_3000);  // unstamped
  db.put(tuned_problem(at_4096), at_4096);
  auto current = [](const TunedEntry& x) { return tuned_entry_stale_reason(x, device()).empty(); };
  const GemmProblem p{KernelKind::Gemm1D2D, 3000, 7168, 2048};
  ASSERT_NE(db.find(p), nullptr);
  EXPECT_EQ(db.find(p)->m_measured, 3000);
  ASSERT_NE(db.find(p, current), nullptr);
  EXPECT_EQ(db.find(p, current)->m_measured, 4096);
  EXPECT_EQ(db.find({KernelKind::Gemm1D2D, 3000, 7168, 2048}, [](const TunedEntry&) { return false; }), nullptr);
}
