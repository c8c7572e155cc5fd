// The GPU tests' host-side helpers: uploads, streams and captured graphs, the fp32 output
// checks (weight gradients, dense and k-grouped) and the k-grouped operand layout, written
// once for every test file.

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gpu/gpu_support.hpp"

namespace fp8gemm::gputest {

void expect_kernel_in_disk_cache(const std::string& slug_prefix) {
  if (runtime_info().cache_state != "read-write") return;
  bool found = false;
  for (const CachedKernel& e : cached_kernels()) {
    const std::string& s = e.kernel;
    found |= e.category == "entry" && s.compare(0, slug_prefix.size(), slug_prefix) == 0 &&
             (s.size() == slug_prefix.size() || s[slug_prefix.size()] == '_');
  }
  EXPECT_TRUE(found) << "no kernel " << slug_prefix << "* in the disk cache: the explicit config did not run";
}

std::string config_slug_prefix(const char* kind, int64_t n, int64_t k, const KernelConfig& config) {
  return std::string(kind) + "_n" + std::to_string(n) + (k >= 0 ? "_k" + std::to_string(k) : std::string()) +
         "_bm" + std::to_string(config.block_m) + "_bn" + std::to_string(config.block_n) + "_s" +
         std::to_string(config.stages) + "_g" + std::to_string(config.group_n);
}

DeviceBuffer upload_bytes(const void* data, size_t bytes) {
  DeviceBuffer b(bytes);
  check(cudaMemcpy(b.get(), data, bytes, cudaMemcpyHostToDevice), "upload");
  check(cudaDeviceSynchronize(), "upload");
  return b;
}

CapturedGraph::CapturedGraph(cudaStream_t stream, const std::function<void()>& enqueue) {
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
  try {
    enqueue();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph_);
    if (graph_) cudaGraphDestroy(graph_);  // (no destructor runs for an object that never was)
    throw;
  }
  check(cudaStreamEndCapture(stream, &graph_), "end capture");
  check(cudaGraphInstantiate(&exec_, graph_, 0), "instantiate");
}

CapturedGraph::~CapturedGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
}

void CapturedGraph::replay(cudaStream_t stream) const {
  check(cudaGraphLaunch(exec_, stream), "replay");
  check(cudaStreamSynchronize(stream), "replay");
}

Fp32Output make_fp32_output(int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
  Fp32Output out;
  out.rows = rows;
  out.cols = cols;
  out.ld = ld;
  out.d = DeviceBuffer(size_t((rows + 2 * out.guard_rows) * ld) * 4);
  out.c = DeviceBuffer(size_t(rows * ld) * 4);
  out.c_host.resize(size_t(rows * ld));
  host::SplitMix64 rng(seed);
  for (float& v : out.c_host) v = float(rng.uniform() * 200 - 100);
  check(cudaMemcpy(out.c.get(), out.c_host.data(), out.c_host.size() * 4, cudaMemcpyHostToDevice), "upload C");
  return out;
}

void init_fp32_output(const Fp32Output& out, CMode mode) {
  std::vector<float> init(out.d.bytes() / 4, NAN);
  if (mode == CMode::InPlace) std::copy(out.c_host.begin(), out.c_host.end(), init.begin() + out.guard_rows * out.ld);
  check(cudaMemcpy(out.d.get(), init.data(), init.size() * 4, cudaMemcpyHostToDevice), "init D");
  check(cudaDeviceSynchronize(), "init D");
}

std::string Fp32Comparison::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "rel_error=%.3e non_finite=%lld touched_outside=%lld", rel_error,
                (long long)non_finite, (long long)touched_outside);
  return buf;
}

