#pragma once

#include <cuda.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "driver/tma.hpp"

namespace fp8gemm::detail {

// Encoded tensor maps by request. A CUtensorMap is a pure function of the request
// (address, sizes, strides, box, swizzle), so calls that pass the same buffers (weights
// always; activations when a server reuses its buffers) skip the driver's encode.
// Direct-mapped, kSlots entries; one per thread (no locking on the call path).
class TmaCache {
 public:
  static constexpr size_t kSlots = 64;

  // The map for `t`, encoded with `encode(t)` on a miss.
  template <class Encode>
  const CUtensorMap& get(const Tma2d& t, Encode&& encode) {
    Slot& s = slots_[hash(t) % kSlots];
    if (!s.used || !same(s.request, t)) {
      s.map = encode(t);  // may throw: the slot is only marked used after success
      s.request = t;
      s.used = true;
      ++misses_;
    } else {
      ++hits_;
    }
    return s.map;
  }

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

  static bool same(const Tma2d& a, const Tma2d& b) {
    return a.dtype == b.dtype && a.base == b.base && a.dims[0] == b.dims[0] && a.dims[1] == b.dims[1] &&
           a.row_stride_bytes == b.row_stride_bytes && a.box[0] == b.box[0] && a.box[1] == b.box[1] &&
           a.swizzle == b.swizzle && a.depth == b.depth && a.depth_stride_bytes == b.depth_stride_bytes;
  }

 private:
  static size_t hash(const Tma2d& t) {
    uint64_t h = reinterpret_cast<uintptr_t>(t.base) * 0x9E3779B97F4A7C15ull;
    for (uint64_t v : {uint64_t(t.dtype), t.dims[0], t.dims[1], t.row_stride_bytes, uint64_t(t.box[0]),
                       uint64_t(t.box[1]), uint64_t(t.swizzle), t.depth, t.depth_stride_bytes})
      h = (h ^ v) * 0x100000001B3ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }

  struct Slot {
    bool used = false;
    Tma2d request;
    CUtensorMap map;
  };
  std::array<Slot, kSlots> slots_{};
  uint64_t hits_ = 0, misses_ = 0;
};

// encode_tma through this thread's cache.
const CUtensorMap& encode_tma_cached(const Tma2d& t);

}  // namespace fp8gemm::detail
