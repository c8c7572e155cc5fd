#include "common/shape_file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace fp8gemm::host {
namespace {

using nlohmann::json;

// A problem of the file at a place in it ("section 'dense', \"mnk\"[3]"), with the rule.
[[noreturn]] void bad(const std::string& where, const std::string& rule) { throw std::runtime_error(where + ": " + rule); }

// How a value is quoted in a message: its JSON text, cut short when long.
std::string shown(const json& v) {
  std::string text = v.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// A size: a JSON integer (not 2048.5, not 1e3) in [1, kMaxDimension].
int64_t size_at(const json& v, const std::string& where, const char* what) {
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(kMaxDimension))
    bad(where, std::string(what) + " = " + shown(v) + " is more than " + std::to_string(kMaxDimension) +
                   ", the largest size the library takes");
  // (Integers past 2^64 are read as floating point.)
  if (v.is_number_float() && v.get<double>() > static_cast<double>(kMaxDimension))
    bad(where, std::string(what) + " = " + shown(v) + " is more than " + std::to_string(kMaxDimension) +
                   ", the largest size the library takes");
  if (!v.is_number_integer()) bad(where, std::string(what) + " = " + shown(v) + " is not an integer");
  const int64_t x = v.get<int64_t>();
  if (x < 1) bad(where, std::string(what) + " = " + std::to_string(x) + " must be positive");
  if (x > kMaxDimension)
    bad(where, std::string(what) + " = " + std::to_string(x) + " is more than " + std::to_string(kMaxDimension) +
                   ", the largest size the library takes");
  return x;
}

// A count that may be 0 (an expert without rows, a group without K): a JSON integer in
// [0, kMaxDimension].
int64_t count_at(const json& v, const std::string& where, const char* what) {
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() < 0)
    bad(where, std::string(what) + " = " + std::to_string(v.get<int64_t>()) + " must be 0 or more");
  if (v.is_number_unsigned() && v.get<uint64_t>() == 0) return 0;
  return size_at(v, where, what);
}

// The listed sizes of a grouped entry ("rows" / "ks"): entry `i` of the section's `key`,
// exactly `groups` counts.
std::vector<int64_t> sizes_at(const json& lists, size_t i, int64_t groups, const std::string& section,
                              const char* key, const char* what) {
  const std::string where = "section '" + section + "', \"" + key + "\"[" + std::to_string(i) + "]";
  const json& v = lists[i];
  if (!v.is_array() || v.size() != static_cast<size_t>(groups))
    bad(where, std::string("must list ") + std::to_string(groups) + " " + what + " (one per group of entry " +
                   std::to_string(i) + "), got " + shown(v));
  std::vector<int64_t> out;
  for (size_t g = 0; g < v.size(); ++g) out.push_back(count_at(v[g], where, what));
  return out;
}

// A section's optional "rows" / "ks": one list per entry of its main list.
const json* listed_sizes(const json& section, const char* key, size_t entries, const std::string& where) {
  if (!section.contains(key)) return nullptr;
  const json& v = section.at(key);
  if (!v.is_array() || v.size() != entries)
    bad(where + ", \"" + key + "\"",
        "must hold one list per entry (" + std::to_string(entries) + "), got " + shown(v));
  return &v;
}

// A list of `n` sizes named `names` (e.g. "[m, n, k]").
std::vector<int64_t> tuple_at(const json& v, size_t n, const std::string& where, const std::vector<const char*>& names) {
  std::string shape = "[";
  for (size_t i = 0; i < names.size(); ++i) shape += std::string(i ? ", " : "") + names[i];
  shape += "]";
  if (!v.is_array() || v.size() != n) bad(where, "must be " + shape + " (" + std::to_string(n) + " integers), got " + shown(v));
  std::vector<int64_t> out;
  for (size_t i = 0; i < n; ++i) out.push_back(size_at(v[i], where, names[i]));
  return out;
}

