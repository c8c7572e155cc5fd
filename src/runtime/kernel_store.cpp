#include "runtime/kernel_store.hpp"

#include "cache/cache_key.hpp"
#include "codegen/gemm_codegen.hpp"
#include "compiler/nvrtc_compiler.hpp"
#include "runtime/stats.hpp"
#include "util/error.hpp"
#include "util/log.hpp"

namespace fp8gemm::detail {

namespace {

// setmaxnreg moves registers between warpgroups inside the CTA's allocation, which is
// fixed at launch by the count ptxas chose. The kernel is only usable if that count lets
// the math warpgroups grow to their target (and is not already above it).
void check_register_budget(const KernelSpec& spec, const CompiledKernel& k) {
  if (!k.resources.parsed || !is_gemm(spec.kind)) return;
  const KernelLayout l = kernel_layout(spec);
  const int at_entry = k.resources.registers;
  const int needed = l.producer_registers * 128 + l.math_registers * (l.threads - 128);
  if (at_entry > l.math_registers || at_entry * l.threads < needed)
    fail(ErrorCode::CompileFailed,
         "kernel {} was compiled with {} registers per thread at entry; its register plan ({} for the "
         "producer, {} for the math warpgroups) needs between {} and {}. This NVRTC version allocates "
         "registers differently; please report it",
         spec.slug(), at_entry, l.producer_registers, l.math_registers, (needed + l.threads - 1) / l.threads,
         l.math_registers);
}

}  // namespace

Counters& counters() {
  static Counters c;
  return c;
}

std::shared_ptr<const KernelBinary> KernelStore::get(const KernelSpec& spec, KernelSource* source,
                                                     bool may_compile) {
  using Ptr = std::shared_ptr<const KernelBinary>;
  for (;;) {
    std::promise<Ptr> promise;
    std::shared_future<Ptr> existing;
    bool builder = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = kernels_.find(spec);
      if (it != kernels_.end()) {
        existing = it->second;
      } else {
        kernels_.emplace(spec, promise.get_future().share());
        builder = true;
      }
    }
    if (!builder) {
      // Built, or being built by another thread: wait for it (rethrows its failure), except
      // that a cache-only build that found no entry does not speak for a request that may
      // compile: that one builds it itself (the failed build's entry is gone by then).
      if (source != nullptr) *source = KernelSource::Memory;
      try {
        return existing.get();
      } catch (const Error& e) {
        if (!may_compile || e.code() != ErrorCode::NotCached) throw;
      }
      continue;
    }
    try {
      Ptr binary = build(spec, source, may_compile);
      promise.set_value(binary);
      return binary;
    } catch (...) {
      {
        // Removed before the failure is published: a request that sees the failure and tries
        // again finds no entry (a later request tries again too).
        std::lock_guard<std::mutex> lock(mutex_);
        kernels_.erase(spec);
      }
      promise.set_exception(std::current_exception());
      throw;
    }
  }
}

void KernelStore::persist(const KernelSpec& spec) {
  const std::shared_ptr<const KernelBinary> binary = get(spec);
  disk_.store(CacheEntry{binary->key, generate_kernel(spec).slug, binary->lowered_name, binary->resources, binary->cubin});
}

std::shared_ptr<const KernelBinary> KernelStore::build(const KernelSpec& spec, KernelSource* source,
                                                       bool may_compile) {
  const GeneratedKernel generated = generate_kernel(spec);
  auto binary = std::make_shared<KernelBinary>();
  binary->spec = spec;
  binary->key = cache_key(cache_key_inputs(generated));
  if (std::optional<CacheEntry> entry = disk_.load(generated.slug, binary->key)) {
    counters().disk_hits.fetch_add(1);
    binary->cubin = std::move(entry->cubin);
    binary->lowered_name = std::move(entry->lowered_name);
    binary->resources = entry->resources;
    if (source != nullptr) *source = KernelSource::Disk;
    log(LogLevel::Debug, "kernel {} found in the disk cache", generated.slug);
    return binary;
  }
  if (!may_compile)
    fail(ErrorCode::NotCached,
         "kernel {} is not in the kernel cache ({}) and cache-only mode is on (FP8GEMM_CACHE_ONLY / "
         "fp8gemm::set_cache_only): compile it beforehand with `fp8gemm prewarm --shapes <shape set>` "
         "using the same cache directory",
         generated.slug, disk_.dir().empty() ? std::string("memory only") : disk_.dir());
  CompiledKernel compiled = compile_kernel(generated);
  counters().kernels_compiled.fetch_add(1);
  check_register_budget(spec, compiled);
  binary->cubin = std::move(compiled.cubin);
  binary->lowered_name = std::move(compiled.lowered_name);
  binary->resources = compiled.resources;
  binary->resources.warnings.clear();  // logged once at compile; the notes are kept
  disk_.store(CacheEntry{binary->key, generated.slug, binary->lowered_name, binary->resources, binary->cubin});
  if (source != nullptr) *source = KernelSource::Compiled;
  return binary;
}

}  // namespace fp8gemm::detail
