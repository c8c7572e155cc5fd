#include "util/json_read.hpp"

#include <fmt/format.h>

namespace fp8gemm::detail {

int json_depth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_json(std::string_view text, int max_depth) {
  if (json_depth(text, max_depth) > max_depth)
    throw JsonReadError(fmt::format("nested more than {} levels deep", max_depth));
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw JsonReadError(e.what());
  }
}

namespace {

const nlohmann::json& member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) throw JsonReadError(fmt::format("expected an object holding \"{}\"", key));
  const auto it = object.find(key);
  if (it == object.end()) throw JsonReadError(fmt::format("\"{}\" is missing", key));
  return *it;
}

int64_t integer_value(const nlohmann::json& v, const char* key, int64_t lo, int64_t hi) {
  // (An unsigned JSON integer past INT64_MAX is out of every range asked for.)
  const bool fits = v.is_number_integer() && (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t(INT64_MAX));
  const int64_t x = fits ? v.get<int64_t>() : 0;
  if (!fits || x < lo || x > hi)
    throw JsonReadError(fmt::format("\"{}\" must be an integer in [{}, {}]", key, lo, hi));
  return x;
}

}  // namespace

int64_t json_integer(const nlohmann::json& object, const char* key, int64_t lo, int64_t hi) {
  return integer_value(member(object, key), key, lo, hi);
}

int64_t json_integer_or(const nlohmann::json& object, const char* key, int64_t fallback, int64_t lo, int64_t hi) {
  if (object.is_object() && !object.contains(key)) return fallback;
  return json_integer(object, key, lo, hi);
}

std::string json_string(const nlohmann::json& object, const char* key) {
  const nlohmann::json& v = member(object, key);
  if (!v.is_string()) throw JsonReadError(fmt::format("\"{}\" must be a string", key));
  return v.get<std::string>();
}

}  // namespace fp8gemm::detail
