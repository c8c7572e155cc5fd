#pragma once
// Recorded sweeps of explicit dense configs (tests/data/*-sweep-*.txt, written by
// tools/config_sweep.py) and the planner's regret on them: for each problem, the time of the
// first-ranked config that the sweep timed against the best time it recorded. Shared by the
// CPU tests, which bound that regret, and fp8gemm_planner_score, which prints it for a changed
// cost model. Host logic only (no GPU): it links the library's internals.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "heuristics/heuristics.hpp"

namespace fp8gemm::sweep {

// Timed kernels per (M, N, K): slug -> kernel us.
using Sweep = std::map<std::tuple<int64_t, int64_t, int64_t>, std::map<std::string, double>>;

// Adds the rows of one sweep file ("M N K kernel us" per line, '#' comments, blank lines
// skipped) to `sweep`; a kernel timed again replaces the earlier time. False, with the file
// and line in `error`, when the file cannot be read or a line is not of that form (nothing of
// the file is added then).
bool read_sweep(const std::string& path, Sweep& sweep, std::string& error);

// The card a sweep file was recorded on, as its first line names it ("... on one <card>, ..." or
// "... on one <card> (..."); "" when the file cannot be read or its first line names none.
// Sweeps of different cards are never pooled: a kernel's time on one card says nothing of
// another's.
std::string sweep_card(const std::string& path);

// Whether a kernel slug has the planner's rasterization (grouping 8, `_g8`): the best of a
// problem is taken among these, the configs the planner ranks.
bool planner_raster(const std::string& slug);

struct PickScore {
  int64_t m = 0, n = 0, k = 0;
  std::string picked;    // the first-ranked config the sweep timed ("" if it timed none)
  double picked_us = 0;  // its time (0 if none)
  int picked_rank = -1;  // its place in the planner's ranking: 0 = the planner's own pick;
                         // more when the sweep did not time the configs ranked before it
  std::string best;      // the fastest timed config of the planner's rasterization
  double best_us = 0;
  double tuner_us = 0;   // the fastest timed among `tuner_candidates` tuning candidates (0: none)
  double regret() const;  // log(picked_us / best_us); 0 if nothing was picked
};

// One entry per problem of the sweep, in its order (the dense 1D2D planner on `device`).
std::vector<PickScore> score_picks(const Sweep& sweep, const detail::DeviceTraits& device, int tuner_candidates);

// A timed kernel beside the cost model's prediction for it.
struct TimedPrediction {
  int64_t m = 0, n = 0, k = 0;
  std::string kernel;
  double measured_us = 0, predicted_us = 0;
  int rank = 0;  // its place in the planner's ranking (0 = the planner's pick)
};

// Every timed kernel of the sweep that the dense 1D2D planner ranks, with the model's time for
// it, problem by problem in the sweep's order, in ranking order within a problem (kernels the
// planner does not rank, e.g. other rasterizations, are left out).
std::vector<TimedPrediction> timed_predictions(const Sweep& sweep, const detail::DeviceTraits& device);

}  // namespace fp8gemm::sweep
