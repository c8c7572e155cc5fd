#pragma once

#include <string>
#include <vector>

#include "fp8gemm/fp8gemm.hpp"

namespace fp8gemm::host {

struct ShapeFile {
  std::vector<GemmShape> dense;       // every (m, n, k) of the "dense" section
  std::vector<GemmShape> wgrad;       // the "wgrad" section (kind WeightGradient)
  std::vector<std::string> skipped;   // sections this version does not use
};

// Reads a shape set (shapes/deepseek-v3.json format):
//   {"dense": {"m": [1, 128], "nk": [[2112, 7168], ...]}}  -> every m with every (n, k)
//   {"dense": {"mnk": [[m, n, k], ...]}}                    -> listed triples
//   {"wgrad": {"mnk": [[m, n, k], ...]}}                    -> weight-gradient triples
// Throws std::runtime_error with the file name and the problem.
ShapeFile read_shape_file(const std::string& path);

}  // namespace fp8gemm::host
