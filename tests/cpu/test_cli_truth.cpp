// What the command line says must be true: exit codes, reasons, counts and settings, checked
// on the real binary against what it did to the cache directory.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "cache/cache_entry.hpp"
#include "support/cli.hpp"
#include "support/temp_dir.hpp"
#include "util/files.hpp"

using fp8gemm::test::CliResult;
using fp8gemm::test::run_cli;
using fp8gemm::test::TempDir;
using fp8gemm::test::write_shapes;
namespace fs = std::filesystem;

namespace {

// Two kernels: gemm1d2d_n256_k512_... and then gemm1d2d_n264_k1024_... (with -j 1, in this order).
const char* kTwoKernels = R"({"dense": {"m": [1, 200], "nk": [[256, 512], [264, 1024]]}})";

bool contains(const CliResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

// The CLI run with `args` exits with a usage error (2) and says `text`.
void expect_usage_error(const std::string& args, const std::string& text) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  EXPECT_TRUE(contains(r, text)) << args << "\n" << r.output;
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

std::vector<std::string> entry_names(const std::string& cache) {
  std::vector<std::string> names;
  for (const std::string& n : fp8gemm::detail::list_files(cache + "/kernels"))
    if (n.size() > 5 && n.substr(n.size() - 5) == ".fp8k") names.push_back(n);
  std::sort(names.begin(), names.end());
  return names;
}

void set_age(const std::string& path, int seconds) {
  const time_t t = std::time(nullptr) - seconds;
  utimbuf times{t, t};
  ASSERT_EQ(::utime(path.c_str(), &times), 0) << path;
}

}  // namespace

// A prewarm that cannot persist every kernel exits 1 and says how many and why.
TEST(CliTruth, PrewarmFailsWhenKernelsAreNotSaved) {
  TempDir dir;
  const std::string shapes = write_shapes(dir.path(), kTwoKernels);
  // The cache directory is a regular file.
  const std::string file = dir.path() + "/a-file";
  std::ofstream(file) << "x";
  CliResult r = run_cli("--cache-dir " + file + " prewarm -q -j 1 --shapes " + shapes);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "2 of 2 kernels are not saved")) << r.output;
  EXPECT_TRUE(contains(r, "Not a directory")) << r.output;
  // Under /proc nothing can be created, not even by root.
  r = run_cli("--cache-dir /proc/fp8gemm-test-cache prewarm -q -j 1 --shapes " + shapes);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "2 of 2 kernels are not saved")) << r.output;
  // FP8GEMM_DISK_CACHE=0: the reason is the variable, not a missing directory.
  r = run_cli("--cache-dir " + dir.path() + "/off prewarm -q -j 1 --shapes " + shapes, "FP8GEMM_DISK_CACHE=0");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "FP8GEMM_DISK_CACHE=0 turns the disk cache off")) << r.output;
  EXPECT_FALSE(contains(r, "no cache directory")) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() + "/off")) << "a disabled disk cache created its directory";
  // A write that fails part-way (here: the second entry's name is taken by a directory, as a
  // full disk would fail it): the first kernel is saved, the second is not, and the count says so.
  const std::string scratch = dir.path() + "/scratch";
  ASSERT_EQ(run_cli("--cache-dir " + scratch + " prewarm -q -j 1 --shapes " + shapes).exit_code, 0);
  const std::vector<std::string> names = entry_names(scratch);
  ASSERT_EQ(names.size(), 2u);
  const std::string partial = dir.path() + "/partial";
  ASSERT_EQ(fp8gemm::detail::make_dirs(partial + "/kernels/" + names[1]), 0);
  r = run_cli("--cache-dir " + partial + " prewarm -q -j 1 --shapes " + shapes);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "1 of 2 kernels are not saved")) << r.output;
  EXPECT_TRUE(fs::exists(partial + "/kernels/" + names[0]));
  // And where everything is saved: exit 0.
  r = run_cli("--cache-dir " + dir.path() + "/good prewarm -q -j 1 --shapes " + shapes);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(entry_names(dir.path() + "/good").size(), 2u);
}

