#include "sweep_score.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "tuning/tuner.hpp"

namespace fp8gemm::sweep {

bool read_sweep(const std::string& path, Sweep& sweep, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot be read";
    return false;
  }
  Sweep rows;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
    std::istringstream fields(line);
    int64_t m = 0, n = 0, k = 0;
    std::string kernel, rest;
    double us = 0;
    if (!(fields >> m >> n >> k >> kernel >> us) || (fields >> rest) || m <= 0 || n <= 0 || k <= 0 ||
        !(us > 0) || !std::isfinite(us)) {
      error = path + ":" + std::to_string(line_number) + ": expected \"M N K kernel us\" (positive numbers), got \"" +
              line + "\"";
      return false;
    }
    rows[{m, n, k}][kernel] = us;
  }
  for (auto& [problem, kernels] : rows)
    for (auto& [kernel, us] : kernels) sweep[problem][kernel] = us;
  return true;
}

std::string sweep_card(const std::string& path) {
  std::ifstream in(path);
  std::string first;
  if (!in || !std::getline(in, first) || first.empty() || first[0] != '#') return "";
  const std::string lead = " on one ";
  const auto at = first.find(lead);
  if (at == std::string::npos) return "";
  const auto from = at + lead.size();
  const auto end = first.find_first_of(",(", from);
  std::string card = first.substr(from, end == std::string::npos ? std::string::npos : end - from);
  while (!card.empty() && (card.back() == ' ' || card.back() == '\r')) card.pop_back();
  return card;
}

bool planner_raster(const std::string& slug) {
  return slug.find("_g8_") != std::string::npos || (slug.size() >= 3 && slug.compare(slug.size() - 3, 3, "_g8") == 0);
}

double PickScore::regret() const { return picked_us > 0 && best_us > 0 ? std::log(picked_us / best_us) : 0.0; }

std::vector<PickScore> score_picks(const Sweep& sweep, const detail::DeviceTraits& device, int tuner_candidates) {
  using detail::KernelKind;
  std::vector<PickScore> scores;
  for (const auto& [problem, kernels] : sweep) {
    PickScore s;
    std::tie(s.m, s.n, s.k) = problem;
    for (const auto& [kernel, us] : kernels)
      if (planner_raster(kernel) && (s.best.empty() || us < s.best_us)) {
        s.best = kernel;
        s.best_us = us;
      }
    int rank = 0;
    for (const detail::RankedConfig& r : detail::rank_configs({KernelKind::Gemm1D2D, s.m, s.n, s.k}, device)) {
      const auto it = kernels.find(r.spec.slug());
      if (it == kernels.end()) {
        ++rank;
        continue;
      }
      s.picked = it->first;
      s.picked_us = it->second;
      s.picked_rank = rank;
      break;
    }
    if (tuner_candidates > 0)
      for (const detail::KernelSpec& c :
           detail::tuning_candidates({KernelKind::Gemm1D2D, s.m, s.n, s.k}, device, tuner_candidates)) {
        const auto it = kernels.find(c.slug());
        if (it != kernels.end() && (s.tuner_us == 0 || it->second < s.tuner_us)) s.tuner_us = it->second;
      }
    scores.push_back(std::move(s));
  }
  return scores;
}

std::vector<TimedPrediction> timed_predictions(const Sweep& sweep, const detail::DeviceTraits& device) {
  std::vector<TimedPrediction> out;
  for (const auto& [problem, kernels] : sweep) {
    const auto [m, n, k] = problem;
    int rank = 0;
    std::set<std::string> listed;  // a slug ranked twice is listed once, at its first rank
    for (const detail::RankedConfig& r : detail::rank_configs({detail::KernelKind::Gemm1D2D, m, n, k}, device)) {
      const auto it = kernels.find(r.spec.slug());
      if (it != kernels.end() && listed.insert(it->first).second)
        out.push_back({m, n, k, it->first, it->second, r.predicted_us, rank});
      ++rank;
    }
  }
  return out;
}

}  // namespace fp8gemm::sweep
