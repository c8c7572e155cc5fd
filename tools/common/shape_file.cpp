#include "common/shape_file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace fp8gemm::host {

ShapeFile read_shape_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open shape file '" + path + "'");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("shape file '" + path + "' is not valid JSON: " + e.what());
  }
  ShapeFile out;
  try {
    if (!j.is_object()) throw std::runtime_error("the top level must be an object");
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "about") continue;
      if (it.key() == "wgrad") {
        if (it.value().contains("mnk"))
          for (const auto& t : it.value().at("mnk"))
            out.wgrad.push_back({t.at(0).get<int64_t>(), t.at(1).get<int64_t>(), t.at(2).get<int64_t>(),
                                 GemmKind::WeightGradient});
        continue;
      }
      if (it.key() != "dense") {
        out.skipped.push_back(it.key());
        continue;
      }
      const nlohmann::json& dense = it.value();
      if (dense.contains("m") && dense.contains("nk")) {
        for (const auto& nk : dense.at("nk"))
          for (const auto& m : dense.at("m"))
            out.dense.push_back({m.get<int64_t>(), nk.at(0).get<int64_t>(), nk.at(1).get<int64_t>()});
      }
      if (dense.contains("mnk"))
        for (const auto& t : dense.at("mnk"))
          out.dense.push_back({t.at(0).get<int64_t>(), t.at(1).get<int64_t>(), t.at(2).get<int64_t>()});
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("shape file '" + path + "': " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("shape file '" + path + "': " + e.what());
  }
  if (out.dense.empty() && out.wgrad.empty())
    throw std::runtime_error("shape file '" + path +
                             "' has no shapes (expected \"dense\": {\"m\": [...], \"nk\": [[n, k], ...]} and/or "
                             "\"wgrad\": {\"mnk\": [[m, n, k], ...]})");
  return out;
}

}  // namespace fp8gemm::host
