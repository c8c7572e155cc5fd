#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace fp8gemm::detail {

// Reading JSON that comes from a file anyone may have edited (cache entries, tuning
// databases, kernel specs): nesting is bounded before the document is parsed (copying or
// printing a value recurses once per level, so a deep document would overflow the stack),
// and integers are taken only when they are JSON integers within the range the field allows
// (a float such as 1e300 converted to int is undefined behaviour).

// What these functions throw: the reason, with nlohmann's message for syntax errors.
struct JsonReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Deeper than any document the library writes (its tuning databases nest 4 levels).
inline constexpr int kMaxJsonDepth = 16;

// The deepest nesting of arrays and objects in `text` (brackets inside strings not counted),
// stopping early once it passes `limit`.
int json_depth(std::string_view text, int limit);

// Parses one JSON document nested at most `max_depth` levels deep.
nlohmann::json parse_json(std::string_view text, int max_depth = kMaxJsonDepth);

// object[key] as an integer in [lo, hi]; JsonReadError naming the key if it is missing, not a
// JSON integer, or out of range.
int64_t json_integer(const nlohmann::json& object, const char* key, int64_t lo, int64_t hi);

// The same where the key may be absent (then `fallback`).
int64_t json_integer_or(const nlohmann::json& object, const char* key, int64_t fallback, int64_t lo, int64_t hi);

// object[key] as a string; JsonReadError naming the key otherwise.
std::string json_string(const nlohmann::json& object, const char* key);

}  // namespace fp8gemm::detail