// Progress lines say where each shape's kernel came from, and the summary adds up.
TEST(CliTruth, PrewarmProgressAndSummaryAddUp) {
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  CliResult r = run_cli("--cache-dir " + cache + " prewarm -j 1 --shapes " + write_shapes(dir.path(), kTwoKernels));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "(compiled)"), 2u) << r.output;
  EXPECT_EQ(count(r.output, "(shared)"), 2u) << r.output;  // once "(cached)", though this run compiled them
  EXPECT_FALSE(contains(r, "(cached)")) << r.output;
  r = run_cli("--cache-dir " + cache + " prewarm -j 1 --shapes " + write_shapes(dir.path(), kTwoKernels));
  EXPECT_EQ(count(r.output, "(on disk)"), 2u) << r.output;
  // 7168x2048 at M = 128: the planner's first candidate spills and is passed over; its entry
  // is on disk too, and the summary says so (it said "1 kernels" beside 2 entries).
  const std::string skip_cache = dir.path() + "/skip";
  r = run_cli("--cache-dir " + skip_cache + " prewarm -q -j 1 --sms 132 --shapes " +
              write_shapes(dir.path(), R"({"dense": {"mnk": [[128, 7168, 2048]]}})", "skip.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "1 shapes -> 1 kernels")) << r.output;
  EXPECT_TRUE(contains(r, "1 more candidate kernel was compiled and passed over")) << r.output;
  EXPECT_EQ(entry_names(skip_cache).size(), 2u);
}

// Sizes past the documented limits are invalid arguments (exit 1 with the limit), not Internal.
TEST(CliTruth, SizesPastTheLimitsNameTheLimit) {
  TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {R"({"dense": {"mnk": [[4096, 7168, 1682960]]}})", "K > 1048576"},                // the library's check
      {R"({"dense": {"mnk": [[4096, 2147483640, 4096]]}})", "is more than 2147482624"},  // the shape file's
      {R"({"k_grouped": {"groups_m_n_expected_k": [[1048576, 4096, 4096, 128]]}})", "rows of D"},
  };
  for (const auto& [json, needle] : cases) {
    const CliResult r = run_cli("--cache-dir " + dir.path() + "/c prewarm -q --shapes " + write_shapes(dir.path(), json));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r, needle)) << r.output;
    EXPECT_FALSE(contains(r, "internal")) << r.output;
  }
}

// Every boolean takes 0/1/true/false/on/off/yes/no in any case; other values warn once.
TEST(CliTruth, SettingsAreReadAsDocumentedAndShownByInfo) {
  CliResult r = run_cli("info", "FP8GEMM_CACHE_ONLY=false FP8GEMM_LOG_LEVEL=DEBUG FP8GEMM_TUNING=Off");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "FP8GEMM_CACHE_ONLY   off")) << r.output;  // "false" once turned it on
  EXPECT_TRUE(contains(r, "(FP8GEMM_CACHE_ONLY=false)")) << r.output;
  EXPECT_TRUE(contains(r, "FP8GEMM_LOG_LEVEL    debug")) << r.output;
  EXPECT_TRUE(contains(r, "FP8GEMM_TUNING       off")) << r.output;
  EXPECT_FALSE(contains(r, "warning")) << r.output;
  r = run_cli("info", "FP8GEMM_CACHE_ONLY=YES FP8GEMM_DISK_CACHE=maybe");
  EXPECT_TRUE(contains(r, "FP8GEMM_CACHE_ONLY   on")) << r.output;
  EXPECT_TRUE(contains(r, "FP8GEMM_DISK_CACHE   on")) << r.output;
  EXPECT_EQ(count(r.output, "FP8GEMM_DISK_CACHE=maybe is not one of 1, 0, true, false, on, off, yes, no; using on"), 1u)
      << r.output;
  r = run_cli("info", "FP8GEMM_DISK_CACHE=Off");
  EXPECT_TRUE(contains(r, "FP8GEMM_DISK_CACHE   off")) << r.output;
  EXPECT_TRUE(contains(r, "memory-only (FP8GEMM_DISK_CACHE=Off turns the disk cache off)")) << r.output;
  // A relative XDG_CACHE_HOME is ignored (the XDG rule), with a warning.
  TempDir home;
  r = run_cli("info", "-u FP8GEMM_CACHE_DIR XDG_CACHE_HOME=relative/dir HOME=" + home.path());
  EXPECT_TRUE(contains(r, "cache dir    " + home.path() + "/.cache/fp8gemm")) << r.output;
  EXPECT_TRUE(contains(r, "XDG_CACHE_HOME=relative/dir is not an absolute path")) << r.output;
}

