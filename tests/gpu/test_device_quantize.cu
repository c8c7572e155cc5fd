// The public device header fp8gemm/device/quantize.cuh on an sm_90 GPU: kernels written
// against it, as a user would write them (a group per 16 lanes, the library's mapping; per 32
// lanes; per thread; a 128x128 block per CTA), produce the same e4m3 bytes and scales, bit for
// bit and byte for byte over the whole output buffers (padding included), as quantize_per_token
// and quantize_per_block on the same bf16 input: random values of both signs and many
// magnitudes, all-zero groups, a group with one huge value, bf16 denormals, groups whose amax
// is under the floor, exact power-of-two boundaries, inf and NaN, partial last groups, and row
// counts that are not multiples of 4 (so the per-token scale stride pads). A fused elementwise
// op rounded with round_to_bf16 reproduces "store bf16, then quantize_per_token".

#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/fp8_host.hpp"
#include "common/quantize_host.hpp"
#include "fp8gemm/device/quantize.cuh"
#include "fp8gemm/fp8gemm.hpp"
#include "gpu/gpu_support.hpp"

using namespace fp8gemm;
using namespace fp8gemm::gputest;
namespace fq = fp8gemm::device;

namespace {

// Per-token quantization of x [rows, cols] (bf16, leading dimension ldx) with kLanes lanes per
// group. Each warp takes 32 / kLanes consecutive (row, group) items per step, grid-stride; the
// step is uniform across the warp, so every lane calls quantize_group, live or not. With mul !=
// 1 the kernel first applies y = bf16(x * mul), as a fused elementwise op would.
template <int kLanes, bool kPow2>
__global__ void user_quantize_per_token(const __nv_bfloat16* x, long long ldx, int rows, int cols, float mul,
                                        unsigned char* q, long long ldq, float* sf) {
  constexpr int kValues = fq::kGroupSize / kLanes;
  constexpr int kItemsPerWarp = 32 / kLanes;
  const int lane = threadIdx.x % 32, j = lane % kLanes;
  const long long groups = fq::scale_blocks(cols), items = rows * groups;
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / 32);
  for (long long base = (static_cast<long long>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32) * kItemsPerWarp;
       base < items; base += warps * kItemsPerWarp) {
    const long long item = base + lane / kLanes;
    const bool live = item < items;
    const int row = live ? static_cast<int>(item / groups) : 0, g = live ? static_cast<int>(item % groups) : 0;
    const int c0 = fq::kGroupSize * g + kValues * j;
    float v[kValues];
#pragma unroll
    for (int i = 0; i < kValues; ++i) {
      const bool in = live && c0 + i < cols;
      const float value = in ? __bfloat162float(x[row * ldx + c0 + i]) : 0.0f;
      v[i] = mul == 1.0f ? value : fq::round_to_bf16(__fmul_rn(value, mul));
    }
    unsigned int packed[kValues / 4];
    const float scale = fq::quantize_group<kLanes, kPow2>(v, packed);
    if (!live) continue;
    if (c0 + kValues <= cols) {
#pragma unroll
      for (int w = 0; w < kValues / 4; ++w)
        reinterpret_cast<unsigned int*>(q + fq::e4m3_index(row, c0, ldq))[w] = packed[w];
    } else {
#pragma unroll
      for (int i = 0; i < kValues; ++i)  // unrolled, so that packed stays in registers
        if (c0 + i < cols)
          q[fq::e4m3_index(row, c0 + i, ldq)] = static_cast<unsigned char>(packed[i / 4] >> (8 * (i % 4)));
    }
    if (j == 0) sf[fq::per_token_scale_index(row, g, rows)] = scale;
  }
}

// Per-block quantization with the header's pieces: one CTA of 256 threads per 128x128 block;
// the amax is reduced per warp (lanes_max) and across warps through shared memory.
template <bool kPow2>
__global__ void user_quantize_per_block(const __nv_bfloat16* x, long long ldx, int rows, int cols,
                                        unsigned char* q, long long ldq, float* sf) {
  __shared__ float warp_amax[8];
  const int block_cols = static_cast<int>(fq::scale_blocks(cols));
  const int br = blockIdx.x / block_cols, bc = blockIdx.x % block_cols;
  const int r0 = fq::kGroupSize * br, c0 = fq::kGroupSize * bc;
  float amax = 0.0f;
  for (int i = threadIdx.x; i < fq::kGroupSize * fq::kGroupSize; i += blockDim.x) {
    const int r = r0 + i / fq::kGroupSize, c = c0 + i % fq::kGroupSize;
    if (r < rows && c < cols) amax = fmaxf(amax, fq::abs_f32(__bfloat162float(x[r * ldx + c])));
  }
  amax = fq::lanes_max<32>(amax);
  if (threadIdx.x % 32 == 0) warp_amax[threadIdx.x / 32] = amax;
  __syncthreads();
  for (int w = 0; w < 8; ++w) amax = fmaxf(amax, warp_amax[w]);
  float scale, inv;
  fq::group_scale<kPow2>(amax, scale, inv);
  for (int i = threadIdx.x; i < fq::kGroupSize * fq::kGroupSize; i += blockDim.x) {
    const int r = r0 + i / fq::kGroupSize, c = c0 + i % fq::kGroupSize;
    if (r < rows && c < cols) q[fq::e4m3_index(r, c, ldq)] = fq::quantize_e4m3(__bfloat162float(x[r * ldx + c]), inv);
  }
  if (threadIdx.x == 0) sf[fq::block_scale_index(br, bc, cols)] = scale;
}

