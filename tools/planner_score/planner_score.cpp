// fp8gemm_planner_score: the dense planner's choices judged on recorded sweeps, on the CPU.
// A cost-model change is scored here before any GPU time is spent on it.
//
//   fp8gemm_planner_score [-v] [--candidates 8] SWEEP...
//     For each sweep file (tests/data/*-sweep-*.txt: "M N K kernel us" per timed config), and
//     for the files of each card pooled (the card named by a file's first line, "on one
//     <card>"; files of different cards are never pooled; a problem timed in several files of
//     one card counts once, its kernels merged; a kernel timed in two of them keeps the later
//     file's time): the regret of the planner's picks (the first-ranked config that the sweep
//     timed, against the best timed with the planner's rasterization), geometric mean and
//     worst, and what `fp8gemm tune --candidates N` would reach. -v prints every problem.
//     The pooled line is "all: ..." when every file names the same card, else one line per
//     card, "all on <card>: ..." ("all on an unnamed card" for files that name none).
//     Where a sweep did not time the planner's own pick, a later-ranked config stands in for
//     it: the count of those is printed, and -v marks them with the stand-in's rank (a file
//     that lacks the pick may show a regret that the pooled sweeps do not).
//   fp8gemm_planner_score --predictions SWEEP...
//     Per card pool (as above), every timed kernel that the planner ranks beside the model's
//     time for it: "card | M N K kernel measured_us predicted_us rank" lines, for
//     tools/model_residuals.py, which shows where the model misprices which tiles.
//   fp8gemm_planner_score --picks SHAPES.json
//     The first-ranked config of every dense problem of a shape file, one "M N K kernel" line
//     each: two planners' listings diffed show the picks a change moves.
//
// --sms sets the device's SM count (default 132, the H100 and H200 SXM). Exit status: 0, or
// 2 on bad use, an unreadable or malformed file, or a sweep problem that timed none of the
// ranked configs. Links the library's internals (fp8gemm_core); no GPU needed.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/shape_file.hpp"
#include "heuristics/heuristics.hpp"
#include "sweep_score.hpp"

using namespace fp8gemm;

