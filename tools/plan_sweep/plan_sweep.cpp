// fp8gemm_plan_sweep: the planner over problems off the shape sets, compiled. Draws
// pseudo-random GEMM problems of all five kinds (tools/common/random_problems.hpp), ranks
// each one's configs as the library does, and compiles its first --candidates ranked
// kernels with NVRTC (no GPU needed), each distinct kernel once. Prints every compile error
// and every kernel that compiled to a slow path (local memory, or wgmma serialized by ptxas),
// with the rank it had, then the counts.
//
//   fp8gemm_plan_sweep [--problems 600] [--seed 1] [--candidates 4] [--tuner] [-j 0]
//
// --tuner compiles the candidates `fp8gemm tune --candidates N` would time (tuning_candidates)
// instead of the first N ranked.
//
// Exit status: 0 when nothing failed to compile and no problem's first choice took a slow
// path (the planner passes over a slow candidate, so one ranked later is only reported),
// 1 otherwise, 2 on bad use. A run of 600 problems x 4 candidates takes ~6 minutes on two
// cores. It links the library's internals (fp8gemm_core).

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "codegen/gemm_codegen.hpp"
#include "common/random_problems.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "heuristics/heuristics.hpp"
#include "runtime/planner.hpp"
#include "tuning/tuner.hpp"

using namespace fp8gemm::detail;

namespace {

struct Job {
  KernelSpec spec;
  int rank;
  GemmProblem problem;
};

}  // namespace

int main(int argc, char** argv) {
  int problems = 600, candidates = 4, jobs = 0;
  uint64_t seed = 1;
  bool tuner = false;
  CLI::App app{"Compiles the planner's ranked kernels for pseudo-random problems of every kind"};
  app.add_option("--problems", problems, "Problems drawn")->check(CLI::Range(1, 1000000));
  app.add_option("--seed", seed, "Seed of the draw");
  app.add_option("--candidates", candidates, "Ranked configs compiled per problem")->check(CLI::Range(1, 64));
  app.add_option("-j,--jobs", jobs, "Compile threads; 0 = one per hardware thread")->check(CLI::Range(0, 1024));
  app.add_flag("--tuner", tuner,
               "Compile the tuner's candidates (`fp8gemm tune --candidates N`: half by rank, half by tile shape) "
               "instead of the first N ranked");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return e.get_exit_code() == 0 ? 0 : 2;
  }
  if (jobs == 0) jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  fp8gemm::host::RandomProblems draw(seed);
  std::vector<Job> work;
  std::map<std::string, size_t> job_of;  // slug -> its job; a kernel keeps the best rank any problem gave it
  int unplanned = 0;
  for (int i = 0; i < problems; ++i) {
    const GemmProblem p = draw.next();
    std::vector<RankedConfig> ranked;
    std::string why;
    try {
      ranked = rank_configs(cost_model_problem(p), DeviceTraits{});
      if (ranked.empty()) why = "no config";
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!why.empty()) {
      std::printf("not planned: kind %d m %lld n %lld k %lld groups %lld: %s\n", static_cast<int>(p.kind),
                  static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                  static_cast<long long>(p.groups), why.c_str());
      ++unplanned;
      continue;
    }
    std::vector<KernelSpec> specs;
    if (tuner) {
      specs = tuning_candidates(p, DeviceTraits{}, candidates);
    } else {
      for (int r = 0; r < candidates && r < static_cast<int>(ranked.size()); ++r) specs.push_back(ranked[r].spec);
    }
    for (int r = 0; r < static_cast<int>(specs.size()); ++r) {
      const auto [it, added] = job_of.emplace(specs[r].slug(), work.size());
      if (added)
        work.push_back({specs[r], r, p});
      else if (r < work[it->second].rank)
        work[it->second] = {specs[r], r, p};
    }
  }
  std::printf("%d problems, %zu distinct kernels to compile on %d threads\n", problems, work.size(), jobs);
  std::fflush(stdout);

  std::atomic<size_t> next{0};
  std::atomic<int> clean{0}, slow_first{0}, slow_later{0}, errors{0};
  std::mutex out;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < work.size();) {
      const Job& j = work[i];
      try {
        const CompiledKernel k = compile_kernel(generate_kernel(j.spec));
        if (!k.resources.slow_path()) {
          ++clean;
          continue;
        }
        ++(j.rank == 0 ? slow_first : slow_later);
        std::lock_guard<std::mutex> lock(out);
        std::printf("slow path (%s), rank %d: %s (m %lld, groups %lld)\n", k.resources.slow_path_reason(), j.rank,
                    j.spec.slug().c_str(), static_cast<long long>(j.problem.m),
                    static_cast<long long>(j.problem.groups));
      } catch (const std::exception& e) {
        ++errors;
        std::lock_guard<std::mutex> lock(out);
        std::printf("compile error, rank %d: %s: %s\n", j.rank, j.spec.slug().c_str(), e.what());
      }
      std::fflush(stdout);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  std::printf("%zu kernels: %d clean, %d slow first choices, %d slow later candidates, %d compile errors; "
              "%d problems without a config\n",
              work.size(), clean.load(), slow_first.load(), slow_later.load(), errors.load(), unplanned);
  return errors == 0 && slow_first == 0 && unplanned == 0 ? 0 : 1;
}
