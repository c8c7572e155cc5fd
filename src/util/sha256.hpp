#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fp8gemm::detail {

// SHA-256 (FIPS 180-4). Used for cache keys and cache entry integrity.
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  Sha256& update(const void* data, size_t size);
  Sha256& update(std::string_view text) { return update(text.data(), text.size()); }
  Digest finish();

  static Digest of(const void* data, size_t size) { return Sha256().update(data, size).finish(); }
  static std::string hex(const Digest& digest);

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0;
};

}  // namespace fp8gemm::detail