namespace {

// D as it is on the device; counts in *outside the elements of the guards and the row padding
// that no longer hold what init_fp32_output left there.
std::vector<float> download_d(const Fp32Output& out, CMode mode, int64_t* outside) {
  std::vector<float> got(out.d.bytes() / 4);
  check(cudaMemcpy(got.data(), out.d.get(), got.size() * 4, cudaMemcpyDeviceToHost), "download D");
  *outside = 0;
  for (int64_t row = -out.guard_rows; row < out.rows + out.guard_rows; ++row) {
    const bool in_rows = row >= 0 && row < out.rows;
    for (int64_t col = in_rows ? out.cols : 0; col < out.ld; ++col) {
      const float g = got[size_t((row + out.guard_rows) * out.ld + col)];
      const float before = mode == CMode::InPlace && in_rows ? out.c_host[size_t(row * out.ld + col)] : NAN;
      *outside += !(std::isnan(before) ? std::isnan(g) : g == before);
    }
  }
  return got;
}

// Accumulates one element of D against C + the product into a comparison's sums.
struct ErrorSum {
  double num = 0, den = 0;
  void add(const Fp32Output& out, CMode mode, const std::vector<float>& got, int64_t row, int64_t col, double product,
           Fp32Comparison& res) {
    const float g = got[size_t((row + out.guard_rows) * out.ld + col)];
    const double w = product + (mode == CMode::None ? 0.0 : double(out.c_host[size_t(row * out.ld + col)]));
    res.non_finite += !std::isfinite(g);
    num += (g - w) * (g - w);
    den += w * w;
  }
  double rel() const { return std::sqrt(num / std::max(den, 1e-300)); }
};

}  // namespace

Fp32Comparison compare_fp32(const Fp32Output& out, CMode mode, const std::vector<double>& want,
                            const std::function<bool(int64_t row)>& checked) {
  Fp32Comparison res;
  const std::vector<float> got = download_d(out, mode, &res.touched_outside);
  ErrorSum sum;
  for (int64_t row = 0; row < out.rows; ++row) {
    if (checked && !checked(row)) continue;
    for (int64_t col = 0; col < out.cols; ++col) sum.add(out, mode, got, row, col, want[size_t(row * out.cols + col)], res);
  }
  res.rel_error = sum.rel();
  return res;
}

Fp32Comparison sampled_compare_fp32(const Fp32Output& out, CMode mode, int samples, uint64_t seed,
                                    const std::function<double(int64_t row, int64_t col)>& want) {
  Fp32Comparison res;
  const std::vector<float> got = download_d(out, mode, &res.touched_outside);
  host::SplitMix64 rng(seed);
  ErrorSum sum;
  for (int s = 0; s < samples; ++s) {
    const int64_t row = int64_t(rng.next() % uint64_t(out.rows)), col = int64_t(rng.next() % uint64_t(out.cols));
    sum.add(out, mode, got, row, col, want(row, col), res);
  }
  res.rel_error = sum.rel();
  return res;
}

void expect_fp32_good(const Fp32Comparison& c) {
  EXPECT_EQ(c.non_finite, 0) << "unwritten or non-finite outputs: " << c.describe();
  EXPECT_EQ(c.touched_outside, 0) << "wrote outside D (guard rows or row padding): " << c.describe();
  EXPECT_LT(c.rel_error, kFp32Tolerance) << c.describe();
}

std::vector<int64_t> k_group_starts(const std::vector<int32_t>& ks, int64_t* total) {
  std::vector<int64_t> starts;
  int64_t at = 0;
  for (int32_t k : ks) {
    starts.push_back(at);
    at += k_grouped_columns(k);
  }
  *total = at;
  return starts;
}

host::Fp8Operand k_grouped_operand(int64_t rows, int64_t k_total, const std::vector<int32_t>& ks, uint64_t seed) {
  host::Fp8Operand op = host::random_operand(rows, k_total, k_total, true, seed);
  int64_t at = 0;
  for (int32_t k : ks) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = at + std::max<int32_t>(k, 0); c < at + k_grouped_columns(k); ++c)
        op.data[size_t(r * op.ld + c)] = 0;
    at += k_grouped_columns(k);
  }
  return op;
}

}  // namespace fp8gemm::gputest
