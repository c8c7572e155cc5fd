#include "compiler/resource_report.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <sstream>

namespace fp8gemm::detail {
namespace {

// The decimal digits of text[begin, end), saturated at INT_MAX (a log's numbers are counts).
int decimal(const std::string& text, size_t begin, size_t end) {
  int64_t v = 0;
  for (size_t i = begin; i < end && std::isdigit(static_cast<unsigned char>(text[i])); ++i)
    v = std::min<int64_t>(v * 10 + (text[i] - '0'), INT_MAX);
  return static_cast<int>(v);
}

// The integer right before `suffix` in `line` (e.g. "12 bytes spill stores"), or -1.
int number_before(const std::string& line, const std::string& suffix) {
  const size_t at = line.find(suffix);
  if (at == std::string::npos) return -1;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == end) return -1;
  return decimal(line, begin, end);
}

// a + b for counts, saturated at INT_MAX.
int add(int a, int b) { return static_cast<int>(std::min<int64_t>(int64_t{a} + b, INT_MAX)); }

}  // namespace

ResourceUsage parse_resource_report(const std::string& log) {
  ResourceUsage r;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("warning") != std::string::npos) r.warnings.push_back(line);
    for (const char* code : {"(C7514)", "(C7517)", "(C7508)", "(C7519)", "(C7520)"})
      if (line.find(code) != std::string::npos) r.performance_notes.push_back(line);
    const size_t used = line.find("Used ");
    if (used != std::string::npos && line.find(" registers") != std::string::npos) {
      r.registers = decimal(line, used + 5, line.size());
      r.parsed = true;
    }
    int v;
    if ((v = number_before(line, "bytes stack frame")) >= 0) r.stack_frame_bytes = add(r.stack_frame_bytes, v);
    if ((v = number_before(line, "bytes spill stores")) >= 0) r.spill_store_bytes = add(r.spill_store_bytes, v);
    if ((v = number_before(line, "bytes spill loads")) >= 0) r.spill_load_bytes = add(r.spill_load_bytes, v);
  }
  return r;
}

}  // namespace fp8gemm::detail
