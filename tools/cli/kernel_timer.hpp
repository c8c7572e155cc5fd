#pragma once

// Kernel durations as a profiler reports them: the CUDA profiling interface (CUPTI, opened
// at run time, so the tool runs without it) records each kernel's start and end on the
// device. `bench --kernel-time` times calls this way, the way profiler-based harnesses
// (torch.profiler, DeepGEMM's bench_kineto) do: the launch gap and the events' own cost
// are not counted, and a call of several kernels counts the sum of their durations.

#include <string>

namespace fp8gemm::cli {

class KernelTimer {
 public:
  // The process's timer, recording from the first call on; nullptr (and `why`) when CUPTI
  // cannot be opened or refuses to record kernels.
  static KernelTimer* instance(std::string* why);

  // The summed duration (us) and count of the kernels that ran since the last take, all
  // streams. The caller synchronizes first: only finished kernels are recorded.
  double take_us(int* kernels);

  // Stops recording while it lives (recording costs each launch host time: the host cost of
  // a call is measured without it).
  class Paused {
   public:
    explicit Paused(KernelTimer* timer);
    ~Paused();
    Paused(const Paused&) = delete;
    Paused& operator=(const Paused&) = delete;

   private:
    KernelTimer* timer_;
  };

 private:
  KernelTimer() = default;
};

}  // namespace fp8gemm::cli