// info and the read-only cache commands leave a missing directory missing.
TEST(CliTruth, ReadOnlyCommandsCreateNothing) {
  TempDir dir;
  const std::string cache = dir.path() + "/new";
  for (const char* command : {"info", "cache list", "cache stats", "cache verify"}) {
    const CliResult r = run_cli("--cache-dir " + cache + " " + command);
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.output;
    EXPECT_FALSE(fs::exists(cache)) << command << " created " << cache;
  }
}

// Leftovers of killed writers and stray files are reported; clear --stale removes them (and
// stale entries), not a live writer's temporary; verify's exit code follows.
TEST(CliTruth, LeftoversStrayFilesAndStaleEntries) {
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  const std::string c = "--cache-dir " + cache + " ";
  ASSERT_EQ(run_cli(c + "prewarm -q -j 1 --shapes " + write_shapes(dir.path(), kTwoKernels)).exit_code, 0);
  const std::vector<std::string> names = entry_names(cache);
  ASSERT_EQ(names.size(), 2u);
  const std::string k = cache + "/kernels/";
  std::ofstream(k + names[0] + ".tmp.4242.abc.0") << "partial";  // killed an hour ago
  set_age(k + names[0] + ".tmp.4242.abc.0", 3600);
  std::ofstream(k + names[1] + ".tmp.4343.def.1") << "partial";  // being written now
  std::ofstream(k + "notes.txt") << "stray";
  // An entry with a valid format and checksum that no lookup of this library reaches (its key
  // is not this library's key for its slug).
  fp8gemm::detail::CacheEntry foreign{std::string(64, 'a'), "gemm1d2d_n256_k512_bm64_bn16_s8_g8", "k", {}, "cubin"};
  foreign.resources.parsed = true;
  std::ofstream(k + foreign.slug + "-aaaaaaaaaaaaaaaa.fp8k") << fp8gemm::detail::encode_cache_entry(foreign);
  // An entry whose header was edited: the header checksum catches it.
  {
    std::string bytes = *fp8gemm::detail::read_file(k + names[1]);
    const size_t at = bytes.find("\"registers\":");
    ASSERT_NE(at, std::string::npos);
    bytes.replace(at, 12, "\"registers\":1");
    std::ofstream(k + names[1], std::ios::binary) << bytes;
  }
  CliResult r = run_cli(c + "cache list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "leftover of an interrupted write")) << r.output;
  EXPECT_TRUE(contains(r, "being written")) << r.output;
  EXPECT_TRUE(contains(r, "stray: not a cache file")) << r.output;
  EXPECT_TRUE(contains(r, "stale: no lookup reaches it")) << r.output;
  EXPECT_TRUE(contains(r, "header checksum mismatch")) << r.output;  // once listed as "ok"
  r = run_cli(c + "cache stats");
  EXPECT_TRUE(contains(r, "3 kernels")) << r.output;
  EXPECT_TRUE(contains(r, "2 not usable")) << r.output;
  EXPECT_TRUE(contains(r, "2 temporary files (1 left over by interrupted writes), 1 stray files")) << r.output;
  r = run_cli(c + "cache verify");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  r = run_cli(c + "cache clear --stale");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "removed 2 unusable kernel entries, 2 leftover or stray files")) << r.output;
  EXPECT_TRUE(fs::exists(k + names[0]));
  EXPECT_TRUE(fs::exists(k + names[1] + ".tmp.4343.def.1")) << "a live writer's file was taken";
  EXPECT_FALSE(fs::exists(k + "notes.txt"));
  r = run_cli(c + "cache verify");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_cli(c + "cache clear --stale --kernels-only");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// The cache tools judge an entry as the loader reads it: a symbolic link to a good entry is a
