// The fp8gemm command line, run as a separate process.

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cache/cache_entry.hpp"
#include "driver/driver_api.hpp"
#include "runtime/planner.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "util/files.hpp"

extern char** environ;

namespace {

using Result = fp8gemm::test::CliResult;
using fp8gemm::test::run_cli;
using fp8gemm::test::write_shapes;

const char* kSmallShapes = R"({"dense": {"m": [1, 200], "nk": [[256, 512], [264, 1024]]}})";

// Distinct kernels the small shape set needs on a 132-SM device (planned the way the
// library plans, compiling into a throw-away memory-only store).
size_t small_kernel_count() {
  using namespace fp8gemm::detail;
  testing::internal::CaptureStderr();
  DiskCache memory_only("");
  testing::internal::GetCapturedStderr();
  KernelStore store(memory_only);
  std::vector<KernelSpec> specs;
  for (int64_t m : {1, 200})
    for (auto nk : {std::pair<int64_t, int64_t>{256, 512}, {264, 1024}}) {
      const GemmProblem problem{KernelKind::Gemm1D2D, m, nk.first, nk.second};
      const KernelSpec s = plan_kernel(problem, DeviceTraits{}, store).spec;
      if (std::find(specs.begin(), specs.end(), s) == specs.end()) specs.push_back(s);
    }
  return specs.size();
}

}  // namespace

TEST(Cli, FourProcessesPrewarmOneDirectory) {
  fp8gemm::test::TempDir dir;
  const std::string shapes = write_shapes(dir.path(), kSmallShapes);
  const std::string cache = dir.path() + "/cache";
  std::vector<pid_t> pids;
  for (int i = 0; i < 4; ++i) {
    std::vector<std::string> args = {FP8GEMM_CLI_PATH, "--cache-dir", cache, "prewarm", "--shapes", shapes,
                                     "--jobs", "2", "--sms", "132", "--quiet"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    ASSERT_EQ(::posix_spawn(&pid, FP8GEMM_CLI_PATH, nullptr, nullptr, argv.data(), environ), 0);
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a prewarm process failed";
  }
  // One valid entry per kernel, no temporary files.
  const auto files = fp8gemm::detail::list_files(cache + "/kernels");
  const size_t kernels = small_kernel_count();
  EXPECT_EQ(files.size(), kernels);
  for (const std::string& f : files) {
    EXPECT_EQ(f.substr(f.size() - 5), ".fp8k") << f;
    const std::string bytes = *fp8gemm::detail::read_file(cache + "/kernels/" + f);
    // The key is in the header; decoding with it verifies size and checksum.
    const size_t at = bytes.find("\"key\":\"") + 7;
    const std::string key = bytes.substr(at, 64);
    std::string why;
    EXPECT_TRUE(fp8gemm::detail::decode_cache_entry(bytes, key, &why)) << f << ": " << why;
    EXPECT_EQ(f.find(key.substr(0, 16)), f.size() - 5 - 16) << "file name carries the key prefix";
  }
  // A fifth run finds everything on disk.
  const Result again = run_cli("--cache-dir " + cache + " prewarm --shapes " + shapes + " --sms 132");
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("(0 compiled, " + std::to_string(kernels) + " already on disk"), std::string::npos)
      << again.output;
}

