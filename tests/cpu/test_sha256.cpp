#include <gtest/gtest.h>

#include "util/sha256.hpp"

using fp8gemm::detail::Sha256;

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256::hex(Sha256::of("", 0)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256::hex(Sha256::of("abc", 3)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(Sha256::hex(Sha256::of(two_blocks.data(), two_blocks.size())),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7));
  Sha256 h;
  for (size_t i = 0; i < data.size(); i += 13) h.update(data.substr(i, 13));
  EXPECT_EQ(Sha256::hex(h.finish()), Sha256::hex(Sha256::of(data.data(), data.size())));
}
