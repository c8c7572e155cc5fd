#include "tuning/entry_stamp.hpp"

#include <exception>

#include <fmt/format.h>

#include "cache/cache_key.hpp"
#include "codegen/gemm_codegen.hpp"
#include "heuristics/heuristics.hpp"
#include "tuning/tuner.hpp"

namespace fp8gemm::detail {
namespace {

// The planner's view of the device a database was measured on (sm_90 parts share the
// shared-memory limit; the SM count is the database's).
DeviceTraits traits_of(const TuningMetadata& device) {
  DeviceTraits t;
  if (device.sm_count > 0) t.num_sms = device.sm_count;
  return t;
}

// "" where the problem cannot be planned (an entry read from a file may name any problem).
std::string planned_slug(const GemmProblem& problem, const TuningMetadata& device) {
  try {
    const std::vector<KernelSpec> first = tuning_candidates(problem, traits_of(device), 1);
    return first.empty() ? std::string() : first.front().slug();
  } catch (const std::exception&) {
    return "";
  }
}

std::string key_of(const KernelSpec& spec) {
  try {
    return kernel_cache_key(spec);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

GemmProblem tuned_problem(const TunedEntry& e) { return {e.spec.kind, e.m_measured, e.spec.n, e.k, e.groups}; }

void stamp_tuned_entry(TunedEntry& entry, const TuningMetadata& device) {
  entry.planned = planned_slug(tuned_problem(entry), device);
  entry.kernel_key = key_of(entry.spec);
}

std::string tuned_entry_stale_reason(const TunedEntry& entry, const TuningMetadata& device) {
  if (entry.kernel_key.empty() || entry.planned.empty())
    return fmt::format("{} was tuned by a library that did not record its kernel", entry.spec.slug());
  if (key_of(entry.spec) != entry.kernel_key)
    return fmt::format("{} compiles differently in this build than when it was timed", entry.spec.slug());
  const std::string planned = planned_slug(tuned_problem(entry), device);
  if (planned.empty()) return fmt::format("this build cannot plan {}", describe(tuned_problem(entry)));
  if (planned != entry.planned)
    return fmt::format("the planner now picks {} for {} where the entry was timed against {}", planned,
                       describe(tuned_problem(entry)), entry.planned);
  return "";
}

}  // namespace fp8gemm::detail
