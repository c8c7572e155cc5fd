#include "tuning/settings.hpp"

#include <atomic>

#include "util/env.hpp"
#include "util/log.hpp"

namespace fp8gemm::detail {
namespace {

std::atomic<int>& mode_storage() {
  static std::atomic<int> mode{env().tuning_mode};
  return mode;
}

std::atomic<bool>& cache_only_storage() {
  static std::atomic<bool> on{env().cache_only};
  return on;
}

}  // namespace

TuningMode current_tuning_mode() { return static_cast<TuningMode>(mode_storage().load(std::memory_order_relaxed)); }
void store_tuning_mode(TuningMode mode) { mode_storage().store(static_cast<int>(mode)); }
bool current_cache_only() { return cache_only_storage().load(std::memory_order_relaxed); }
void store_cache_only(bool on) { cache_only_storage().store(on); }

}  // namespace fp8gemm::detail
