// fp8gemm: the command-line tool (prewarm the kernel cache, tune, check a GPU, bench,
// show setup). Exit codes: 0 success; 1 error (message on stderr); 2 bad command line;
// 3 `check` found wrong results (or `bench` found fp8gemm and cuBLASLt disagreeing);
// 4 no sm_90 GPU for `check` (without --skip-without-gpu), `bench`, `tune`, `prewarm --tune`.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench_command.hpp"
#include "cli/check_command.hpp"
#include "cli/progress.hpp"
#include "common/shape_file.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "fp8gemm/version.hpp"

namespace {

// Integer options are read as decimal numbers. (CLI11 converts with base 0: "0132" would be
// octal 90 and "0x10" hex 16; and its range check calls "4x" out of range.) Leading zeros
// are dropped; anything but an optional sign and digits is refused by name. `unsigned_64`:
// no sign, and at most 2^64 - 1 (the seeds: CLI11 would wrap -1 and larger values).
CLI::Validator decimal(bool unsigned_64 = false) {
  return CLI::Validator(
      [unsigned_64](std::string& value) -> std::string {
        const bool sign = !value.empty() && (value[0] == '+' || (!unsigned_64 && value[0] == '-'));
        const size_t digits = sign ? 1 : 0;
        if (digits == value.size() || value.find_first_not_of("0123456789", digits) != std::string::npos)
          return fmt::format("'{}' is not a {}decimal integer", value, unsigned_64 ? "non-negative " : "");
        const size_t first = std::min(value.find_first_not_of('0', digits), value.size() - 1);
        value = (value[0] == '-' ? "-" : "") + value.substr(first);
        if (unsigned_64) {
          uint64_t parsed = 0;
          const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
          if (ec != std::errc() || end != value.data() + value.size())
            return fmt::format("{} is more than {}, the largest seed", value, UINT64_MAX);
        }
        return "";
      },
      "", "DECIMAL");
}

// Why a results file cannot be written at `path` ("" if it can): checked before a run, so
// that a long bench does not end with its results lost.
std::string unwritable(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "it is a directory";
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) return "there is no directory " + parent.string();
  if (fs::exists(path, ec) ? ::access(path.c_str(), W_OK) != 0 : ::access(parent.c_str(), W_OK) != 0)
    return std::strerror(errno);
  return "";
}

int run_info() {
  const fp8gemm::RuntimeInfo info = fp8gemm::runtime_info();
  fmt::print("fp8gemm {}\n", info.library_version);
  fmt::print("NVRTC        {}\n", info.nvrtc_version);
  fmt::print("cache dir    {}\n", info.cache_dir);
  fmt::print("cache state  {}\n", info.cache_state);
  fmt::print("driver       {}\n", info.driver);
  fmt::print("settings\n");
  for (const fp8gemm::Setting& st : info.settings)
    fmt::print("  {:<20} {:<28} ({})\n", st.name, st.value, st.source);
  if (info.devices.empty()) fmt::print("devices      none\n");
  for (const fp8gemm::DeviceInfo& d : info.devices)
    fmt::print("device {}     {} (sm_{}{}, {} SMs, {:.1f} GiB){}\n", d.ordinal, d.name, d.cc_major, d.cc_minor,
               d.sm_count, double(d.memory_bytes) / (1 << 30), d.supported ? "" : "  [not supported: needs sm_90]");
  return 0;
}

// Every shape of a shape file as the library plans it: the dense and weight-gradient shapes,
// the grouped ones at their typical size (contiguous: every expert at expected_m rows,
// segments padded; masked: groups x expected_m; k-grouped: every group at expected_k).
// `what` names the command in the note about sections this version does not read.
std::vector<fp8gemm::GemmShape> all_shapes(const std::string& path, const char* what) {
  const fp8gemm::host::ShapeFile file = fp8gemm::host::read_shape_file(path);
  std::vector<fp8gemm::GemmShape> all = file.dense;
  all.insert(all.end(), file.wgrad.begin(), file.wgrad.end());
  for (const fp8gemm::host::GroupedShape& g : file.grouped) all.push_back(fp8gemm::host::prewarm_shape(g));
  for (const fp8gemm::host::KGroupedShape& g : file.k_grouped) all.push_back(fp8gemm::host::prewarm_shape(g));
  return all;
}

