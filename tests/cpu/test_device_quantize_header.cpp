// The public device header fp8gemm/device/quantize.cuh, as a user sees it: user kernels that
// include it from the source tree's include/ directory compile with NVRTC for sm_90a without
// errors, warnings or local memory (with and without -default-device and fast math); its
// layout helpers are the arithmetic of fp8gemm.hpp and of the host reference; and the library
// compiles its own quantization kernels against the very same text.

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/embedded_kernels.hpp"
#include "common/quantize_host.hpp"
#include "compiler/resource_report.hpp"
#include "fp8gemm/device/quantize.cuh"
#include "fp8gemm/fp8gemm.hpp"

namespace {

namespace fq = fp8gemm::device;

// Three user kernels, one per thread mapping the header documents: a fused RMSNorm +
// quantize with a warp per row (32 lanes per group), the library's own mapping (16 lanes x 8
// values, partial last groups, both scale roundings), and a thread per group.
constexpr const char* kUserSource = R"(
#include "fp8gemm/device/quantize.cuh"

namespace fq = fp8gemm::device;

// y = x * rstd(x) * w, rounded to bf16 as an unfused RMSNorm would store it, quantized per
// token. One warp per row; hidden % 128 == 0.
extern "C" __global__ void rmsnorm_quantize(const unsigned short* x, const unsigned short* w, int rows, int hidden,
                                            float eps, unsigned char* q, long long ldq, float* sf) {
  const int lane = threadIdx.x % 32;
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;  // whole warps leave together
  const unsigned short* xr = x + static_cast<long long>(row) * hidden;
  float ss = 0.0f;
  for (int c = lane; c < hidden; c += 32) {
    const float v = fq::bf16_bits_to_float(xr[c]);
    ss += v * v;
  }
  for (int offset = 16; offset > 0; offset >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, offset);
  const float rstd = rsqrtf(ss / hidden + eps);
  for (int g = 0; g < hidden / fq::kGroupSize; ++g) {
    float v[4];
    for (int i = 0; i < 4; ++i) {
      const int c = fq::kGroupSize * g + 4 * lane + i;
      v[i] = fq::round_to_bf16(fq::bf16_bits_to_float(xr[c]) * rstd * fq::bf16_bits_to_float(w[c]));
    }
    unsigned int packed[1];
    const float scale = fq::quantize_group<32>(v, packed);
    *reinterpret_cast<unsigned int*>(q + fq::e4m3_index(row, fq::kGroupSize * g + 4 * lane, ldq)) = packed[0];
    if (lane == 0) sf[fq::per_token_scale_index(row, g, rows)] = scale;
  }
}

template <bool kPow2>
__device__ void quantize_16x8(const unsigned short* x, long long ldx, int rows, int cols, unsigned char* q,
                              long long ldq, float* sf) {
  const int lane = threadIdx.x % 32, j = lane % 16;
  const int groups = static_cast<int>(fq::scale_blocks(cols));
  const int item = (blockIdx.x * blockDim.x + threadIdx.x) / 16;
  const bool live = item < rows * groups;
  const int row = live ? item / groups : 0, g = live ? item % groups : 0;
  const int c0 = fq::kGroupSize * g + 8 * j;
  float v[8];
  for (int i = 0; i < 8; ++i)
    v[i] = live && c0 + i < cols ? fq::bf16_bits_to_float(x[static_cast<long long>(row) * ldx + c0 + i]) : 0.0f;
  unsigned int packed[2];
  const float scale = fq::quantize_group<16, kPow2>(v, packed);  // the whole warp, live or not
  if (!live) return;
#pragma unroll
  for (int i = 0; i < 8; ++i)  // unrolled, so that packed stays in registers
    if (c0 + i < cols) q[fq::e4m3_index(row, c0 + i, ldq)] = static_cast<unsigned char>(packed[i / 4] >> (8 * (i % 4)));
  if (j == 0) sf[fq::per_token_scale_index(row, g, rows)] = scale;
}

extern "C" __global__ void quantize_16x8_plain(const unsigned short* x, long long ldx, int rows, int cols,
                                               unsigned char* q, long long ldq, float* sf) {
  quantize_16x8<false>(x, ldx, rows, cols, q, ldq, sf);
}

extern "C" __global__ void quantize_16x8_pow2(const unsigned short* x, long long ldx, int rows, int cols,
                                              unsigned char* q, long long ldq, float* sf) {
  quantize_16x8<true>(x, ldx, rows, cols, q, ldq, sf);
}

// A thread per 128-value group of a row (cols % 128 == 0), using the single-value pieces.
extern "C" __global__ void quantize_thread_per_group(const float* x, int rows, int cols, unsigned char* q,
                                                     long long ldq, float* sf) {
  const int item = blockIdx.x * blockDim.x + threadIdx.x;
  const int groups = cols / fq::kGroupSize;
  if (item >= rows * groups) return;
  const int row = item / groups, g = item % groups;
  const float* src = x + static_cast<long long>(row) * cols + fq::kGroupSize * g;
  float amax = 0.0f;
  for (int i = 0; i < fq::kGroupSize; ++i) amax = fmaxf(amax, fq::abs_f32(src[i]));
  float scale, inv;
  fq::group_scale<false>(amax, scale, inv);
  for (int i = 0; i < fq::kGroupSize; ++i)
    q[fq::e4m3_index(row, fq::kGroupSize * g + i, ldq)] = fq::quantize_e4m3(src[i], inv);
  sf[fq::per_token_scale_index(row, g, rows)] = scale;
}
)";

