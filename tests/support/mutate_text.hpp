#pragma once

// Random damage to a text file the library or its tools read (a shape set, a tuning
// database), for tests that every mutant is either read into legal values or refused with a
// reason.

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace fp8gemm::test {

// `text` with 1-3 random edits: a bit flipped, 1-8 bytes cut, a JSON punctuation mark or
// digit inserted, the number at or after a random place replaced by one of `values` (edge
// values, other JSON types), or a slice of up to 64 bytes repeated elsewhere.
inline std::string mutate_text(std::string text, std::mt19937_64& rng, const std::vector<std::string>& values) {
  static const std::string punctuation = "[]{},:\"0123456789-e.";
  for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0 && !text.empty(); --edits) {
    const size_t at = rng() % text.size();
    switch (rng() % 5) {
      case 0: text[at] = static_cast<char>(text[at] ^ (1 << (rng() % 8))); break;
      case 1: text.erase(at, 1 + rng() % 8); break;
      case 2: text.insert(at, 1, punctuation[rng() % punctuation.size()]); break;
      case 3: {
        const size_t from = text.find_first_of("0123456789", at);
        if (from == std::string::npos || values.empty()) break;
        const size_t to = std::min(text.find_first_not_of("0123456789.eE+-", from), text.size());
        text.replace(from, to - from, values[rng() % values.size()]);
        break;
      }
      default: {
        const size_t length = std::min<size_t>(1 + rng() % 64, text.size() - at);
        text.insert(rng() % text.size(), text.substr(at, length));
      }
    }
  }
  return text;
}

}  // namespace fp8gemm::test