const json& array_at(const json& section, const char* key, const std::string& where) {
  if (!section.contains(key)) bad(where, std::string("needs \"") + key + "\"");
  const json& v = section.at(key);
  if (!v.is_array() || v.empty()) bad(where + ", \"" + key + "\"", "must be a non-empty array");
  return v;
}

// Only the keys a section defines (and "about") are allowed.
void only_keys(const json& section, const std::string& where, const std::set<std::string>& allowed) {
  if (!section.is_object()) bad(where, "must be an object");
  for (auto it = section.begin(); it != section.end(); ++it)
    if (it.key() != "about" && !allowed.count(it.key())) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
      bad(where, "unknown key \"" + it.key() + "\" (this section takes " + list + " and \"about\")");
    }
}

// A section's "every x with every y" lists must not multiply into more shapes than any run
// could use (20,000 m values with 5,000 [n, k] pairs asked for 10^8 shapes, gigabytes).
constexpr size_t kMaxShapesPerProduct = size_t(1) << 20;
void check_product(const std::string& where, const char* x, size_t xs, const char* y, size_t ys) {
  if (xs * ys > kMaxShapesPerProduct)
    bad(where, std::to_string(xs) + " " + x + " x " + std::to_string(ys) + " " + y + " are " + std::to_string(xs * ys) +
                   " shapes, more than " + std::to_string(kMaxShapesPerProduct) + "; list fewer");
}

std::string item(const std::string& section, const char* key, size_t i) {
  return "section '" + section + "', \"" + key + "\"[" + std::to_string(i) + "]";
}

// "m_grouped_contiguous" / "m_grouped_masked": every (groups, expected_m) with every (n, k).
void read_grouped(const std::string& section, const json& j, GemmKind kind, std::vector<GroupedShape>* out) {
  const bool masked = kind == GemmKind::GroupedMasked;
  const std::string where = "section '" + section + "'";
  if (masked) only_keys(j, where, {"max_m", "groups_expected_m", "nk", "rows"});
  else only_keys(j, where, {"groups_expected_m", "nk", "rows"});
  int64_t max_m = 0;
  if (masked) {
    if (!j.contains("max_m")) bad(where, "needs \"max_m\" (rows per group)");
    max_m = size_at(j.at("max_m"), where + ", \"max_m\"", "max_m");
  }
  const json& ges = array_at(j, "groups_expected_m", where);
  const json& nks = array_at(j, "nk", where);
  check_product(where, "[groups, expected_m]", ges.size(), "[n, k]", nks.size());
  const json* listed = listed_sizes(j, "rows", ges.size(), where);
  for (size_t a = 0; a < ges.size(); ++a) {
    const std::vector<int64_t> ge = tuple_at(ges[a], 2, item(section, "groups_expected_m", a), {"groups", "expected_m"});
    std::vector<int64_t> rows;
    if (listed) {
      rows = sizes_at(*listed, a, ge[0], section, "rows", "rows");
      int64_t padded = 0;
      for (const int64_t r : rows) {
        if (masked && r > max_m)
          bad(item(section, "rows", a), "an expert's rows " + std::to_string(r) + " are more than max_m " +
                                            std::to_string(max_m));
        padded += grouped_segment_rows(r);
      }
      if (!masked && padded > kMaxDimension)
        bad(item(section, "rows", a), "the experts' rows, each padded to 128, are " + std::to_string(padded) +
                                          ", more than " + std::to_string(kMaxDimension) +
                                          ", the largest size the library takes");
    }
    if (masked && ge[1] > max_m)
      bad(item(section, "groups_expected_m", a),
          "expected_m " + std::to_string(ge[1]) + " is larger than max_m " + std::to_string(max_m));
    // The rows of A all groups take, as prewarm plans them (prewarm_shape).
    const int64_t per_group = masked ? max_m : grouped_segment_rows(ge[1]);
    if (ge[0] * per_group > kMaxDimension)
      bad(item(section, "groups_expected_m", a),
          "groups x " + std::string(masked ? "max_m" : "expected_m (padded to 128 rows)") + " = " +
              std::to_string(ge[0]) + " x " + std::to_string(per_group) + " rows is more than " +
              std::to_string(kMaxDimension) + ", the largest size the library takes");
    for (size_t b = 0; b < nks.size(); ++b) {
      const std::vector<int64_t> nk = tuple_at(nks[b], 2, item(section, "nk", b), {"n", "k"});
      GroupedShape s;
      s.kind = kind;
      s.groups = ge[0];
      s.expected_m = ge[1];
      s.max_m = max_m;
      s.n = nk[0];
      s.k = nk[1];
      s.rows = rows;
      out->push_back(s);
    }
  }
}