// good entry (once "stray" to verify and removed by clear --stale, while prewarm used it); a
// FIFO under an entry's name is stray and recompiled over (once a prewarm that never ended);
// a temporary file dated in the future is left over (clock skew, a copied cache).
TEST(CliTruth, CacheToolsAgreeWithTheLoader) {
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  const std::string c = "--cache-dir " + cache + " ";
  const std::string shapes = write_shapes(dir.path(), R"({"dense": {"mnk": [[64, 256, 512]]}})");
  ASSERT_EQ(run_cli(c + "prewarm -q --shapes " + shapes).exit_code, 0);
  const std::vector<std::string> names = entry_names(cache);
  ASSERT_EQ(names.size(), 1u);
  const std::string entry = cache + "/kernels/" + names[0];
  fs::rename(entry, dir.path() + "/real.fp8k");
  fs::create_symlink(dir.path() + "/real.fp8k", entry);
  CliResult r = run_cli(c + "prewarm -q --shapes " + shapes);
  EXPECT_TRUE(contains(r, "1 already on disk")) << r.output;
  r = run_cli(c + "cache verify");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "1 kernels")) << r.output;
  EXPECT_TRUE(contains(r, "0 stray files")) << r.output;
  r = run_cli(c + "cache clear --stale");
  EXPECT_TRUE(fs::is_symlink(entry)) << r.output;

  fs::remove(entry);
  ASSERT_EQ(::mkfifo(entry.c_str(), 0644), 0);
  r = run_cli(c + "cache list");
  EXPECT_TRUE(contains(r, "stray: not a regular file")) << r.output;
  EXPECT_FALSE(contains(r, "stray: stray:")) << r.output;
  r = run_cli(c + "prewarm -q --shapes " + shapes);  // must not block on the FIFO
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "1 compiled")) << r.output;
  EXPECT_TRUE(fs::is_regular_file(entry));

  const std::string future = entry + ".tmp.1.2.3";
  std::ofstream(future) << "partial";
  set_age(future, -365 * 24 * 3600);
  r = run_cli(c + "cache list");
  // (31536000 s, less the seconds between setting the date and listing: a loaded machine
  // crosses a second boundary.)
  EXPECT_TRUE(contains(r, "leftover of an interrupted write, dated 315359") ||
              contains(r, "leftover of an interrupted write, dated 31536000 s in the future"))
      << r.output;
  EXPECT_TRUE(contains(r, " s in the future")) << r.output;
  r = run_cli(c + "cache clear --stale");
  EXPECT_FALSE(fs::exists(future)) << r.output;
}

// cache clear leaves what other processes are using: a temporary being written (removed, its
// writer's rename failed and that process gave up on the disk) and a tuning database's lock
// file; a leftover temporary goes.
TEST(CliTruth, ClearLeavesLiveWritersAlone) {
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  const std::string c = "--cache-dir " + cache + " ";
  ASSERT_EQ(run_cli(c + "prewarm -q --shapes " + write_shapes(dir.path(), kTwoKernels)).exit_code, 0);
  const std::string k = cache + "/kernels/";
  const std::string live = k + entry_names(cache)[0] + ".tmp.1.2.3.0", old = k + entry_names(cache)[1] + ".tmp.1.2.3.1";
  std::ofstream(live) << "partial";
  std::ofstream(old) << "partial";
  set_age(old, 3600);
  ASSERT_EQ(fp8gemm::detail::make_dirs(cache + "/tuning"), 0);
  std::ofstream(cache + "/tuning/NVIDIA_H200-132sm.json.lock") << "";
  const CliResult r = run_cli(c + "cache clear");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "removed 2 kernels, 0 tuning files, 1 temporary files")) << r.output;
  EXPECT_TRUE(fs::exists(live));
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::exists(cache + "/tuning/NVIDIA_H200-132sm.json.lock"));
}

// With the disk cache turned off there is no directory: the cache commands say so and fail
// (they listed and cleared nothing, exit 0, even with --cache-dir).
TEST(CliTruth, CacheCommandsWithTheDiskCacheOff) {
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  ASSERT_EQ(run_cli("--cache-dir " + cache + " prewarm -q --shapes " + write_shapes(dir.path(), kTwoKernels)).exit_code, 0);
  for (const char* action : {"list", "verify", "stats", "clear"}) {
    const CliResult r = run_cli("--cache-dir " + cache + " cache " + action, "FP8GEMM_DISK_CACHE=off");
    EXPECT_EQ(r.exit_code, 1) << action << ": " << r.output;
    EXPECT_TRUE(contains(r, "there is no cache directory")) << r.output;
  }
  EXPECT_EQ(entry_names(cache).size(), 2u);
}

// clear says what it could not remove and exits 1 (it said "removed 0 kernels" and exited 0).
TEST(CliTruth, ClearNamesWhatItCouldNotRemove) {
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  // A directory under an entry's name cannot be unlinked, by root either.
  const std::string blocked = cache + "/kernels/gemm1d2d_n8_k16_bm64_bn16_s2_g8-0123456789abcdef.fp8k";
  ASSERT_EQ(fp8gemm::detail::make_dirs(blocked), 0);
  CliResult r = run_cli("--cache-dir " + cache + " cache clear");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "could not remove " + blocked)) << r.output;
  EXPECT_TRUE(contains(r, "1 file not removed")) << r.output;
}

