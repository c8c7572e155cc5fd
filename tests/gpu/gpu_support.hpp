#pragma once

// Test-only GPU helpers (built with nvcc): device buffers, the fp64 reference GEMM on
// the dequantized FP8 operands, and an on-device comparison that also checks that
// every output element was written and nothing around D was touched.

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/fp8_host.hpp"
#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::gputest {

// Empty string if an sm_90 device is usable, else why not.
std::string sm90_unavailable_reason();

// The fixture of every GPU test suite: each test is skipped, with the reason shown, when no
// sm_90 device is usable.
class Sm90Test : public testing::Test {
 protected:
  void SetUp() override {
    const std::string why = sm90_unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << "GPU test skipped: " << why;
  }
};

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { check(cudaMalloc(&ptr_, bytes ? bytes : 1), "cudaMalloc"); }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  template <typename T = void>
  T* get() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A host operand copied to the device: data (rows * ld bytes) and its scales.
struct DeviceOperand {
  DeviceBuffer data, scales;
  host::Fp8Operand host;
};
DeviceOperand upload(host::Fp8Operand op);

// ref[m][n] (row-major, fp64, on the device) = sum_k A(m, k) * B(n, k) on dequantized values.
// Each operand's scales are per token (col stride scale_stride) or per block, as its host
// description says.
void reference_gemm(const DeviceOperand& a, const DeviceOperand& b, double* ref, cudaStream_t stream = 0);

// A bf16 output with `guard` poisoned elements before and after rows * ld elements.
struct GuardedOutput {
  int64_t rows = 0, cols = 0, ld = 0, guard = 256;
  DeviceBuffer buffer;
  uint16_t* d() const { return buffer.get<uint16_t>() + guard; }
  int64_t total() const { return rows * ld + 2 * guard; }
};
GuardedOutput make_output(int64_t rows, int64_t cols, int64_t ld);
void poison(const GuardedOutput& out, cudaStream_t stream = 0);

struct DeviceComparison {
  double rel_error = 0.0;
  double max_abs_error = 0.0;
  int64_t worst_row = -1, worst_col = -1;
  double worst_got = 0.0, worst_want = 0.0;
  unsigned long long non_finite = 0;    // unwritten (poison) or NaN/Inf outputs inside D
  unsigned long long touched_outside = 0;  // modified elements in guards or row padding
  std::string describe() const;
};

// Compares D against the reference; synchronizes.
DeviceComparison compare(const GuardedOutput& out, const double* ref);

// True if every element of the buffer still holds the poison pattern; synchronizes.
bool all_poisoned(const GuardedOutput& out);

// Host values copied to a new device buffer; synchronizes.
DeviceBuffer upload_bytes(const void* data, size_t bytes);
template <typename T>
DeviceBuffer upload_vector(const std::vector<T>& values) {
  return upload_bytes(values.data(), values.size() * sizeof(T));
}
// Int32 values (group indices, counts).
inline DeviceBuffer upload_ints(const std::vector<int32_t>& values) { return upload_vector(values); }

// A call with an explicit KernelConfig ran that config's kernel: the disk cache holds an entry
// whose slug starts with `slug_prefix` (kind, N, K and the config up to "_g<group_n>",
// e.g. "gemm1d2d_gc_n264_k528_bm64_bn48_s8_g8"). Checked only where the cache is
// writable (a memory-only cache lists no entries).
void expect_kernel_in_disk_cache(const std::string& slug_prefix);
// The slug prefix of a grouped kind's kernel ("gemm1d2d_gc", "gemm1d2d_gm", "gemm1d1d_kg";
// k < 0: no "_k" part, as for the k-grouped kernel) with `config`.
std::string config_slug_prefix(const char* kind, int64_t n, int64_t k, const KernelConfig& config);

// --- fp32 outputs (the weight gradients)

// What the weight gradient is given as C: nothing (C = 0), a separate matrix, or D itself.
enum class CMode { None, Separate, InPlace };

// The relative error the fp32 outputs are held to: the tensor cores accumulate each 128-deep
// K block below fp32 precision before it is promoted (measured ~1.3e-4 to 2e-4).
constexpr double kFp32Tolerance = 5e-4;