// Random bf16 rows with the edge cases listed at the top, each in its own groups.
host::Bf16Host make_input(int64_t rows, int64_t cols, uint64_t seed) {
  host::Bf16Host x = host::padded_bf16(rows, cols);  // a sub-matrix view: padding must not matter
  host::SplitMix64 rng(seed);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      // The group's kind, and this value's place in it (len: the group's valid values).
      const int64_t g = c / 128, at = c % 128, len = std::min<int64_t>(128, cols - 128 * g);
      const int64_t kind = (r * 7 + g * 3) % 13;
      double v = (rng.uniform() * 2 - 1) * std::ldexp(1.0, int(rng.next() % 40) - 20);  // both signs, 2^-20 .. 2^20
      if (kind == 1) v = 0.0;                                                 // all zero
      if (kind == 2) v = at == 77 % len ? -3.0e38 : v * 1e-3;                 // one huge value
      if (kind == 3) v = (rng.uniform() * 2 - 1) * 1e-39;                     // bf16 denormals only
      if (kind == 4) v = (rng.uniform() * 2 - 1) * 1e-6;                      // amax under the floor 1e-4
      if (kind == 5) v = at == 5 % len ? 448.0 * 64 : std::fmod(v, 448.0);   // amax / 448 a power of two
      if (kind == 6 && at == 0) v = rng.next() % 2 ? inf : -inf;              // an infinity
      if (kind == 7 && at == 1 % len) v = nan;                                // NaN among finite values
      if (kind == 8) v = v < 0 ? -1e-40 : 1e3;                                // denormals beside normal values
      x.data[size_t(r * x.ld + c)] = host::float_to_bf16(float(v));
    }
  return x;
}

struct Buffers {
  int64_t ldq = 0;
  size_t q_bytes = 0, scale_floats = 0;
  DeviceBuffer q, sf;
};

// q and scale buffers for [rows, cols], a wider q than needed and spare floats after the
// scales, all poisoned the same way, so that two runs can be compared over every byte.
Buffers make_buffers(int64_t rows, int64_t cols, size_t scale_floats) {
  Buffers b;
  b.ldq = fq::e4m3_ld(cols) + 16;
  b.q_bytes = size_t(rows * b.ldq);
  b.scale_floats = scale_floats + 64;
  b.q = DeviceBuffer(b.q_bytes);
  b.sf = DeviceBuffer(b.scale_floats * 4);
  check(cudaMemset(b.q.get(), 0x5a, b.q_bytes), "poison q");
  check(cudaMemset(b.sf.get(), 0xff, b.scale_floats * 4), "poison scales");
  return b;
}

// Every byte of q and every scale slot (padding and spare floats included) of the two runs.
void expect_same(const Buffers& want, const Buffers& got, int64_t cols) {
  std::vector<uint8_t> qw(want.q_bytes), qg(got.q_bytes);
  std::vector<uint32_t> sw(want.scale_floats), sg(got.scale_floats);
  check(cudaMemcpy(qw.data(), want.q.get(), qw.size(), cudaMemcpyDeviceToHost), "download q");
  check(cudaMemcpy(qg.data(), got.q.get(), qg.size(), cudaMemcpyDeviceToHost), "download q");
  check(cudaMemcpy(sw.data(), want.sf.get(), sw.size() * 4, cudaMemcpyDeviceToHost), "download scales");
  check(cudaMemcpy(sg.data(), got.sf.get(), sg.size() * 4, cudaMemcpyDeviceToHost), "download scales");
  int64_t byte_mismatches = 0, scale_mismatches = 0, first_byte = -1, first_scale = -1;
  for (size_t i = 0; i < qw.size(); ++i)
    if (qw[i] != qg[i] && byte_mismatches++ == 0) first_byte = int64_t(i);
  for (size_t i = 0; i < sw.size(); ++i)
    if (sw[i] != sg[i] && scale_mismatches++ == 0) first_scale = int64_t(i);
  const size_t at = size_t(std::max<int64_t>(first_byte, 0));
  EXPECT_EQ(byte_mismatches, 0) << "first at row " << first_byte / want.ldq << ", column " << first_byte % want.ldq
                                << " (" << cols << " columns): library " << int(qw[at]) << ", header " << int(qg[at]);
  const size_t s = size_t(std::max<int64_t>(first_scale, 0));
  EXPECT_EQ(scale_mismatches, 0) << "first at float " << first_scale << ": library 0x" << std::hex << sw[s]
                                 << ", header 0x" << sg[s];
}