// The same on a read-only directory (root may remove files there: it needs another user).
TEST(CliTruth, ClearOnAReadOnlyDirectoryFails) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root, who may remove files from a read-only directory";
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  ASSERT_EQ(run_cli("--cache-dir " + cache + " prewarm -q --shapes " + write_shapes(dir.path(), kTwoKernels)).exit_code, 0);
  ASSERT_EQ(::chmod((cache + "/kernels").c_str(), 0555), 0);
  const CliResult r = run_cli("--cache-dir " + cache + " cache clear");
  ::chmod((cache + "/kernels").c_str(), 0755);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "Permission denied")) << r.output;
  EXPECT_TRUE(contains(r, "2 files not removed")) << r.output;
}

// A tuning database that does not parse: prewarm warns once, verify counts it as unusable.
TEST(CliTruth, CorruptTuningDatabaseIsWarnedAboutAndCounted) {
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  ASSERT_EQ(fp8gemm::detail::make_dirs(cache + "/tuning"), 0);
  std::ofstream(cache + "/tuning/NVIDIA_H200-132sm.json") << "{ not json";
  CliResult r = run_cli("--cache-dir " + cache + " prewarm -q --shapes " + write_shapes(dir.path(), kTwoKernels));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "ignoring the tuning database"), 1u) << r.output;
  EXPECT_TRUE(contains(r, "NVIDIA_H200-132sm.json")) << r.output;
  r = run_cli("--cache-dir " + cache + " cache verify");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r, "not readable")) << r.output;
  EXPECT_TRUE(contains(r, "1 unreadable tuning databases")) << r.output;
}

// Files nested deeper than any the tools write, and endless ones, are refused with a reason,
// never a crash: copying or quoting a JSON value recurses once per level, and ~100,000 levels
// (a few hundred kilobytes) overflowed the stack of every process that read the file.
TEST(CliTruth, DeepAndEndlessFilesAreRefusedNotFollowed) {
  TempDir dir;
  const std::string cache = dir.path() + "/c";
  const std::string c = "--cache-dir " + cache + " ";
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  CliResult r = run_cli(c + "prewarm --shapes " + write_shapes(dir.path(), R"({"dense": {"mnk": [)" + deep + "]}}"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "nested more than 16 levels deep")) << r.output;
  r = run_cli(c + "prewarm --shapes /dev/zero");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "larger than 16 MiB")) << r.output;

  const std::string shapes = write_shapes(dir.path(), R"({"dense": {"mnk": [[64, 256, 512]]}})");
  ASSERT_EQ(run_cli(c + "prewarm -q --shapes " + shapes).exit_code, 0);
  const std::vector<std::string> names = entry_names(cache);
  ASSERT_EQ(names.size(), 1u);
  const std::string entry = cache + "/kernels/" + names[0];
  std::ofstream(entry, std::ios::trunc) << fp8gemm::detail::kCacheEntryMagic << "\n{\"key\": " << deep << "}\n";
  r = run_cli(c + "cache list");
  EXPECT_TRUE(contains(r, "corrupt: malformed header")) << r.output;
  r = run_cli(c + "prewarm -q --shapes " + shapes);  // the entry is compiled again
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "1 compiled")) << r.output;

  ASSERT_EQ(fp8gemm::detail::make_dirs(cache + "/tuning"), 0);
  std::ofstream(cache + "/tuning/NVIDIA_H200-132sm.json")
      << R"({"format": 2, "metadata": {"gpu": "NVIDIA H200", "sms": 132, "driver": 13000, "nvrtc": "13.0",)"
      << R"( "library": "0.1.0"}, "entries": {"gemm1d2d:n256:k512:m64": {"spec": {"deep": )" << deep << "}}}}";
  r = run_cli(c + "cache list");
  EXPECT_TRUE(contains(r, "nested more than 16 levels deep")) << r.output;
  r = run_cli(c + "prewarm -q --shapes " + shapes);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(r.output, "ignoring the tuning database"), 1u) << r.output;
}