// An fp32 D [rows, cols] with row stride ld (ld > cols leaves padding) and `guard_rows` rows
// before and after it, and a random C [rows, ld] on the host and the device.
struct Fp32Output {
  int64_t rows = 0, cols = 0, ld = 0, guard_rows = 2;
  DeviceBuffer d, c;
  std::vector<float> c_host;
  Fp32Matrix d_matrix() const { return {d.get<float>() + guard_rows * ld, rows, cols, ld}; }
  Fp32Matrix c_matrix() const { return {c.get<float>(), rows, cols, ld}; }
};
Fp32Output make_fp32_output(int64_t rows, int64_t cols, int64_t ld, uint64_t seed);

// D poisoned (NaN) everywhere, or (InPlace) C in D's rows and NaN in the guards. Synchronizes:
// a pageable copy may return before it lands, and a non-blocking stream would not wait for it
// (nor for earlier uploads).
void init_fp32_output(const Fp32Output& out, CMode mode);

// The C argument of a call in `mode`: nullptr, &c or &d (which must outlive the call).
inline const Fp32Matrix* c_argument(CMode mode, const Fp32Matrix& d, const Fp32Matrix& c) {
  return mode == CMode::None ? nullptr : mode == CMode::Separate ? &c : &d;
}

struct Fp32Comparison {
  double rel_error = 0;
  int64_t non_finite = 0;       // unwritten (poison) or non-finite elements of D
  int64_t touched_outside = 0;  // changed elements in the guards or the row padding
  std::string describe() const;
};

// D (downloaded) against C + want (want [rows, cols] row-major fp64; C only when mode is not
// None) over the rows `checked` accepts (all when empty); the guards and the row padding must
// hold what init_fp32_output left there.
Fp32Comparison compare_fp32(const Fp32Output& out, CMode mode, const std::vector<double>& want,
                            const std::function<bool(int64_t row)>& checked = {});

// Every element written, nothing outside D, the error within kFp32Tolerance.
void expect_fp32_good(const Fp32Comparison& c);

// The same on `samples` elements of D drawn at random (the full fp64 reference of the largest
// shapes would take minutes): want(row, col) gives the product there. The guards and the row
// padding are still checked whole.
Fp32Comparison sampled_compare_fp32(const Fp32Output& out, CMode mode, int samples, uint64_t seed,
                                    const std::function<double(int64_t row, int64_t col)>& want);

// --- the k-grouped layout

// The first column of each group (as gemm_fp8_nt_wgrad_k_grouped lays them out: every group
// starts on a 128-column boundary) and the total columns.
std::vector<int64_t> k_group_starts(const std::vector<int32_t>& ks, int64_t* total);

// A per-token operand [rows, k_total] whose columns from each group's end to its next
// 128-column boundary hold zeros, as the layout requires.
host::Fp8Operand k_grouped_operand(int64_t rows, int64_t k_total, const std::vector<int32_t>& ks, uint64_t seed);

// A non-blocking stream of the current device, destroyed with the object.
class TestStream {
 public:
  TestStream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~TestStream() { cudaStreamDestroy(stream_); }
  TestStream(const TestStream&) = delete;
  TestStream& operator=(const TestStream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// What `enqueue` puts on `stream`, captured (thread-local mode; nothing runs) and instantiated;
// destroyed with the object. A call that throws under capture ends the capture and rethrows.
class CapturedGraph {
 public:
  CapturedGraph(cudaStream_t stream, const std::function<void()>& enqueue);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  // Replays the graph on `stream` and waits for it.
  void replay(cudaStream_t stream) const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// A call that must be rejected: it throws InvalidArgument and, once the device is
// synchronized, `untouched()` still holds (the call wrote nothing).
template <typename Call, typename Untouched>
void expect_rejected(const char* what, Call&& call, Untouched&& untouched) {
  SCOPED_TRACE(what);
  try {
    call();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
  }
  check(cudaDeviceSynchronize(), "after a rejected call");
  EXPECT_TRUE(untouched()) << "a rejected call wrote D";
}

}  // namespace fp8gemm::gputest