// Deeper than any shape file (they nest 4 levels); quoting a value recurses once per level.
constexpr int kMaxDepth = 16;

// Parses the text strictly: one JSON document, no key twice in an object, nested at most
// kMaxDepth levels.
json parse_strict(const std::string& text) {
  std::vector<std::set<std::string>> keys;  // per open object
  std::string duplicate;
  const json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxDepth)
      throw std::runtime_error("nested more than " + std::to_string(kMaxDepth) + " levels deep");
    switch (event) {
      case json::parse_event_t::object_start: keys.emplace_back(); break;
      case json::parse_event_t::object_end: keys.pop_back(); break;
      case json::parse_event_t::key:
        if (!keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
          duplicate = parsed.get<std::string>();
        break;
      default: break;
    }
    return true;
  };
  json j = json::parse(text, callback);  // strict: trailing documents are a parse error
  if (!duplicate.empty()) throw std::runtime_error("key \"" + duplicate + "\" appears twice in one object");
  return j;
}

}  // namespace

GemmShape prewarm_shape(const GroupedShape& shape) {
  const int64_t segment = grouped_segment_rows(shape.expected_m);
  const int64_t m = shape.kind == GemmKind::GroupedMasked ? shape.expected_m : segment;
  return GemmShape{shape.groups * m, shape.n, shape.k, shape.kind, shape.groups};
}

GemmShape prewarm_shape(const KGroupedShape& shape) {
  GemmShape s{shape.m, shape.n, shape.groups * k_grouped_columns(shape.expected_k), GemmKind::KGroupedWeightGradient};
  s.groups = shape.groups;
  return s;
}

