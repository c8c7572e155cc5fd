#pragma once

// The GPU's SM clock as the driver's management library (NVML, opened at run time, so the
// tool runs without it) reports it. `bench` reads it after every timed call and reports the
// median per row: under FP8 load the card's clock follows its power draw, so two times of one
// kernel can differ by the clock alone. The reading comes after each call, not from inside it
// (isolated calls: it does not follow the kernel's own clock, see the README), so it tells the
// card's power state, not the kernel's cycles. With it the clock's event reasons: how often the
// power cap (or heat) held the clock down.

#include <string>
#include <vector>

namespace fp8gemm::cli {

class SmClock {
 public:
  // The reader for CUDA device `device` (the first call's: opened once per process);
  // nullptr (and `why`) when NVML cannot be opened or does not know the device.
  static SmClock* instance(int device, std::string* why);

  // What the readings since the last take hold: the clocks in MHz, and of the readings whose
  // clock event reasons NVML gave, how many found the clock held down by the power cap, a
  // thermal limit or a hardware slowdown (not by idleness or an application setting).
  struct Samples {
    std::vector<double> mhz;
    int reasons_read = 0, held = 0;
  };

  // Reads the current SM clock and its event reasons and keeps them (an unreadable clock is
  // not kept; unreadable reasons are not counted).
  void sample();

  // The readings kept since the last take, and forgets them.
  Samples take();

 private:
  SmClock() = default;
  Samples samples_;
};

}  // namespace fp8gemm::cli