// Numbers out of range get a short message naming the option and its range.
TEST(CliTruth, NumberOptionsNameTheirRange) {
  TempDir dir;
  const std::string shapes = write_shapes(dir.path(), kTwoKernels);
  const std::pair<std::string, std::string> cases[] = {
      {"prewarm --shapes " + shapes + " --jobs -1", "--jobs: Value -1 not in range 0 to 1024"},
      {"prewarm --shapes " + shapes + " --jobs abc", "--jobs"},
      {"check -m 0", "-m: Value 0 not in range 1 to 2147482624"},
      {"check -k 2000000", "-k: Value 2000000 not in range 1 to 1048576"},
      {"tune --shapes " + shapes + " --candidates 65", "--candidates: Value 65 not in range 1 to 64"},
  };
  for (const auto& [args, needle] : cases) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.output;
    EXPECT_TRUE(contains(r, needle)) << args << ": " << r.output;
    EXPECT_LT(r.output.size(), 120u) << args << ": " << r.output;  // once a 309-digit range
  }
  const CliResult help = run_cli("prewarm --help");
  EXPECT_TRUE(contains(help, "0 (the default) = one per hardware thread")) << help.output;
}

// Integer options are decimal: a leading zero is not octal, 0x is not hex, and a value that
// is not a number says so (not "out of range"); seeds are not wrapped.
TEST(CliTruth, NumbersAreDecimal) {
  TempDir dir;
  const std::string shapes = write_shapes(dir.path(), R"({"dense": {"mnk": [[64, 256, 512]]}})");
  const CliResult r = run_cli("--cache-dir " + dir.path() + "/c prewarm -q --sms 0132 --shapes " + shapes);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "planned for 132 SMs")) << r.output;  // once 90 (octal)
  expect_usage_error("prewarm --shapes " + shapes + " --sms 0x10", "--sms: '0x10' is not a decimal integer");
  expect_usage_error("prewarm --shapes " + shapes + " --jobs 4x", "--jobs: '4x' is not a decimal integer");
  expect_usage_error("prewarm --shapes " + shapes + " --jobs 1.5", "--jobs: '1.5' is not a decimal integer");
  expect_usage_error("check -n 012", "N = 12 must be a multiple of 8");  // once 10
  expect_usage_error("check --seed -1", "--seed: '-1' is not a non-negative decimal integer");
  expect_usage_error("check --seed 18446744073709551616", "the largest seed");
  expect_usage_error("bench --seed 99999999999999999999 --shapes " + shapes, "the largest seed");
}

// bench checks that it can write its results files before it runs (once they were lost
// without a word after the whole run, exit 0).
TEST(CliTruth, BenchResultFilesMustBeWritable) {
  TempDir dir;
  const std::string shapes = write_shapes(dir.path(), R"({"dense": {"mnk": [[64, 256, 512]]}})");
  expect_usage_error("bench --shapes " + shapes + " --json " + dir.path() + "/missing/r.json",
                     "bench: --json: cannot write '" + dir.path() + "/missing/r.json': there is no directory");
  expect_usage_error("bench --shapes " + shapes + " --csv " + dir.path(), "it is a directory");
}

// Commands that do not exist, and --version, say what they are.
TEST(CliTruth, UnknownCommandsAndVersion) {
  CliResult r = run_cli("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "fp8gemm 0.1.0")) << r.output;
  expect_usage_error("prewarn --shapes x.json", "unknown command 'prewarn'");
  expect_usage_error("cache purge", "cache: unknown command 'purge' (commands: list, verify, stats, clear");
  expect_usage_error("", "a command is required: info, prewarm");
}

// Options that were accepted and ignored are errors now, and check validates before it
// looks for a GPU.
TEST(CliTruth, OptionsThatDoNothingAreRejected) {
  TempDir dir;
  const std::string shapes = write_shapes(dir.path(), kTwoKernels);
  expect_usage_error("--cache-dir " + dir.path() + "/c prewarm --candidates 4 --shapes " + shapes,
                     "--candidates applies with --tune only");
  expect_usage_error("--cache-dir \"\" info", "--cache-dir needs a directory");
  expect_usage_error("check -n 7 -k 17 --skip-without-gpu", "N = 7 must be a multiple of 8");  // once "skipped", exit 0
}

// Help texts show the defaults (and no "{false}" after a flag).
TEST(CliTruth, HelpShowsDefaults) {
  CliResult r = run_cli("bench --help");
  EXPECT_TRUE(contains(r, "--replays INT:INT in [1 - 1000]=15")) << r.output;
  EXPECT_FALSE(contains(r, "{false}")) << r.output;
  r = run_cli("tune --help");
  EXPECT_TRUE(contains(r, "[1 - 64]=8")) << r.output;
  r = run_cli("check --help");
  EXPECT_TRUE(contains(r, "=129")) << r.output;
  EXPECT_TRUE(contains(r, "=2120")) << r.output;
  EXPECT_TRUE(contains(r, "=7184")) << r.output;
}