ShapeFile read_shape_file(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open shape file '" + path + "'" +
                             (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  // (Bounded: a shape file lists shapes; --shapes /dev/zero must not fill the memory.)
  constexpr size_t kMaxBytes = size_t(16) << 20;
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxBytes) break;
  }
  if (text.size() > kMaxBytes)
    throw std::runtime_error("shape file '" + path + "' is larger than 16 MiB; shape files list shapes, a few "
                             "kilobytes of JSON");
  // (The JSON reader would take a NUL byte for the end of the text and ignore the rest.)
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    throw std::runtime_error("shape file '" + path + "' is not valid JSON: a NUL byte at offset " + std::to_string(nul));
  json j;
  try {
    j = parse_strict(text);
  } catch (const json::exception& e) {
    throw std::runtime_error("shape file '" + path + "' is not valid JSON: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("shape file '" + path + "' is not valid JSON: " + e.what());
  }
  ShapeFile out;
  try {
    if (!j.is_object()) throw std::runtime_error("the top level must be an object");
    const json* grouped[2] = {nullptr, nullptr};  // contiguous, masked: read in this order
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      const json& section = it.value();
      const std::string where = "section '" + key + "'";
      if (key == "about") continue;
      if (key == "wgrad") {
        only_keys(section, where, {"mnk"});
        const json& list = array_at(section, "mnk", where);
        for (size_t i = 0; i < list.size(); ++i) {
          const std::vector<int64_t> t = tuple_at(list[i], 3, item(key, "mnk", i), {"m", "n", "k"});
          out.wgrad.push_back({t[0], t[1], t[2], GemmKind::WeightGradient});
        }
      } else if (key == "k_grouped") {
        only_keys(section, where, {"groups_m_n_expected_k", "ks"});
        const json& list = array_at(section, "groups_m_n_expected_k", where);
        const json* listed = listed_sizes(section, "ks", list.size(), where);
        for (size_t i = 0; i < list.size(); ++i) {
          const std::string at = item(key, "groups_m_n_expected_k", i);
          const std::vector<int64_t> t = tuple_at(list[i], 4, at, {"groups", "m", "n", "expected_k"});
          // The groups' columns side by side (each padded to 128), and their D stacked.
          if (t[0] * k_grouped_columns(t[3]) > kMaxDimension)
            bad(at, "groups x expected_k (padded to 128 columns) = " + std::to_string(t[0]) + " x " +
                        std::to_string(k_grouped_columns(t[3])) + " is more than " + std::to_string(kMaxDimension) +
                        ", the largest K the library takes");
          if (t[0] * t[1] > kMaxDimension)
            bad(at, "groups x m = " + std::to_string(t[0]) + " x " + std::to_string(t[1]) + " rows of D is more than " +
                        std::to_string(kMaxDimension));
          KGroupedShape shape{t[0], t[1], t[2], t[3], {}};
          if (listed) {
            shape.ks = sizes_at(*listed, i, t[0], key, "ks", "K values");
            int64_t columns = 0;
            for (const int64_t kg : shape.ks) columns += k_grouped_columns(kg);
            if (columns > kMaxDimension)
              bad(item(key, "ks", i), "the groups' K, each padded to 128, are " + std::to_string(columns) +
                                          " columns, more than " + std::to_string(kMaxDimension) +
                                          ", the largest K the library takes");
          }
          out.k_grouped.push_back(shape);
        }
      } else if (key == "m_grouped_contiguous" || key == "m_grouped_masked") {
        grouped[key == "m_grouped_masked" ? 1 : 0] = &section;
      } else if (key == "dense") {
        only_keys(section, where, {"m", "nk", "mnk"});
        if (section.contains("m") != section.contains("nk"))
          bad(where, "\"m\" and \"nk\" go together (every m with every [n, k])");
        if (!section.contains("m") && !section.contains("mnk")) bad(where, "needs \"m\" and \"nk\", or \"mnk\"");
        if (section.contains("m")) {
          const json& ms = array_at(section, "m", where);
          const json& nks = array_at(section, "nk", where);
          check_product(where, "m", ms.size(), "[n, k]", nks.size());
          for (size_t b = 0; b < nks.size(); ++b) {
            const std::vector<int64_t> nk = tuple_at(nks[b], 2, item(key, "nk", b), {"n", "k"});
            for (size_t a = 0; a < ms.size(); ++a)
              out.dense.push_back({size_at(ms[a], item(key, "m", a), "m"), nk[0], nk[1]});
          }
        }
        if (section.contains("mnk")) {
          const json& list = array_at(section, "mnk", where);
          for (size_t i = 0; i < list.size(); ++i) {
            const std::vector<int64_t> t = tuple_at(list[i], 3, item(key, "mnk", i), {"m", "n", "k"});
            out.dense.push_back({t[0], t[1], t[2]});
          }
        }
      } else {
        throw std::runtime_error("unknown section '" + key +
                                 "' (sections: \"dense\", \"wgrad\", \"m_grouped_contiguous\", \"m_grouped_masked\", "
                                 "\"k_grouped\", \"about\")");
      }
    }
    if (grouped[0]) read_grouped("m_grouped_contiguous", *grouped[0], GemmKind::GroupedContiguous, &out.grouped);
    if (grouped[1]) read_grouped("m_grouped_masked", *grouped[1], GemmKind::GroupedMasked, &out.grouped);
  } catch (const json::exception& e) {
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