struct UserCompile {
  nvrtcResult result = NVRTC_ERROR_INTERNAL_ERROR;
  std::string log;
  size_t cubin_bytes = 0;
};

// Compiles kUserSource the way a user would: the header found through -I, nothing embedded.
UserCompile compile_user_source(const std::vector<std::string>& extra_options) {
  UserCompile out;
  nvrtcProgram program = nullptr;
  if (nvrtcCreateProgram(&program, kUserSource, "user_kernels.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) return out;
  std::vector<std::string> options = {"--gpu-architecture=sm_90a", "-std=c++17", "--ptxas-options=-v",
                                      std::string("-I") + FP8GEMM_INCLUDE_DIR};
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> pointers;
  for (const std::string& o : options) pointers.push_back(o.c_str());
  out.result = nvrtcCompileProgram(program, static_cast<int>(pointers.size()), pointers.data());
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) == NVRTC_SUCCESS && size > 1) {
    out.log.resize(size);
    nvrtcGetProgramLog(program, out.log.data());
    out.log.resize(size - 1);
  }
  if (out.result == NVRTC_SUCCESS) nvrtcGetCUBINSize(program, &out.cubin_bytes);
  nvrtcDestroyProgram(&program);
  return out;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST(DeviceQuantizeHeader, UserKernelsCompileWithNvrtcWithoutLocalMemory) {
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"-default-device"}, {"--use_fast_math"}, {"-default-device", "-lineinfo"}}) {
    std::string what;
    for (const std::string& o : extra) what += o + " ";
    SCOPED_TRACE(what);
    const UserCompile c = compile_user_source(extra);
    ASSERT_EQ(c.result, NVRTC_SUCCESS) << nvrtcGetErrorString(c.result) << "\n" << c.log;
    EXPECT_GT(c.cubin_bytes, 0u);
    const fp8gemm::detail::ResourceUsage r = fp8gemm::detail::parse_resource_report(c.log);
    EXPECT_TRUE(r.parsed) << c.log;
    EXPECT_TRUE(r.warnings.empty()) << c.log;
    EXPECT_FALSE(r.uses_local_memory()) << r.stack_frame_bytes << " B stack, " << r.spill_store_bytes
                                        << " B spill stores\n" << c.log;
    // ptxas reported on all four kernels, not only some.
    EXPECT_EQ(count(c.log, "Compiling entry function"), 4) << c.log;
  }
}

