#include "common/shape_file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace fp8gemm::host {
namespace {

// "m_grouped_contiguous" / "m_grouped_masked": every (groups, expected_m) with every (n, k).
void read_grouped(const std::string& section, const nlohmann::json& j, GemmKind kind, std::vector<GroupedShape>* out) {
  const bool masked = kind == GemmKind::GroupedMasked;
  if (!j.is_object() || !j.contains("groups_expected_m") || !j.contains("nk"))
    throw std::runtime_error("section '" + section + "' needs \"groups_expected_m\": [[groups, expected_m], ...] and "
                             "\"nk\": [[n, k], ...]" + (masked ? " (and \"max_m\")" : ""));
  int64_t max_m = 0;
  if (masked) {
    if (!j.contains("max_m")) throw std::runtime_error("section '" + section + "' needs \"max_m\" (rows per group)");
    max_m = j.at("max_m").get<int64_t>();
  }
  for (const auto& ge : j.at("groups_expected_m"))
    for (const auto& nk : j.at("nk")) {
      GroupedShape s;
      s.kind = kind;
      s.groups = ge.at(0).get<int64_t>();
      s.expected_m = ge.at(1).get<int64_t>();
      s.max_m = max_m;
      s.n = nk.at(0).get<int64_t>();
      s.k = nk.at(1).get<int64_t>();
      if (s.groups < 1 || s.expected_m < 1 || s.n < 1 || s.k < 1)
        throw std::runtime_error("section '" + section + "': groups, expected_m, n and k must be positive");
      if (masked && s.expected_m > max_m)
        throw std::runtime_error("section '" + section + "': expected_m " + std::to_string(s.expected_m) +
                                 " is larger than max_m " + std::to_string(max_m));
      out->push_back(s);
    }
}

}  // namespace

GemmShape prewarm_shape(const GroupedShape& shape) {
  const int64_t segment = (shape.expected_m + kGroupedSegmentRows - 1) / kGroupedSegmentRows * kGroupedSegmentRows;
  const int64_t m = shape.kind == GemmKind::GroupedMasked ? shape.expected_m : segment;
  return GemmShape{shape.groups * m, shape.n, shape.k, shape.kind, shape.groups};
}

GemmShape prewarm_shape(const KGroupedShape& shape) {
  GemmShape s{shape.m, shape.n, shape.groups * k_grouped_columns(shape.expected_k), GemmKind::KGroupedWeightGradient};
  s.groups = shape.groups;
  return s;
}

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
    const nlohmann::json* grouped[2] = {nullptr, nullptr};  // contiguous, masked: read in this order
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "about") continue;
      if (it.key() == "wgrad") {
        if (it.value().contains("mnk"))
          for (const auto& t : it.value().at("mnk"))
            out.wgrad.push_back({t.at(0).get<int64_t>(), t.at(1).get<int64_t>(), t.at(2).get<int64_t>(),
                                 GemmKind::WeightGradient});
        continue;
      }
      if (it.key() == "k_grouped") {
        if (!it.value().is_object() || !it.value().contains("groups_m_n_expected_k"))
          throw std::runtime_error("section 'k_grouped' needs \"groups_m_n_expected_k\": [[groups, m, n, expected_k], ...]");
        for (const auto& t : it.value().at("groups_m_n_expected_k")) {
          KGroupedShape s{t.at(0).get<int64_t>(), t.at(1).get<int64_t>(), t.at(2).get<int64_t>(),
                          t.at(3).get<int64_t>()};
          if (s.groups < 1 || s.m < 1 || s.n < 1 || s.expected_k < 1)
            throw std::runtime_error("section 'k_grouped': groups, m, n and expected_k must be positive");
          out.k_grouped.push_back(s);
        }
        continue;
      }
      if (it.key() == "m_grouped_contiguous" || it.key() == "m_grouped_masked") {
        grouped[it.key() == "m_grouped_masked" ? 1 : 0] = &it.value();
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
    if (grouped[0]) read_grouped("m_grouped_contiguous", *grouped[0], GemmKind::GroupedContiguous, &out.grouped);
    if (grouped[1]) read_grouped("m_grouped_masked", *grouped[1], GemmKind::GroupedMasked, &out.grouped);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("shape file '" + path + "': " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("shape file '" + path + "': " + e.what());
  }
  if (out.dense.empty() && out.wgrad.empty() && out.grouped.empty() && out.k_grouped.empty())
    throw std::runtime_error("shape file '" + path +
                             "' has no shapes (expected \"dense\": {\"m\": [...], \"nk\": [[n, k], ...]}, "
                             "\"wgrad\": {\"mnk\": [[m, n, k], ...]}, \"m_grouped_contiguous\" or "
                             "\"m_grouped_masked\": {\"groups_expected_m\": [[g, m], ...], \"nk\": [[n, k], ...]}, \"k_grouped\": "
                             "{\"groups_m_n_expected_k\": [[g, m, n, k], ...]})");
  return out;
}

}  // namespace fp8gemm::host
