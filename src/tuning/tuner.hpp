#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/device_runtime.hpp"
#include "runtime/kernel_store.hpp"
#include "tuning/tune_operands.hpp"
#include "tuning/tuning_db.hpp"

namespace fp8gemm::detail {

struct TunerSettings {
  int candidates = 8;       // configs timed per problem (the heuristic's first choice always among them)
  int jobs = 0;             // compile threads (0: one per hardware thread)
  int batches = 7;          // timed batches per config (one per round, round-robin); the median counts
  int calls_per_batch = 10;  // back-to-back calls per batch, rotating over input copies
};

struct TimedConfig {
  KernelSpec spec;
  double us = 0.0;     // median per-call time; 0 if it could not run
  std::string note;    // why it could not run
};

struct TuneOutcome {
  TunedEntry best;                 // the winner, with the heuristic's choice and time
  std::vector<TimedConfig> timed;  // every candidate, in the heuristic's order
};

// The candidates for a problem: the heuristic's ranking (first choice first) for half of
// them, then the best-ranked config of each tile shape not yet among them, the first choice
// with other rasterizations, and the ranking again, without duplicates (ranked as
// plan_kernel ranks them: cost_model_problem).
std::vector<KernelSpec> tuning_candidates(const GemmProblem& problem, const DeviceTraits& device, int count);

// Compiles the candidates (in parallel) and times each on the runtime's device, whose
// context must be current, with buffers of its own: random e4m3 operands and scales laid
// out as tune_layout says, copied often enough that consecutive calls do not find their
// inputs in L2. Nothing the caller owns is touched. Throws Error(CudaError) if memory
// cannot be allocated. Weight gradients (dense and k-grouped) are timed without C.
TuneOutcome tune_problem(DeviceRuntime& runtime, KernelStore& store, const GemmProblem& problem,
                         const TunerSettings& settings);

// "gemm1d2d_gm M=640 N=4096 K=2048 groups=32" (groups only for the grouped kinds): for logs
// and messages.
std::string describe(const GemmProblem& problem);

}  // namespace fp8gemm::detail
