#include <gtest/gtest.h>

#include "cache/cache_key.hpp"

using namespace fp8gemm::detail;

namespace {
CacheKeyInputs base() {
  CacheKeyInputs in;
  in.source = "// kernel source";
  in.name_expression = "fp8gemm_dev::k<1>";
  in.headers_digest = std::string(64, 'a');
  in.nvrtc_version = "13.0";
  in.options = {"--gpu-architecture=sm_90a", "-std=c++17"};
  in.library_version = "0.1.0";
  return in;
}
}  // namespace

TEST(CacheKey, StableForEqualInputs) {
  EXPECT_EQ(cache_key(base()), cache_key(base()));
  EXPECT_EQ(cache_key(base()).size(), 64u);
}

TEST(CacheKey, ChangesWithEveryInput) {
  const std::string k0 = cache_key(base());
  std::vector<CacheKeyInputs> variants(7, base());
  variants[0].source += " ";
  variants[1].name_expression = "fp8gemm_dev::k<2>";
  variants[2].headers_digest[0] = 'b';
  variants[3].nvrtc_version = "13.1";
  variants[4].options[0] = "--gpu-architecture=sm_100a";  // target arch
  variants[5].options.push_back("-lineinfo");
  variants[6].library_version = "0.2.0";
  for (size_t i = 0; i < variants.size(); ++i) EXPECT_NE(cache_key(variants[i]), k0) << "variant " << i;
}

TEST(CacheKey, FieldBoundariesAreUnambiguous) {
  CacheKeyInputs a = base(), b = base();
  a.options = {"-a", "b"};
  b.options = {"-ab"};
  EXPECT_NE(cache_key(a), cache_key(b));
  a = base();
  b = base();
  a.source = "xy";
  a.name_expression = "z";
  b.source = "x";
  b.name_expression = "yz";
  EXPECT_NE(cache_key(a), cache_key(b));
}

TEST(CacheKey, RealKernelKeyCoversHeadersAndCompiler) {
  const KernelSpec spec{KernelKind::Gemm1D2D, 7168, 2048, KernelConfig{128, 128, 5, 8}};
  const CacheKeyInputs in = cache_key_inputs(generate_kernel(spec));
  EXPECT_EQ(in.headers_digest.size(), 64u);
  EXPECT_FALSE(in.nvrtc_version.empty());
  bool arch = false;
  for (const auto& o : in.options) arch = arch || o.find("sm_90a") != std::string::npos;
  EXPECT_TRUE(arch);
  EXPECT_EQ(cache_key(in), cache_key(cache_key_inputs(generate_kernel(spec))));
  KernelSpec other = spec;
  other.config.stages = 4;
  EXPECT_NE(cache_key(in), cache_key(cache_key_inputs(generate_kernel(other))));
}
