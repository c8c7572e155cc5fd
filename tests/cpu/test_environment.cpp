// The environment variables of README "Settings": every boolean takes 0/1/true/false/on/off/
// yes/no in any case, value names in any case, and anything else the default with one
// warning that names the variable, the value and what is used instead.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "util/env.hpp"
#include "util/log.hpp"

using namespace fp8gemm::detail;

namespace {

Environment read(const std::map<std::string, std::string>& vars) {
  return read_environment([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace

TEST(Environment, BooleansTakeEveryCommonSpelling) {
  for (const char* yes : {"1", "true", "TRUE", "on", "On", "yes", "YES"}) {
    SCOPED_TRACE(yes);
    const Environment e = read({{"FP8GEMM_CACHE_ONLY", yes}, {"FP8GEMM_DISK_CACHE", yes}});
    EXPECT_TRUE(e.cache_only);
    EXPECT_TRUE(e.disk_cache);
    EXPECT_TRUE(e.warnings.empty());
    EXPECT_EQ(e.cache_only_source, std::string("FP8GEMM_CACHE_ONLY=") + yes);
  }
  for (const char* no : {"0", "false", "False", "off", "OFF", "no", "No"}) {
    SCOPED_TRACE(no);
    const Environment e = read({{"FP8GEMM_CACHE_ONLY", no}, {"FP8GEMM_DISK_CACHE", no}});
    EXPECT_FALSE(e.cache_only);  // FP8GEMM_CACHE_ONLY=false once turned cache-only mode on
    EXPECT_FALSE(e.disk_cache);
    EXPECT_TRUE(e.warnings.empty());
  }
  const Environment defaults = read({{"FP8GEMM_CACHE_ONLY", ""}});
  EXPECT_FALSE(defaults.cache_only);
  EXPECT_TRUE(defaults.disk_cache);
  EXPECT_EQ(defaults.disk_cache_source, "default");
  EXPECT_TRUE(defaults.warnings.empty());
}

TEST(Environment, UnknownValuesTakeTheDefaultWithOneWarningEach) {
  const Environment e = read({{"FP8GEMM_DISK_CACHE", "maybe"},
                              {"FP8GEMM_CACHE_ONLY", "2"},
                              {"FP8GEMM_LOG_LEVEL", "loud"},
                              {"FP8GEMM_TUNING", "always"}});
  EXPECT_TRUE(e.disk_cache);
  EXPECT_FALSE(e.cache_only);
  EXPECT_EQ(e.log_level, LogLevel::Warn);
  EXPECT_EQ(e.tuning_mode, 1);
  ASSERT_EQ(e.warnings.size(), 4u);
  EXPECT_EQ(e.warnings[0], "FP8GEMM_DISK_CACHE=maybe is not one of 1, 0, true, false, on, off, yes, no; using on");
  EXPECT_EQ(e.warnings[1], "FP8GEMM_CACHE_ONLY=2 is not one of 1, 0, true, false, on, off, yes, no; using off");
  EXPECT_EQ(e.warnings[2], "FP8GEMM_LOG_LEVEL=loud is not one of error, warn, info, debug; using warn");
  EXPECT_EQ(e.warnings[3], "FP8GEMM_TUNING=always is not one of off, cached, on; using cached");
}

TEST(Environment, ValueNamesInAnyCase) {
  const Environment e = read({{"FP8GEMM_LOG_LEVEL", "DEBUG"}, {"FP8GEMM_TUNING", "Off"}});
  EXPECT_EQ(e.log_level, LogLevel::Debug);
  EXPECT_EQ(e.log_level_source, "FP8GEMM_LOG_LEVEL=DEBUG");
  EXPECT_EQ(e.tuning_mode, 0);
  EXPECT_TRUE(e.warnings.empty());
  EXPECT_EQ(read({{"FP8GEMM_LOG_LEVEL", "Warning"}}).log_level, LogLevel::Warn);
  EXPECT_EQ(read({{"FP8GEMM_TUNING", "CACHED"}}).tuning_mode, 1);
}

TEST(Environment, CacheDirectoryAndItsSource) {
  Environment e = read({{"FP8GEMM_CACHE_DIR", "/c"}, {"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}});
  EXPECT_EQ(e.cache_dir, "/c");
  EXPECT_EQ(e.cache_dir_source, "FP8GEMM_CACHE_DIR");
  e = read({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}});
  EXPECT_EQ(e.cache_dir, "/x/fp8gemm");
  EXPECT_EQ(e.cache_dir_source, "XDG_CACHE_HOME");
  // A relative XDG_CACHE_HOME is ignored (the XDG base-directory rule), with a warning.
  e = read({{"XDG_CACHE_HOME", "relative/cache"}, {"HOME", "/h"}});
  EXPECT_EQ(e.cache_dir, "/h/.cache/fp8gemm");
  EXPECT_EQ(e.cache_dir_source, "HOME");
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_NE(e.warnings[0].find("XDG_CACHE_HOME=relative/cache is not an absolute path"), std::string::npos);
  e = read({});
  EXPECT_EQ(e.cache_dir, "");
  EXPECT_EQ(e.cache_dir_source, "");
}