int run_prewarm(const std::vector<fp8gemm::GemmShape>& all, int jobs, int sms, bool quiet, bool b_constant) {
  fp8gemm::PrewarmOptions options;
  options.jobs = jobs;
  options.num_sms = sms;
  options.b_constant = b_constant;
  // The kernel count is known once planning is done; the first callback sizes the bar.
  std::unique_ptr<fp8gemm::cli::Progress> progress;
  options.on_progress = [&](const fp8gemm::PrewarmProgress& p) {
    if (!progress) progress = std::make_unique<fp8gemm::cli::Progress>("prewarm", p.total, quiet);
    progress->step(p.done, p.kernel, p.source, p.elapsed_s);
  };
  const fp8gemm::PrewarmReport r = fp8gemm::prewarm(all, options);
  if (progress) progress->finish();
  const fp8gemm::RuntimeInfo info = fp8gemm::runtime_info();
  fmt::print("prewarm: {} shapes -> {} kernels ({} compiled, {} already on disk, {} in memory) in {:.1f} s, "
             "planned for {} SMs; cache {} [{}]\n",
             r.shapes, r.kernels, r.compiled, r.from_disk, r.from_memory, r.seconds, r.num_sms, info.cache_dir,
             info.cache_state);
  if (r.compiled_and_skipped > 0) {
    // Saved with the others, unless the cache could not keep those.
    const bool saved = r.not_saved == 0 && info.cache_state.rfind("read-write", 0) == 0;
    fmt::print("prewarm: {} more candidate kernel{} compiled and passed over by the planner (local memory or "
               "serialized wgmma){}\n",
               r.compiled_and_skipped, r.compiled_and_skipped == 1 ? " was" : "s were",
               saved ? (r.compiled_and_skipped == 1 ? "; it is in the cache too" : "; they are in the cache too") : "");
  }
  if (r.not_saved > 0) {
    fmt::print(stderr, "prewarm: {} of {} kernels are not saved in the disk cache ({}); processes that start later "
                       "will compile them again\n",
               r.not_saved, r.kernels, r.not_saved_reason);
    return 1;
  }
  return 0;
}

// cache list | verify | stats | clear. Exit codes: 0; 1 when clear could not remove a file, or the disk cache is off;
// 3 when verify finds anything the library cannot use or leftovers (see cache/README.md).
int run_cache(const std::string& action, bool kernels_only, bool tuning_only, bool stale) {
  const fp8gemm::RuntimeInfo info = fp8gemm::runtime_info();
  if (info.cache_dir == "(none)") {  // the disk cache is off: no directory to look at
    fmt::print(stderr, "cache {}: there is no cache directory: the cache is {}; unset that setting to {} one\n",
               action, info.cache_state, action == "clear" ? "clear" : "inspect");
    return 1;
  }
  if (action == "clear") {
    const fp8gemm::CacheClearReport r =
        stale ? fp8gemm::clear_stale_cache() : fp8gemm::clear_cache(!tuning_only, !kernels_only);
    if (stale)
      fmt::print("cache clear --stale: removed {} unusable kernel entries, {} leftover or stray files from {}\n",
                 r.kernels, r.other, info.cache_dir);
    else
      fmt::print("cache clear: removed {} kernels, {} tuning files, {} temporary files from {}\n", r.kernels,
                 r.tuning_files, r.other, info.cache_dir);
    for (const std::string& f : r.failed) fmt::print(stderr, "cache clear: could not remove {}\n", f);
    if (!r.failed.empty()) {
      fmt::print(stderr, "cache clear: {} file{} not removed\n", r.failed.size(), r.failed.size() == 1 ? "" : "s");
      return 1;
    }
    return 0;
  }
  const std::vector<fp8gemm::CachedKernel> files = fp8gemm::cached_kernels();
  size_t entries = 0, unusable = 0, temporaries = 0, leftovers = 0, strays = 0;
  uint64_t bytes = 0;
  for (const fp8gemm::CachedKernel& k : files) {
    if (k.category == "entry") {
      ++entries;
      unusable += k.status != "ok";
      bytes += k.bytes;
    } else if (k.category == "temporary") {
      ++temporaries;
      leftovers += k.stale;
    } else {
      ++strays;
    }
  }
  if (action == "list" || action == "verify") {
    for (const fp8gemm::CachedKernel& k : files)
      if (action == "list" || k.stale)
        fmt::print("{:<60} {:>8} B  {}{}\n", k.kernel, k.bytes,
                   k.category == "entry" || k.status.rfind(k.category + ":", 0) == 0 ? "" : k.category + ": ",
                   k.status);
  }
  fmt::print("cache {}: {} kernels ({:.1f} MiB), {} not usable (recompiled on use); {} temporary files ({} left over "
             "by interrupted writes), {} stray files; directory {} [{}]\n",
             action, entries, double(bytes) / (1 << 20), unusable, temporaries, leftovers, strays, info.cache_dir,
             info.cache_state);
  size_t bad_databases = 0;
  for (const fp8gemm::CachedTuningDatabase& t : fp8gemm::cached_tuning_databases()) {
    const std::string name = std::filesystem::path(t.file).filename().string();
    bad_databases += t.readable ? 0 : 1;
    if (t.readable)
      fmt::print("tuning database {}: {} problems{}, measured on {} ({} SMs), driver {}, NVRTC {}, library {}{}\n", name,
                 t.problems,
                 t.status == "ok" && t.problems_stale > 0
                     ? fmt::format(" ({} not used by this build: timed with a kernel that now compiles differently, "
                                   "against another first choice of the planner, or before entries recorded either; "
                                   "the heuristic plans them until `fp8gemm tune` times them again)",
                                   t.problems_stale)
                     : "",
                 t.gpu, t.sms, t.driver, t.nvrtc, t.library, t.status == "ok" ? "" : "; " + t.status);
    else
      fmt::print("tuning database {}: {}\n", name, t.status);
  }
  if (action == "verify" && unusable + leftovers + strays + bad_databases > 0) {
    fmt::print(stderr,
               "cache verify: {} unusable kernel entries, {} leftover temporaries, {} stray files, {} unreadable tuning "
               "databases (`fp8gemm cache clear --stale` removes all but the databases)\n",
               unusable, leftovers, strays, bad_databases);
    return 3;
  }
  return 0;
}