unsigned grid_for(int64_t items, int64_t items_per_block) {
  return unsigned(std::clamp<int64_t>((items + items_per_block - 1) / items_per_block, 1, 4096));
}

template <int kLanes, bool kPow2>
void run_per_token(const host::Bf16Host& x, const DeviceBuffer& dx, float mul) {
  SCOPED_TRACE(testing::Message() << kLanes << " lanes per group" << (kPow2 ? ", pow2" : "") << ", mul " << mul);
  const int64_t rows = x.rows, cols = x.cols;
  const size_t scale_floats = size_t(fq::per_token_scale_count(rows, cols));
  // The library's reference: quantize_per_token of bf16(x * mul), computed on the host.
  host::Bf16Host y = x;
  if (mul != 1.0f)
    for (uint16_t& e : y.data) e = host::float_to_bf16(host::bf16_to_float(e) * mul);
  DeviceBuffer dy(y.data.size() * 2);
  check(cudaMemcpy(dy.get(), y.data.data(), y.data.size() * 2, cudaMemcpyHostToDevice), "upload y");
  const Buffers want = make_buffers(rows, cols, scale_floats), got = make_buffers(rows, cols, scale_floats);
  quantize_per_token({dy.get(), rows, cols, y.ld}, {want.q.get(), rows, cols, want.ldq},
                     per_token_scale_output(want.sf.get<float>(), rows, cols), QuantizeOptions{kPow2});
  const int64_t items = rows * fq::scale_blocks(cols);
  user_quantize_per_token<kLanes, kPow2><<<grid_for(items, 8 * 32 / kLanes), 256>>>(
      dx.get<__nv_bfloat16>(), x.ld, int(rows), int(cols), mul, got.q.get<unsigned char>(), got.ldq,
      got.sf.get<float>());
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "quantize");
  expect_same(want, got, cols);
}

template <bool kPow2>
void run_per_block(const host::Bf16Host& x, const DeviceBuffer& dx) {
  SCOPED_TRACE(testing::Message() << "per block" << (kPow2 ? ", pow2" : ""));
  const int64_t rows = x.rows, cols = x.cols;
  const size_t scale_floats = size_t(fq::block_scale_count(rows, cols));
  const Buffers want = make_buffers(rows, cols, scale_floats), got = make_buffers(rows, cols, scale_floats);
  quantize_per_block({dx.get(), rows, cols, x.ld}, {want.q.get(), rows, cols, want.ldq},
                     block_scale_output(want.sf.get<float>(), rows, cols), QuantizeOptions{kPow2});
  user_quantize_per_block<kPow2><<<unsigned(fq::block_scale_count(rows, cols)), 256>>>(
      dx.get<__nv_bfloat16>(), x.ld, int(rows), int(cols), got.q.get<unsigned char>(), got.ldq, got.sf.get<float>());
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "quantize");
  expect_same(want, got, cols);
}

class GpuDeviceQuantize : public Sm90Test {};

const std::pair<int64_t, int64_t> kShapes[] = {{1, 128}, {3, 8}, {5, 300}, {37, 1000}, {130, 2056}, {257, 7168}};

}  // namespace

TEST_F(GpuDeviceQuantize, PerTokenBitExactAgainstTheLibrary) {
  for (auto [rows, cols] : kShapes) {
    SCOPED_TRACE(testing::Message() << rows << " x " << cols);
    const host::Bf16Host x = make_input(rows, cols, uint64_t(rows * 1009 + cols));
    const DeviceBuffer dx = upload_vector(x.data);
    run_per_token<16, false>(x, dx, 1.0f);
    run_per_token<16, true>(x, dx, 1.0f);
    run_per_token<32, false>(x, dx, 1.0f);
    run_per_token<32, true>(x, dx, 1.0f);
    run_per_token<1, false>(x, dx, 1.0f);
    run_per_token<1, true>(x, dx, 1.0f);
  }
}

// A fused elementwise op, rounded to bf16 with round_to_bf16 before quantizing, gives the bytes
// of storing the op's bf16 output and calling quantize_per_token on it.
TEST_F(GpuDeviceQuantize, FusedOpRoundedToBf16MatchesTheUnfusedPath) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 1000}, {130, 2056}}) {
    SCOPED_TRACE(testing::Message() << rows << " x " << cols);
    const host::Bf16Host x = make_input(rows, cols, uint64_t(rows * 31 + cols));
    const DeviceBuffer dx = upload_vector(x.data);
    run_per_token<16, false>(x, dx, 1.37f);
    run_per_token<32, true>(x, dx, -0.61f);
  }
}

TEST_F(GpuDeviceQuantize, PerBlockBitExactAgainstTheLibrary) {
  for (auto [rows, cols] : kShapes) {
    SCOPED_TRACE(testing::Message() << rows << " x " << cols);
    const host::Bf16Host x = make_input(rows, cols, uint64_t(rows * 7 + cols));
    const DeviceBuffer dx = upload_vector(x.data);
    run_per_block<false>(x, dx);
    run_per_block<true>(x, dx);
  }
}
