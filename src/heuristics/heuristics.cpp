#include "heuristics/heuristics.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace fp8gemm::detail {
namespace {

// Rough H100/H200 SXM figures, per SM and cycle, at ~1.8 GHz. They only need to rank
// configs sensibly; measurement (the tuner) has the last word.
constexpr double kClockGHz = 1.8;
constexpr double kMacsPerCycle = 4096;       // FP8 tensor core, dense
constexpr double kFmaPerCycle = 128;         // FP32 promotion FMAs
constexpr double kFeedBytesPerCycle = 96;    // what one SM's TMA loads draw from L2
constexpr double kHbmPullBytesPerCycle = 40; // what one SM can pull from HBM on its own
constexpr double kHbmBytesPerSecond = 4.3e12;
constexpr double kTileOverheadCycles = 600;  // pipeline fill, epilogue, scheduling
constexpr int kMaxStages = 8;

const int kBlockNs[] = {16, 32, 48, 64, 80, 96, 112, 128};

}  // namespace

double predict_us(const KernelSpec& spec, int64_t m, const DeviceTraits& device) {
  const KernelConfig& c = spec.config;
  const KernelLayout l = kernel_layout(spec);
  const int64_t m_blocks = (m + c.block_m - 1) / c.block_m;
  const int64_t tiles = m_blocks * l.n_blocks;
  const int64_t active = std::min<int64_t>(tiles, device.num_sms);
  const int64_t waves = (tiles + device.num_sms - 1) / device.num_sms;

  // One 128-deep K block of one tile: tensor-core time against load time from L2.
  const double wgmma = l.math_warpgroups * 64.0 * c.block_n * 128.0 / kMacsPerCycle;
  // With one math warpgroup the promotion FMAs cannot hide behind another warpgroup's wgmma.
  const double promote = l.math_warpgroups == 1 ? 64.0 * c.block_n / kFmaPerCycle : 0.0;
  const double rows_a = static_cast<double>(std::min<int64_t>(c.block_m, m));
  const double load = (rows_a + c.block_n) * 128.0 / kFeedBytesPerCycle;
  // Stages hide load latency; too few expose it.
  const double latency_penalty = c.stages < 4 ? (4 - c.stages) * 0.05 : 0.0;
  const double tile = l.k_blocks * std::max(wgmma + promote, load) * (1.0 + latency_penalty) + kTileOverheadCycles;
  const double compute_us = static_cast<double>(waves) * tile / (kClockGHz * 1e3);

  // Every input is read from HBM at least once and D written once, by the SMs that have
  // work: the whole device's bandwidth, or less when few tiles keep few SMs busy.
  const double bytes = static_cast<double>(m) * spec.k + static_cast<double>(spec.n) * spec.k +
                       static_cast<double>(m) * spec.n * 2;
  const double pull = std::min(kHbmBytesPerSecond, static_cast<double>(active) * kHbmPullBytesPerCycle * kClockGHz * 1e9);
  return std::max(compute_us, bytes / pull * 1e6);
}

std::vector<RankedConfig> rank_configs(KernelKind kind, int64_t m, int64_t n, int64_t k,
                                       const DeviceTraits& device) {
  std::vector<RankedConfig> out;
  for (int block_m : {64, 128}) {
    if (block_m == 128 && m <= 64) continue;  // half of every tile would be padding
    for (int block_n : kBlockNs) {
      KernelSpec spec{kind, n, k, KernelConfig{block_m, block_n, 2, 8}};
      // The deepest pipeline that fits (more stages never hurt a single CTA per SM).
      for (int stages = kMaxStages; stages >= 2; --stages) {
        spec.config.stages = stages;
        if (kernel_layout(spec).smem_bytes <= device.max_smem_bytes) break;
      }
      if (!spec_illegal_reason(spec).empty()) continue;
      out.push_back({spec, predict_us(spec, m, device)});
    }
  }
  FP8GEMM_CHECK(!out.empty(), "no legal config for n={} k={}", n, k);
  // Predictions within ~1 % of each other fall in one bucket; inside a bucket prefer the
  // larger tile (less traffic per FLOP), then the deeper pipeline.
  double best = out.front().predicted_us;
  for (const RankedConfig& r : out) best = std::min(best, r.predicted_us);
  auto bucket = [best](const RankedConfig& r) {
    return static_cast<int64_t>(std::floor(std::log(r.predicted_us / best) / std::log(1.01)));
  };
  std::stable_sort(out.begin(), out.end(), [&](const RankedConfig& x, const RankedConfig& y) {
    if (bucket(x) != bucket(y)) return bucket(x) < bucket(y);
    const int ax = x.spec.config.block_m * x.spec.config.block_n;
    const int ay = y.spec.config.block_m * y.spec.config.block_n;
    if (ax != ay) return ax > ay;
    return x.spec.config.stages > y.spec.config.stages;
  });
  return out;
}

}  // namespace fp8gemm::detail
