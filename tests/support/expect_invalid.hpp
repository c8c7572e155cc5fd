#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::test {

// Expects `call` to throw Error(InvalidArgument) whose message contains `needle` (and `fn`,
// the function that rejects, when given).
inline void expect_invalid(const std::function<void()>& call, const std::string& needle, const std::string& fn = "") {
  try {
    call();
    ADD_FAILURE() << "accepted; expected InvalidArgument mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fn), std::string::npos) << e.what();
  }
}

}  // namespace fp8gemm::test