namespace {

std::string tile_of(const std::string& slug) {
  const auto at = slug.find("_bm");
  return at == std::string::npos ? slug : slug.substr(at + 1);
}

// Prints one summary line; false if a problem timed none of the ranked configs.
bool report(const std::string& label, const std::vector<sweep::PickScore>& scores, bool verbose) {
  double sum = 0, worst = 0, tuner_sum = 0;
  int scored = 0, tuner_count = 0, stand_ins = 0;
  const sweep::PickScore* worst_at = nullptr;
  for (const sweep::PickScore& s : scores) {
    if (s.picked.empty() || s.best.empty()) {
      std::fprintf(stderr, "%s: %ldx%ldx%ld: %s\n", label.c_str(), static_cast<long>(s.m), static_cast<long>(s.n),
                   static_cast<long>(s.k),
                   s.best.empty() ? "no config with the planner's rasterization was timed"
                                  : "none of the planner's ranked configs was timed");
      continue;
    }
    const double r = s.regret();
    sum += r;
    ++scored;
    if (s.picked_rank > 0) ++stand_ins;
    if (!worst_at || r > worst) {
      worst = r;
      worst_at = &s;
    }
    if (s.tuner_us > 0) {
      tuner_sum += std::log(s.tuner_us / std::min(s.tuner_us, s.best_us));
      ++tuner_count;
    }
    if (verbose)
      std::printf("  %6ld %6ld %6ld  %.3fx  picked %-24s best %s%s\n", static_cast<long>(s.m), static_cast<long>(s.n),
                  static_cast<long>(s.k), std::exp(r), tile_of(s.picked).c_str(), tile_of(s.best).c_str(),
                  s.picked_rank > 0 ? ("  (rank " + std::to_string(s.picked_rank) + ": the planner's pick was not timed)").c_str()
                                    : "");
  }
  if (worst_at)
    std::printf(
        "%s: %d problems, regret %.4fx geometric mean, %.3fx worst (%ldx%ldx%ld); tuner's candidates %.4fx; "
        "%d scored by a later-ranked config (the planner's pick not timed)\n",
        label.c_str(), scored, std::exp(sum / scored), std::exp(worst), static_cast<long>(worst_at->m),
        static_cast<long>(worst_at->n), static_cast<long>(worst_at->k), tuner_count ? std::exp(tuner_sum / tuner_count) : 1.0,
        stand_ins);
  else
    std::printf("%s: no problem scored\n", label.c_str());
  return scored == static_cast<int>(scores.size());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Scores the dense planner's picks on recorded sweeps of explicit configs (no GPU)"};
  std::vector<std::string> sweeps;
  std::string picks;
  bool verbose = false, predictions = false;
  int candidates = 8, sms = 132;
  app.add_option("sweeps", sweeps, "Sweep files (\"M N K kernel us\" lines)");
  app.add_option("--picks", picks, "Print the first-ranked config of every dense problem of this shape file");
  app.add_option("--candidates", candidates, "Tuning candidates counted as the tuner's reach")->check(CLI::Range(1, 64));
  app.add_option("--sms", sms, "SMs of the device planned for")->check(CLI::Range(1, 1024));
  app.add_flag("-v,--verbose", verbose, "Print every problem's pick and best");
  app.add_flag("--predictions", predictions,
               "Print every timed kernel the planner ranks with the model's time for it (per card pool)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (sweeps.empty() == picks.empty()) {
    std::fprintf(stderr, "planner_score: give sweep files or --picks SHAPES.json (one of the two)\n%s",
                 app.help().c_str());
    return 2;
  }
  if (predictions && !picks.empty()) {
    std::fprintf(stderr, "planner_score: --predictions reads sweep files, not --picks\n");
    return 2;
  }
  detail::DeviceTraits device;
  device.num_sms = sms;
  if (!picks.empty()) {
    host::ShapeFile shapes;
    try {
      shapes = host::read_shape_file(picks);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "planner_score: %s\n", e.what());
      return 2;
    }
    if (shapes.dense.empty()) {
      std::fprintf(stderr, "planner_score: %s has no dense problems\n", picks.c_str());
      return 2;
    }
    for (const GemmShape& s : shapes.dense) {
      const auto ranked = detail::rank_configs({detail::KernelKind::Gemm1D2D, s.m, s.n, s.k}, device);
      std::printf("%ld %ld %ld %s\n", static_cast<long>(s.m), static_cast<long>(s.n), static_cast<long>(s.k),
                  ranked.empty() ? "-" : ranked.front().spec.slug().c_str());
    }
    return 0;
  }
  std::map<std::string, sweep::Sweep> pooled;  // card -> its files' rows
  bool complete = true;
  for (const std::string& path : sweeps) {
    sweep::Sweep one;
    std::string error;
    if (!sweep::read_sweep(path, one, error)) {
      std::fprintf(stderr, "planner_score: %s\n", error.c_str());
      return 2;
    }
    const std::string card = sweep::sweep_card(path);
    for (const auto& [problem, kernels] : one)
      for (const auto& [kernel, us] : kernels) pooled[card][problem][kernel] = us;
    if (!predictions) complete = report(path, sweep::score_picks(one, device, candidates), verbose) && complete;
  }
  if (predictions) {
    for (const auto& [card, rows] : pooled)
      for (const sweep::TimedPrediction& t : sweep::timed_predictions(rows, device))
        std::printf("%s | %ld %ld %ld %s %.2f %.2f %d\n", card.empty() ? "-" : card.c_str(), static_cast<long>(t.m),
                    static_cast<long>(t.n), static_cast<long>(t.k), t.kernel.c_str(), t.measured_us, t.predicted_us,
                    t.rank);
    return 0;
  }
  for (const auto& [card, rows] : pooled) {
    const std::string label =
        pooled.size() == 1 ? "all" : "all on " + (card.empty() ? std::string("an unnamed card") : card);
    if (sweeps.size() > 1) complete = report(label, sweep::score_picks(rows, device, candidates), false) && complete;
  }
  return complete ? 0 : 2;
}