// The kind of a shape in the tune table: "forward", "wgrad", or the grouped kind with its
// groups ("masked x32").
std::string kind_label(const fp8gemm::GemmShape& s) {
  switch (s.kind) {
    case fp8gemm::GemmKind::Forward: return "forward";
    case fp8gemm::GemmKind::WeightGradient: return "wgrad";
    case fp8gemm::GemmKind::GroupedContiguous: return fmt::format("contig x{}", s.groups);
    case fp8gemm::GemmKind::GroupedMasked: return fmt::format("masked x{}", s.groups);
    case fp8gemm::GemmKind::KGroupedWeightGradient: return fmt::format("k-grp x{}", s.groups);
  }
  return "?";
}

// The first sm_90 device, if any (the one `tune` times on, as `check` and `bench` run on it).
std::optional<fp8gemm::DeviceInfo> first_sm90_gpu() {
  for (const fp8gemm::DeviceInfo& d : fp8gemm::runtime_info().devices)
    if (d.supported) return d;
  return std::nullopt;
}

bool have_sm90_gpu() { return first_sm90_gpu().has_value(); }

// Times the candidates of every shape on the GPU and stores the winners in the tuning
// database; prints heuristic vs tuned per shape.
int run_tune(const std::vector<fp8gemm::GemmShape>& shapes, int candidates, int jobs, bool quiet) {
  const std::optional<fp8gemm::DeviceInfo> device = first_sm90_gpu();
  if (!device) {
    fmt::print(stderr, "tune: no sm_90 GPU; tuning times kernels on the GPU (prewarm compiles without one)\n");
    return 4;
  }
  // tune() times on the current device: the first sm_90 one, not device 0 whatever it is.
  if (const cudaError_t e = cudaSetDevice(device->ordinal); e != cudaSuccess) {
    fmt::print(stderr, "tune: cudaSetDevice({}) failed: {}\n", device->ordinal, cudaGetErrorString(e));
    return 1;
  }
  if (!quiet) fmt::print("tune: on device {} ({})\n", device->ordinal, device->name);
  fp8gemm::TuneOptions options;
  options.candidates = candidates;
  options.jobs = jobs;
  // The count of distinct problems is known once tune() has planned them; the first callback
  // sizes the bar.
  std::unique_ptr<fp8gemm::cli::Progress> progress;
  options.on_progress = [&](const fp8gemm::TuneProgress& p) {
    if (!progress) progress = std::make_unique<fp8gemm::cli::Progress>("tune", p.total, quiet);
    progress->step(p.done, fmt::format("{} {}x{}x{}", kind_label(p.shape), p.shape.m, p.shape.n, p.shape.k), p.kernel,
                   p.elapsed_s);
  };
  const std::vector<fp8gemm::TuneResult> results = fp8gemm::tune(shapes, options);
  if (progress) progress->finish();
  fmt::print("{:>10} {:>6} {:>6} {:>6} | {:>10} {:>10} {:>7} | {}\n", "kind", "M", "N", "K", "heuristic", "tuned",
             "gain", "tuned kernel (heuristic's)");
  double log_gain = 0;
  for (const fp8gemm::TuneResult& r : results) {
    fmt::print("{:>10} {:>6} {:>6} {:>6} | {:>8.1f}us {:>8.1f}us {:>6.1f}% | {}{}\n", kind_label(r.shape), r.shape.m,
               r.shape.n, r.shape.k, r.heuristic_us, r.tuned_us, 100.0 * (r.heuristic_us / r.tuned_us - 1.0),
               r.tuned_kernel, r.tuned_kernel == r.heuristic_kernel ? "" : " (" + r.heuristic_kernel + ")");
    log_gain += std::log(r.heuristic_us / r.tuned_us);
  }
  if (!results.empty())
    fmt::print("tune: {} problems, geometric-mean gain over the heuristic {:.1f}%; database in {}/tuning\n",
               results.size(), 100.0 * (std::exp(log_gain / double(results.size())) - 1.0),
               fp8gemm::runtime_info().cache_dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fp8gemm: JIT-compiled FP8 block-scaled GEMM kernels for NVIDIA Hopper.\n"
      "Kernels are compiled with NVRTC on first use and cached on disk; `prewarm` fills the\n"
      "cache ahead of time (no GPU needed), `check` runs and verifies a GEMM on the GPU."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("fp8gemm ") + FP8GEMM_VERSION_STRING, "Print the version and exit");
  std::string cache_dir;
  bool verbose = false;
  app.add_option("--cache-dir", cache_dir, "Kernel cache directory (default: $FP8GEMM_CACHE_DIR, "
                                          "$XDG_CACHE_HOME/fp8gemm or ~/.cache/fp8gemm)");
  app.add_flag("-v,--verbose", verbose, "Log each compile (FP8GEMM_LOG_LEVEL=info)");

  CLI::App* info = app.add_subcommand("info", "Show versions, the cache directory and the GPUs found");

  CLI::App* prewarm = app.add_subcommand("prewarm", "Compile the kernels a shape set needs into the cache");
  std::string shapes;
  int jobs = 0, sms = 0;
  bool quiet = false;
  prewarm->add_option("--shapes", shapes, "Shape set (JSON), e.g. shapes/deepseek-v3.json")->required()->check(CLI::ExistingFile);
  prewarm->add_option("-j,--jobs", jobs, "Compile threads; 0 (the default) = one per hardware thread")
      ->transform(decimal())
      ->check(CLI::Range(0, 1024));
  prewarm->add_option("--sms", sms, "Plan for this many SMs; 0 (the default) = the GPU's, else 132 (H100/H200 SXM)")
      ->transform(decimal())
      ->check(CLI::Range(0, 1024));
  prewarm->add_flag("-q,--quiet", quiet, "No progress output");
  bool prewarm_b_constant = false;
  prewarm->add_flag("--b-constant", prewarm_b_constant,
                    "Also build the kernels gemm_fp8_nt runs with GemmOptions::b_constant (dense, M <= 128)");
  bool prewarm_tune = false;
  prewarm->add_flag("--tune", prewarm_tune,
                    "Then time the candidates of every shape on the GPU and store the winners in the tuning "
                    "database (needs an sm_90 GPU)");
  int candidates = 8;
  CLI::Option* prewarm_candidates =
      prewarm->add_option("--candidates", candidates, "With --tune: configs timed per shape")
          ->transform(decimal())
          ->check(CLI::Range(1, 64))
          ->capture_default_str();

  CLI::App* cache = app.add_subcommand("cache", "Inspect or clear the kernel cache and tuning databases");
  cache->require_subcommand(1);
  CLI::App* cache_list = cache->add_subcommand("list", "List cached kernels with their size and status");
  CLI::App* cache_verify = cache->add_subcommand(
      "verify", "Check every cached kernel and tuning database (exit 3 if any is unusable, or leftovers are found)");
  CLI::App* cache_stats = cache->add_subcommand("stats", "Count the cached kernels and their size");
  CLI::App* cache_clear = cache->add_subcommand("clear", "Delete cached kernels and tuning databases");
  bool kernels_only = false, tuning_only = false, stale_only = false;
  cache_clear->add_flag("--kernels-only", kernels_only, "Keep the tuning databases");
  cache_clear->add_flag("--tuning-only", tuning_only, "Keep the compiled kernels");
  cache_clear->add_flag("--stale", stale_only,
                        "Remove only what no lookup of this library uses: corrupt, misnamed or stale entries, "
                        "temporary files older than 60 s, stray files");

  CLI::App* tune = app.add_subcommand(
      "tune", "Time candidate kernels for every shape of a set on the GPU and store the winners (needs an sm_90 GPU)");
  std::string tune_shapes;
  tune->add_option("--shapes", tune_shapes, "Shape set (JSON)")->required()->check(CLI::ExistingFile);
  tune->add_option("--candidates", candidates, "Configs timed per shape (the heuristic's choice is always one)")
      ->transform(decimal())
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  tune->add_option("-j,--jobs", jobs, "Compile threads; 0 (the default) = one per hardware thread")
      ->transform(decimal())
      ->check(CLI::Range(0, 1024));
  tune->add_flag("-q,--quiet", quiet, "No progress output");

  CLI::App* check = app.add_subcommand("check", "Run one GEMM on the GPU and compare it with an fp64 reference");
  fp8gemm::cli::CheckOptions check_options;
  check->add_option("-m", check_options.m, "M")
      ->transform(decimal())
      ->check(CLI::Range(int64_t(1), fp8gemm::kMaxDimension))
      ->capture_default_str();
  check->add_option("-n", check_options.n, "N (multiple of 8)")
      ->transform(decimal())
      ->check(CLI::Range(int64_t(1), fp8gemm::kMaxDimension))
      ->capture_default_str();
  check->add_option("-k", check_options.k, "K (multiple of 16)")
      ->transform(decimal())
      ->check(CLI::Range(int64_t(1), fp8gemm::kMaxK1D2D))
      ->capture_default_str();
  check->add_option("--seed", check_options.seed, "Random seed")
      ->transform(decimal(true));
  std::string check_config;
  check->add_option("--config", check_config,
                    "Run this kernel config instead of the library's choice (same format as bench --config)");
  check->add_flag("--b-constant", check_options.b_constant,
                  "Call with GemmOptions::b_constant (at M <= 128 the kernel may load B before the previous kernel ends)");
  check->add_flag("--expect-warm", check_options.expect_warm,
                  "Fail (exit 1) if the first call had to compile or tune (checks a shipped cache and database)");
  check->add_flag("--skip-without-gpu", check_options.skip_without_gpu,
                  "Exit 0 with a note when there is no sm_90 GPU (for scripts that also run on build machines)");

  CLI::App* bench = app.add_subcommand(
      "bench", "Time gemm_fp8_nt (or gemm_fp8_nt_wgrad with --wgrad, the grouped GEMMs with --grouped) and "
               "cuBLASLt's block-scaled FP8 GEMM on a shape set (needs an sm_90 GPU)");
  fp8gemm::cli::BenchOptions bench_options;
  bench->add_option("--shapes", bench_options.shapes, "Shape set (JSON)")->required()->check(CLI::ExistingFile);
  bench->add_option("--replays", bench_options.replays, "Timed graph replays per shape (median reported)")
      ->transform(decimal())
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  bench->add_option("--json", bench_options.json, "Write the results as JSON");
  bench->add_option("--csv", bench_options.csv, "Write the results as CSV");
  bool no_cublas = false;
  bench->add_flag("--no-cublas", no_cublas, "Do not run cuBLASLt");
  CLI::Option* isolated_flag = bench->add_flag("--isolated", bench_options.isolated,
                  "Time isolated calls instead of sustained ones: each call alone after an L2 flush and a 2 ms "
                  "pause (median of max(20, 2 x replays) calls), so that the card stays below its power limit "
                  "(both libraries)");
  bench->add_option("--flush-mb", bench_options.flush_mb,
                    "With --isolated: MB written by the memset before each call (L2 flush; default 256)")
                        ->transform(decimal())
      ->check(CLI::Range(64, 16384))
      ->needs(isolated_flag);
  bench->add_option("--pause-ms", bench_options.pause_ms,
                    "With --isolated: idle milliseconds after each call (default 2; 0 = the next flush follows at once)")
                        ->transform(decimal())
      ->check(CLI::Range(0, 1000))
      ->needs(isolated_flag);
  bench->add_flag("--kernel-time", bench_options.kernel_time,
                  "With --isolated: time each call by the summed durations of its kernels as the CUDA profiling "
                  "interface (CUPTI, libcupti.so.13 opened at run time) records them, as profiler-based harnesses "
                  "do, instead of by events around it (the JSON keeps both)")
      ->needs(isolated_flag);
  bench->add_option("--seed", bench_options.seed, "Random seed")
      ->transform(decimal(true));
  bench->add_flag("--quantize", bench_options.quantize,
                  "Time the quantization kernels (bandwidth) instead of the GEMMs, on [M, K] of the shapes "
                  "with M >= 4096 and on 4096x7168 and 16384x7168");
  bench->add_flag("--wgrad", bench_options.wgrad,
                  "Time gemm_fp8_nt_wgrad on the shape set's \"wgrad\" shapes instead: D fp32 += A x B^T in place "
                  "(C = D), 1x128 scales on both operands, against cuBLASLt with VEC128 scales on both, fp32 D and "
                  "beta 1 (results must agree to 1e-3)");
  bench->add_flag("--grouped", bench_options.grouped,
                  "Time gemm_fp8_nt_grouped_contiguous, gemm_fp8_nt_grouped_masked and "
                  "gemm_fp8_nt_wgrad_k_grouped on the shape set's \"m_grouped_contiguous\", \"m_grouped_masked\" "
                  "and \"k_grouped\" shapes instead (rows or columns per group as the set lists them, else drawn in "
                  "[0.7, 1.3] x expected, seeded), against a loop of per-group cuBLASLt GEMMs (results must agree to 1e-2 on the real "
                  "rows, 1e-3 for the fp32 k-grouped output)");
  bench->add_flag("--b-constant", bench_options.b_constant,
                  "Call gemm_fp8_nt with GemmOptions::b_constant (B is not written between calls): at M <= 128 the "
                  "kernels start loading B before the previous call has finished");
  std::vector<std::string> bench_configs;
  bench->add_option("--config", bench_configs,
                    "Time this kernel config instead of the library's choice: "
                    "bm,bn,stages[,group_n[,multicast[,tma_store[,split_k]]]] (multicast 0 none, 1 share A, 2 share B; "
                    "tma_store 0 direct, 1 slab buffers, 2 one buffer, default 1 when bn % 64 == 0; split_k 1 or 2; with --wgrad "
                    "and for --grouped's k-grouped shapes: bm,bn,stages[,group_n], the weight-gradient kernel having none of the "
                    "others); repeat to compare several; a config a form's kernel does not take is reported as skipped");

  // The first word that is not an option (or an option's value) must be a command, and the
  // word after `cache` one of its commands: say so plainly rather than "A subcommand is required".
  {
    const CLI::App* parent = &app;
    std::string parent_name = "fp8gemm";
    bool help_or_version = false;
    for (int i = 1; i < argc && parent != nullptr; ++i) {
      const std::string word = argv[i];
      if (word == "--cache-dir") {
        ++i;
        continue;
      }
      if (word == "-h" || word == "--help" || word == "--version") help_or_version = true;
      if (!word.empty() && word[0] == '-') continue;
      const CLI::App* found = nullptr;
      std::string names;
      for (const CLI::App* sub : parent->get_subcommands({})) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
        if (sub->get_name() == word) found = sub;
      }
      if (found == nullptr) {
        fmt::print(stderr, "{}: unknown command '{}' (commands: {}; see --help)\n", parent_name, word, names);
        return 2;
      }
      parent = found->get_subcommands({}).empty() ? nullptr : found;
      parent_name = word;
    }
    if (parent != nullptr && !help_or_version) {
      std::string names;
      for (const CLI::App* sub : parent->get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
      fmt::print(stderr, "{}: a command is required: {} (see --help)\n", parent_name, names);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; every command-line mistake exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  bench_options.cublas = !no_cublas;
  if (app.get_option("--cache-dir")->count() > 0 && cache_dir.empty()) {
    fmt::print(stderr, "fp8gemm: --cache-dir needs a directory (it was empty)\n");
    return 2;
  }
  if (prewarm_candidates->count() > 0 && !prewarm_tune) {
    fmt::print(stderr, "prewarm: --candidates applies with --tune only (prewarm alone times nothing)\n");
    return 2;
  }
  if (*check && (check_options.n % 8 != 0 || check_options.k % 16 != 0)) {
    fmt::print(stderr, "check: N = {} must be a multiple of 8 and K = {} a multiple of 16\n", check_options.n,
               check_options.k);
    return 2;
  }
  if (!check_config.empty()) {
    fp8gemm::KernelConfig config;
    if (!fp8gemm::cli::parse_kernel_config(check_config, &config)) {
      std::fprintf(stderr, "check: --config '%s' is not bm,bn,stages[,group_n[,multicast[,tma_store[,split_k]]]]\n",
                   check_config.c_str());
      return 2;
    }
    check_options.config = config;
  }
  if (check_options.b_constant && check_options.config) {
    fmt::print(stderr, "check: --b-constant applies to the library's own choice of kernel, not to --config\n");
    return 2;
  }
  for (const std::string& text : bench_configs) {
    fp8gemm::KernelConfig config;
    if (!fp8gemm::cli::parse_kernel_config(text, &config)) {
      std::fprintf(stderr, "bench: --config '%s' is not bm,bn,stages[,group_n[,multicast[,tma_store[,split_k]]]] (e.g. 256,128,3,8,1)\n",
                   text.c_str());
      return 2;
    }
    bench_options.configs.push_back(config);
  }
  for (const auto& [option, path] : {std::pair{"--json", bench_options.json}, std::pair{"--csv", bench_options.csv}})
    if (const std::string why = path.empty() ? "" : unwritable(path); !why.empty()) {
      fmt::print(stderr, "bench: {}: cannot write '{}': {}\n", option, path, why);
      return 2;
    }
  if (bench_options.wgrad && bench_options.quantize) {
    fmt::print(stderr, "bench: --wgrad and --quantize exclude each other\n");
    return 2;
  }
  if (bench_options.grouped && (bench_options.wgrad || bench_options.quantize)) {
    fmt::print(stderr, "bench: --grouped excludes --wgrad and --quantize\n");
    return 2;
  }
  if (bench_options.quantize && !bench_options.configs.empty()) {
    fmt::print(stderr, "bench: --config picks GEMM kernels; the quantization kernels of --quantize take none\n");
    return 2;
  }
  if (bench_options.b_constant && (!bench_options.configs.empty() || bench_options.wgrad || bench_options.grouped ||
                                   bench_options.quantize)) {
    fmt::print(stderr, "bench: --b-constant applies to the dense GEMM with the library's own choice of kernel only "
                       "(not with --config, --wgrad, --grouped or --quantize)\n");
    return 2;
  }
  if (!cache_dir.empty()) ::setenv("FP8GEMM_CACHE_DIR", cache_dir.c_str(), 1);
  if (verbose) ::setenv("FP8GEMM_LOG_LEVEL", "info", 1);

  try {
    if (*info) return run_info();
    if (*prewarm) {
      if (prewarm_tune && !have_sm90_gpu()) {
        fmt::print(stderr, "prewarm --tune: no sm_90 GPU; run prewarm without --tune to compile only\n");
        return 4;
      }
      const std::vector<fp8gemm::GemmShape> all = all_shapes(shapes, "prewarm");
      const int status = run_prewarm(all, jobs, sms, quiet, prewarm_b_constant);
      if (status != 0 || !prewarm_tune) return status;
      return run_tune(all, candidates, jobs, quiet);
    }
    if (*cache) {
      if (kernels_only && tuning_only) {
        fmt::print(stderr, "cache clear: --kernels-only and --tuning-only exclude each other\n");
        return 2;
      }
      if (stale_only && (kernels_only || tuning_only)) {
        fmt::print(stderr, "cache clear: --stale excludes --kernels-only and --tuning-only\n");
        return 2;
      }
      return run_cache(*cache_list ? "list" : *cache_verify ? "verify" : *cache_stats ? "stats" : "clear",
                       kernels_only, tuning_only, stale_only);
    }
    if (*tune) return run_tune(all_shapes(tune_shapes, "tune"), candidates, jobs, quiet);
    if (*check) return fp8gemm::cli::run_check(check_options);
    if (*bench) return fp8gemm::cli::run_bench(bench_options);
  } catch (const fp8gemm::Error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "fp8gemm: {}\n", e.what());
    return 1;
  }
  return 0;
}
