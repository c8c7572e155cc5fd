#pragma once

#include <cstdint>
#include <vector>

#include "problem/gemm_problem.hpp"
#include "problem/problem.hpp"

namespace fp8gemm::detail {

// What the heuristic needs to know about the device.
struct DeviceTraits {
  int num_sms = 132;
  int max_smem_bytes = kMaxSmemBytes;
};

struct RankedConfig {
  KernelSpec spec;
  double predicted_us = 0.0;  // the cost model's estimate
};

// Candidates for one problem: every legal config, ranked by the analytical cost model
// (waves x per-tile time, bounded below by the HBM floor). Element 0 is the heuristic's
// choice. Pure and deterministic. KGrouped: m is the rows of all groups (groups x M) and
// k the expected K per group; the specs it returns have k = 0.
// groups > 1 (GroupedMasked): m is groups x rows per group, and every group's rows start a
// new M block. (The problem as the cost model sees it: cost_model_problem, runtime/planner.hpp.)
std::vector<RankedConfig> rank_configs(const GemmProblem& problem, const DeviceTraits& device);

// The model's two bounds for one spec at a given M: the tensor-core side (waves x per-tile
// time) and the HBM side (bytes at measured bandwidth, plus what does not overlap them).
struct Prediction {
  double compute_us = 0.0;
  double memory_us = 0.0;
  double us() const { return compute_us > memory_us ? compute_us : memory_us; }
};
// k_grouped: the spec (of the dense weight-gradient kind) is ranked for the k-grouped kernel.
Prediction predict(const KernelSpec& spec, int64_t m, const DeviceTraits& device, int64_t groups = 1,
                   bool k_grouped = false);

// The persistent grid of a planned kernel, in clusters, on a device where at most
// max_clusters are resident at once: one per super tile up to that, except that dense
// kernels the tensor cores bound (the model's HBM time under half its compute time) take only
// as many as their waves need (balanced_clusters). Grouped kernels: every cluster (their
// rows live on the device; m is only the expected size).
int64_t persistent_clusters(const KernelSpec& spec, int64_t m, int64_t max_clusters, const DeviceTraits& device);
// The model's estimate for one spec at a given M (exposed for tests and the tuner).
double predict_us(const KernelSpec& spec, int64_t m, const DeviceTraits& device, int64_t groups = 1);

}  // namespace fp8gemm::detail
