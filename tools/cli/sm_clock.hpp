#pragma once

// The GPU's SM clock as the driver's management library (NVML, opened at run time, so the
// tool runs without it) reports it. `bench` reads it after every timed call and reports the
// median per row: under FP8 load the card's clock follows its power draw, so two times of one
// kernel can differ by the clock alone, and time x clock (cycles) is what compares kernels.

#include <string>
#include <vector>

namespace fp8gemm::cli {

class SmClock {
 public:
  // The reader for CUDA device `device` (the first call's: opened once per process);
  // nullptr (and `why`) when NVML cannot be opened or does not know the device.
  static SmClock* instance(int device, std::string* why);

  // Reads the current SM clock and keeps it (an unreadable clock is not kept).
  void sample();

  // The clocks kept since the last take, in MHz, and forgets them.
  std::vector<double> take();

 private:
  SmClock() = default;
  std::vector<double> samples_;
};

}  // namespace fp8gemm::cli