TEST(Cli, ProgressLinesAndSummary) {
  fp8gemm::test::TempDir dir;
  const std::string shapes = write_shapes(dir.path(), kSmallShapes);
  const Result r = run_cli("--cache-dir " + dir.path() + "/cache prewarm --shapes " + shapes + " --sms 132 -j 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string n = std::to_string(small_kernel_count());
  EXPECT_NE(r.output.find("prewarm [4/4]"), std::string::npos) << r.output;  // one step per shape
  EXPECT_NE(r.output.find("ETA"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("4 shapes -> " + n + " kernels (" + n + " compiled"), std::string::npos) << r.output;
}

TEST(Cli, ArgumentErrors) {
  fp8gemm::test::TempDir dir;
  Result r = run_cli("");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli("prewarm");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--shapes"), std::string::npos) << r.output;
  r = run_cli("prewarm --shapes " + dir.path() + "/missing.json");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli("bogus");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli("prewarm --shapes " + write_shapes(dir.path(), "{ broken"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not valid JSON"), std::string::npos) << r.output;
  r = run_cli("--cache-dir " + dir.path() + "/c prewarm --shapes " +
              write_shapes(dir.path(), R"({"dense": {"mnk": [[4, 250, 512]]}})"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("N % 8"), std::string::npos) << r.output;
  r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("prewarm"), std::string::npos) << r.output;
  r = run_cli("tune");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--shapes"), std::string::npos) << r.output;
  r = run_cli("tune --candidates 0 --shapes " + write_shapes(dir.path(), R"({"dense": {"mnk": [[4, 256, 512]]}})"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // Malformed kernel configs are command-line errors, before any GPU work.
  for (const char* bad : {"256", "256,128", "a,b,c", "256,128,3,8,1,1,2,9", "256,,3", "256,128,-"}) {
    r = run_cli(std::string("check --config ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--config"), std::string::npos) << r.output;
    r = run_cli(std::string("bench --shapes ") + write_shapes(dir.path(), R"({"dense": {"mnk": [[4, 256, 512]]}})") +
                " --config " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
  }
  // --b-constant is for the dense GEMM with the library's choice of kernel.
  const std::string dense = write_shapes(dir.path(), R"({"dense": {"mnk": [[4, 256, 512]]}})");
  for (const char* other : {" --wgrad", " --grouped", " --quantize", " --config 64,64,8"}) {
    r = run_cli("bench --b-constant --shapes " + dense + other);
    EXPECT_EQ(r.exit_code, 2) << other << ": " << r.output;
    EXPECT_NE(r.output.find("--b-constant"), std::string::npos) << r.output;
  }
  // The quantization kernels take no GEMM config.
  r = run_cli("bench --quantize --config 128,128,4 --shapes " + dense);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--config"), std::string::npos) << r.output;
  // The flush and pause of isolated timing: in range, and only with --isolated.
  for (const char* bad : {" --isolated --flush-mb 10", " --isolated --flush-mb 20000", " --isolated --pause-ms -1",
                          " --flush-mb 512", " --pause-ms 0"}) {
    r = run_cli("bench --shapes " + dense + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
  }
  // Kernel-duration timing is a way of timing isolated calls.
  r = run_cli("bench --kernel-time --shapes " + dense);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--kernel-time requires --isolated"), std::string::npos) << r.output;
  r = run_cli("check --b-constant --config 64,64,8");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // prewarm --b-constant also builds the decode variant.
  r = run_cli("--cache-dir " + dir.path() + "/cb prewarm -q --b-constant --sms 132 --shapes " +
              write_shapes(dir.path(), R"({"dense": {"mnk": [[1, 32768, 512]]}})"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 shapes -> 2 kernels"), std::string::npos) << r.output;
}

// cache list / verify / stats / clear on a directory with good, corrupt and tuning files.
TEST(Cli, CacheCommands) {
  fp8gemm::test::TempDir dir;
  const std::string c = "--cache-dir " + dir.path() + "/c ";
  Result r = run_cli(c + "prewarm -q --shapes " + write_shapes(dir.path(), R"({"dense": {"mnk": [[64, 256, 512]]}})"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_cli(c + "cache list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gemm1d2d_n256_k512"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" ok"), std::string::npos) << r.output;
  r = run_cli(c + "cache verify");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  { std::ofstream(dir.path() + "/c/kernels/gemm1d2d_n8_k16_bm64_bn16_s2_g8-0123456789abcdef.fp8k") << "garbage"; }
  r = run_cli(c + "cache verify");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("corrupt"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 not usable"), std::string::npos) << r.output;
  fp8gemm::detail::make_dirs(dir.path() + "/c/tuning");
  { std::ofstream(dir.path() + "/c/tuning/Some_GPU-132sm.json") << "{}"; }
  r = run_cli(c + "cache clear --tuning-only");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0 kernels, 1 tuning files"), std::string::npos) << r.output;
  r = run_cli(c + "cache clear");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("removed 2 kernels"), std::string::npos) << r.output;
  r = run_cli(c + "cache stats");
  EXPECT_NE(r.output.find("0 kernels"), std::string::npos) << r.output;
  r = run_cli(c + "cache");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli(c + "cache clear --kernels-only --tuning-only");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// Tuning times kernels on a GPU: without one, tune and prewarm --tune say so and exit 4
// (prewarm alone compiles).
TEST(Cli, TuneNeedsAGpu) {
  std::string why;
  if (fp8gemm::detail::try_driver(&why) != nullptr) GTEST_SKIP() << "a CUDA driver is present";
  fp8gemm::test::TempDir dir;
  const std::string shapes = write_shapes(dir.path(), R"({"dense": {"mnk": [[4, 256, 512]]}})");
  Result r = run_cli("--cache-dir " + dir.path() + "/c tune --shapes " + shapes);
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("no sm_90 GPU"), std::string::npos) << r.output;
  r = run_cli("--cache-dir " + dir.path() + "/c prewarm --tune --shapes " + shapes);
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("without --tune"), std::string::npos) << r.output;
  // Grouped shapes are tuned too: none is skipped.
  const std::string grouped = write_shapes(
      dir.path(), R"({"m_grouped_masked": {"max_m": 256, "groups_expected_m": [[2, 64]], "nk": [[512, 256]]},
                      "k_grouped": {"groups_m_n_expected_k": [[2, 256, 512, 256]]}})");
  r = run_cli("--cache-dir " + dir.path() + "/c tune --shapes " + grouped);
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_EQ(r.output.find("skipped"), std::string::npos) << r.output;
}

TEST(Cli, InfoAndCheckWithoutGpu) {
  const Result info = run_cli("info");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("cache dir"), std::string::npos) << info.output;
  if (fp8gemm::detail::try_driver(nullptr) != nullptr) GTEST_SKIP() << "a CUDA driver is present";
  const Result check = run_cli("check");
  EXPECT_EQ(check.exit_code, 4) << check.output;
  const Result skip = run_cli("check --skip-without-gpu");
  EXPECT_EQ(skip.exit_code, 0) << skip.output;
  EXPECT_NE(skip.output.find("skipped"), std::string::npos) << skip.output;
  // bench (sustained or --isolated) needs a GPU: exit 4, not a command-line error.
  fp8gemm::test::TempDir dir;
  const std::string shapes = write_shapes(dir.path(), R"({"dense": {"mnk": [[4, 256, 512]]}})");
  for (const char* mode :
       {"", " --isolated", " --isolated --flush-mb 7630 --pause-ms 0", " --isolated --kernel-time --pause-ms 0"}) {
    const Result bench = run_cli("bench --shapes " + shapes + mode);
    EXPECT_EQ(bench.exit_code, 4) << mode << ": " << bench.output;
  }
  // The weight gradient takes --config too (gemm_fp8_nt_wgrad's KernelConfig overload).
  const std::string wgrad = write_shapes(dir.path(), R"({"wgrad": {"mnk": [[256, 256, 512]]}})", "wgrad.json");
  const Result bench = run_cli("bench --wgrad --config 128,128,4 --config 128,192,3,8 --shapes " + wgrad);
  EXPECT_EQ(bench.exit_code, 4) << bench.output;
  EXPECT_EQ(bench.output.find("does not apply"), std::string::npos) << bench.output;
  // So do the grouped GEMMs (their KernelConfig overloads).
  const std::string grouped = write_shapes(
      dir.path(), R"({"m_grouped_contiguous": {"groups_expected_m": [[4, 256]], "nk": [[512, 512]]}})", "grouped.json");
  const Result bench_grouped = run_cli("bench --grouped --config 128,128,4 --config 256,128,3 --shapes " + grouped);
  EXPECT_EQ(bench_grouped.exit_code, 4) << bench_grouped.output;
}