// The layout helpers are usable in host code and agree with fp8gemm.hpp's descriptions of
// the layouts the GEMMs read.
TEST(DeviceQuantizeHeader, LayoutHelpersMatchThePublicApi) {
  static_assert(fq::kGroupSize == 128);
  static_assert(fq::per_token_scale_stride(5) == 8 && fq::per_token_scale_index(3, 2, 5) == 19);
  static_assert(fq::block_scale_index(1, 2, 300) == 5 && fq::e4m3_ld(100) == 112);
  // Defined for every size, as the public header's helpers are (a static_assert does not
  // compile on overflow).
  static_assert(fq::scale_blocks(INT64_MAX) == fp8gemm::scale_blocks(INT64_MAX));
  static_assert(fq::per_token_scale_stride(INT64_MAX) == fp8gemm::per_token_scale_stride(INT64_MAX));
  static_assert(fq::per_token_scale_stride(INT64_MAX - 4) == INT64_MAX - 3);
  for (int64_t m : {1, 2, 3, 4, 5, 7, 8, 127, 128, 129, 1000, 4097})
    for (int64_t k : {16, 128, 130, 300, 7168, 7184}) {
      SCOPED_TRACE(testing::Message() << m << " x " << k);
      EXPECT_EQ(fq::scale_blocks(k), fp8gemm::scale_blocks(k));
      EXPECT_EQ(fq::per_token_scale_stride(m), fp8gemm::per_token_scale_stride(m));
      const fp8gemm::ScaleMatrix pt = fp8gemm::per_token_scales(nullptr, m, k);
      const fp8gemm::ScaleMatrix bs = fp8gemm::block_scales(nullptr, m, k);
      EXPECT_EQ(fq::per_token_scale_count(m, k), pt.cols * pt.col_stride);
      EXPECT_EQ(fq::block_scale_count(m, k), bs.rows * bs.row_stride);
      for (int64_t r : {int64_t(0), m / 2, m - 1})
        for (int64_t g : {int64_t(0), pt.cols - 1}) {
          EXPECT_EQ(fq::per_token_scale_index(r, g, m), r * pt.row_stride + g * pt.col_stride);
          EXPECT_EQ(fq::block_scale_index(r / 128, g, k), (r / 128) * bs.row_stride + g * bs.col_stride);
        }
      EXPECT_EQ(fq::e4m3_ld(k) % 16, 0);
      EXPECT_GE(fq::e4m3_ld(k), k);
      EXPECT_LT(fq::e4m3_ld(k), k + 16);
      EXPECT_EQ(fq::e4m3_index(m - 1, k - 1, fq::e4m3_ld(k)), (m - 1) * fq::e4m3_ld(k) + k - 1);
    }
  // The rule's constants are the host reference's.
  EXPECT_EQ(fq::min_amax(), fp8gemm::host::kMinAmax);
  EXPECT_EQ(fq::e4m3_max(), 448.0f);
}

// The library embeds the header under the include name users write, with the text of the
// source tree (what gets installed), and its quantization kernels include it.
TEST(DeviceQuantizeHeader, EmbeddedUnderItsPublicNameAndUsedByTheLibraryKernels) {
  std::ifstream file(std::string(FP8GEMM_INCLUDE_DIR) + "/fp8gemm/device/quantize.cuh", std::ios::binary);
  ASSERT_TRUE(file) << FP8GEMM_INCLUDE_DIR;
  std::stringstream text;
  text << file.rdbuf();
  const fp8gemm::detail::EmbeddedHeader* device = nullptr;
  const fp8gemm::detail::EmbeddedHeader* kernels = nullptr;
  for (int i = 0; i < fp8gemm::detail::embedded_header_count(); ++i) {
    const std::string name = fp8gemm::detail::embedded_headers()[i].name;
    if (name == "fp8gemm/device/quantize.cuh") device = &fp8gemm::detail::embedded_headers()[i];
    if (name == "fp8gemm/quantize.cuh") kernels = &fp8gemm::detail::embedded_headers()[i];
  }
  ASSERT_NE(device, nullptr);
  ASSERT_NE(kernels, nullptr);
  EXPECT_EQ(std::string(device->source), text.str());
  EXPECT_NE(std::string(kernels->source).find("#include \"fp8gemm/device/quantize.cuh\""), std::string::npos);
}
