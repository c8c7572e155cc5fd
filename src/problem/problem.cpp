#include "problem/problem.hpp"

#include <cstring>
#include <numeric>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "families/family.hpp"
#include "util/error.hpp"
#include "util/json_read.hpp"

namespace fp8gemm::detail {

const char* kind_name(KernelKind kind) { return family(kind).name; }

bool is_gemm(KernelKind kind) { return family(kind).gemm; }

int64_t balanced_clusters(int64_t super_tiles, int64_t max_clusters) {
  if (super_tiles <= 0 || max_clusters <= 0) return std::max<int64_t>(std::min(super_tiles, max_clusters), 0);
  const int64_t waves = (super_tiles + max_clusters - 1) / max_clusters;
  return (super_tiles + waves - 1) / waves;
}

int64_t super_tile_count(const KernelConfig& c, int64_t m_blocks, int64_t n_blocks) {
  const int64_t pair_m = c.multicast == 2 ? 2 : 1, pair_n = c.multicast == 1 ? 2 : 1;
  return (m_blocks + pair_m - 1) / pair_m * ((n_blocks + pair_n - 1) / pair_n);
}

std::string KernelSpec::slug() const {
  if (!is_gemm(kind)) return fmt::format("{}{}", kind_name(kind), option == 1 ? "_pow2" : "");
  // k-grouped: K is a run-time value (no "_k" part).
  const std::string k_part = family(kind).k_at_run_time ? "" : fmt::format("_k{}", k);
  return fmt::format("{}_n{}{}_bm{}_bn{}_s{}_g{}{}{}{}{}", kind_name(kind), n, k_part, config.block_m, config.block_n,
                     config.stages, config.group_n,
                     config.multicast == 1 ? "_mcA" : config.multicast == 2 ? "_mcB" : "",
                     config.tma_store == 1 ? "_ts" : config.tma_store == 2 ? "_ts1" : "", config.split_k == 2 ? "_sk2" : "",
                     option == 1 ? "_cb" : "");
}

std::optional<KernelSpec> spec_from_slug(const std::string& slug) {
  size_t count = 0;
  const Family* const* families = all_families(&count);
  std::optional<KernelSpec> found;
  size_t best = 0;  // the longest kind name that prefixes the slug ("gemm1d2d_gm" before "gemm1d2d")
  for (size_t f = 0; f < count; ++f) {
    const KernelKind kind = families[f]->kind;
    const std::string name = families[f]->name;
    if (slug.compare(0, name.size(), name) != 0 || name.size() <= best) continue;
    const std::string rest = slug.substr(name.size());
    KernelSpec spec;
    spec.kind = kind;
    if (!is_gemm(kind)) {
      if (rest != "" && rest != "_pow2") continue;
      spec.option = rest.empty() ? 0 : 1;
    } else {
      // _n<N>[_k<K>]_bm<>_bn<>_s<>_g<>[_mcA|_mcB][_ts|_ts1][_sk2][_cb]
      std::vector<std::string> parts;
      for (size_t i = 1; i <= rest.size();) {
        if (rest[i - 1] != '_') break;
        const size_t j = rest.find('_', i);
        parts.push_back(rest.substr(i, j == std::string::npos ? std::string::npos : j - i));
        i = j == std::string::npos ? rest.size() + 1 : j + 1;
      }
      auto number = [](const std::string& part, const char* prefix, int64_t* out) {
        const size_t n = std::strlen(prefix);
        if (part.size() <= n || part.compare(0, n, prefix) != 0 || part.size() - n > 12) return false;
        int64_t v = 0;
        for (size_t i = n; i < part.size(); ++i) {
          if (part[i] < '0' || part[i] > '9') return false;
          v = v * 10 + (part[i] - '0');
        }
        *out = v;
        return true;
      };
      size_t i = 0;
      int64_t bm = 0, bn = 0, st = 0, g = 0;
      const bool ok = i < parts.size() && number(parts[i++], "n", &spec.n) &&
                      (families[f]->k_at_run_time || (i < parts.size() && number(parts[i++], "k", &spec.k))) &&
                      i + 4 <= parts.size() && number(parts[i], "bm", &bm) && number(parts[i + 1], "bn", &bn) &&
                      number(parts[i + 2], "s", &st) && number(parts[i + 3], "g", &g);
      if (!ok) continue;
      i += 4;
      spec.config = KernelConfig{static_cast<int>(bm), static_cast<int>(bn), static_cast<int>(st),
                                 static_cast<int>(g), 0, 0, 1};
      if (i < parts.size() && (parts[i] == "mcA" || parts[i] == "mcB")) spec.config.multicast = parts[i++] == "mcA" ? 1 : 2;
      if (i < parts.size() && (parts[i] == "ts" || parts[i] == "ts1")) spec.config.tma_store = parts[i++] == "ts" ? 1 : 2;
      if (i < parts.size() && parts[i] == "sk2") spec.config.split_k = 2, ++i;
      if (i < parts.size() && parts[i] == "cb") spec.option = 1, ++i;
      if (i != parts.size()) continue;
    }
    if (spec.slug() != slug) continue;  // only the canonical spelling
    found = spec;
    best = name.size();
  }
  return found;
}

size_t KernelSpecHash::operator()(const KernelSpec& s) const {
  size_t h = static_cast<size_t>(s.kind);
  for (int64_t v : {s.n, s.k, int64_t(s.config.block_m), int64_t(s.config.block_n),
                    int64_t(s.config.stages), int64_t(s.config.group_n), int64_t(s.config.multicast),
                    int64_t(s.config.tma_store), int64_t(s.config.split_k), int64_t(s.option)})
    h = h * 1000003u ^ std::hash<int64_t>{}(v);
  return h;
}

KernelLayout kernel_layout(const KernelSpec& spec) {
  const KernelConfig& c = spec.config;
  KernelLayout l;
  if (!is_gemm(spec.kind)) {  // quantization: 256 threads, static shared memory only
    l.threads = 256;
    return l;
  }
  l.math_warpgroups = c.block_m == 64 ? 1 : c.block_m == 192 ? 3 : 2;
  l.threads = (l.math_warpgroups + 1) * 128;
  l.cluster_size = c.multicast == 0 && c.split_k == 1 ? 1 : 2;
  l.a_box_rows = c.multicast == 1 ? c.block_m / 2 : c.block_m;
  l.b_box_rows = c.multicast == 2 ? c.block_n / 2 : c.block_n;
  // setmaxnreg targets; they must add up to what the launch allocates (65536 registers
  // over threads, rounded down to a multiple of 8 per thread).
  // With two math warpgroups: 128 x 40 + 256 x 232 = 64512 = 384 x 168. With one there
  // is room to spare, and the producer's loops get more than the bare minimum.
  // With three: 128 x 56 + 384 x 152 = 65536 = 512 x 128 (with 32 for the producer, the
  // kernels with K = 7168 spilled 4 bytes; 152 still fit the math warpgroups of 192 x 128
  // tiles without spills).
  // 1D1D with two: 128 x 56 + 256 x 224 = 64512 (its producer warpgroup also holds the
  // epilogue's storer threads; they once needed more than 40, and 40 / 232 now compiles
  // without local memory, docs/PERFORMANCE.md log 99, but measured no faster, log 100-101).
  const bool wgrad_kind = family(spec.kind).fp32_output;
  l.producer_registers = l.math_warpgroups == 2 && !wgrad_kind ? 40 : 56;
  l.math_registers = l.math_warpgroups == 1 ? 248 : l.math_warpgroups == 3 ? 152 : wgrad_kind ? 224 : 232;
  l.a_stage_bytes = c.block_m * 128;
  l.b_stage_bytes = c.block_n * 128;
  l.sfa_stage_bytes = c.block_m * 4;
  l.tma_store = c.tma_store != 0;
  {
    // 64x64 bf16 slab buffers per math warpgroup: every slab it stores (1) or one (2);
    // ceil(block_n / 64) slabs per 64-row wave (the last one overlaps the one before
    // when block_n is not a multiple of 64).
    const int slabs = c.block_m / 64 / l.math_warpgroups * ((c.block_n + 63) / 64) / (c.split_k == 2 ? 2 : 1);
    const int buffers = c.tma_store == 1 ? slabs : 1;
    l.d_tile_bytes = l.tma_store ? l.math_warpgroups * buffers * 64 * 128 : 0;
  }
  // 1D1D always stores through TMA: 64-row x 16-column fp32 slabs (4 KiB), the whole
  // 64 x block_n result of each math warpgroup.
  // (A block_n 8 past a multiple of 16 ends in a slab overlapping the one before it.)
  if (wgrad_kind) l.d_tile_bytes = l.math_warpgroups * ((c.block_n + 15) / 16) * 4096;
  l.k_blocks = static_cast<int>((spec.k + 127) / 128);
  // 8-byte aligned barriers: full/empty per stage plus full/empty per B-scale buffer.
  // 1D2D: two tile buffers of B scales, a row of k_blocks floats for each 128-column block
  // a tile may touch (two, or three when block_n - gcd(block_n, 128) > 128: 176 columns).
  // 1D1D: B's scales come per stage like A's.
  const bool wgrad = wgrad_kind;
  const int scale_rows = c.block_n - std::gcd(c.block_n, 128) > 128 ? 3 : 2;
  // (1D1D: each stage's slot padded to the 128 bytes a TMA destination is aligned to.)
  const int sfb_bytes = wgrad ? c.stages * ((c.block_n * 4 + 127) / 128 * 128) : 2 * (scale_rows * l.k_blocks * 4);
  const int waves_per_warpgroup = c.block_m / 64 / l.math_warpgroups;
  l.split_exchange_bytes = c.split_k == 2 ? waves_per_warpgroup * (c.block_n / 4) * l.math_warpgroups * 128 * 4 : 0;
  // (1D1D: full/empty per stage plus "slabs ready" and "result written" per math warpgroup,
  // and the three barriers that pace the storers' C loads.)
  const int barrier_bytes = wgrad ? 8 * (2 * c.stages + 2 * l.math_warpgroups + 3)
                                  : 8 * (2 * c.stages + 4 + (c.split_k == 2 ? 2 : 0));
  l.smem_bytes = kSmemAlignSlack + c.stages * (l.a_stage_bytes + l.b_stage_bytes + l.sfa_stage_bytes) +
                 l.d_tile_bytes + (sfb_bytes + l.split_exchange_bytes + 7) / 8 * 8 + barrier_bytes;
  l.n_blocks = static_cast<int>((spec.n + c.block_n - 1) / c.block_n);
  l.stripes_along_m =
      family(spec.kind).m_grouping == 1 && c.multicast != 1 && spec.n * spec.k <= kAlongMMaxExpertBBytes;
  return l;
}

KernelSpec constant_b_spec(const KernelSpec& spec, int64_t m) {
  // Measured on the H200 (docs/PERFORMANCE.md, log entry 24): early B loads lost 3-8 % in
  // kernels small enough to share an SM with another CTA (two fit in its 228 KB), and 4 %
  // where the rows span two M blocks (two CTAs then fetch each B tile at the same moment);
  // at large M each CTA has many tiles and only its first one's B could come early. Not with
  // multicast (CTA pairs over two M blocks or sharing A: not measured).
  constexpr int kHalfSmPerCta = 228 * 1024 / 2 - 1024;
  if (!family(spec.kind).constant_b_option || spec.option != 0 || m > 128 || m > spec.config.block_m ||
      spec.config.multicast != 0 || kernel_layout(spec).smem_bytes <= kHalfSmPerCta)
    return spec;
  KernelSpec s = spec;
  s.option = 1;
  return s;
}

bool tile_count_fits(int64_t rows, int64_t n, int64_t groups) {
  const int64_t row_tiles = rows / 64 + groups, col_tiles = n / 16 + 1;
  return rows >= 0 && n >= 0 && groups >= 1 && row_tiles <= kMaxTiles / col_tiles;
}

std::string spec_illegal_reason(const KernelSpec& spec) {
  const KernelConfig& c = spec.config;
  const Family& f = family(spec.kind);
  if (!f.gemm) {
    if (spec.n != 0 || spec.k != 0 || !(c == KernelConfig{}))
      return fmt::format("{} kernels take no N, K or tile config", f.name);
    if (spec.option != 0 && spec.option != 1) return fmt::format("option={} must be 0 or 1", spec.option);
    if (spec.option != 0 && !f.pow2_option) return fmt::format("{} kernels take no option", f.name);
    return "";
  }
  if (spec.option != 0 && !(spec.option == 1 && f.constant_b_option))
    return fmt::format("option={}: only dense 1D2D GEMM kernels take an option (1: constant B)", spec.option);
  if (std::string why = f.spec_rules(spec); !why.empty()) return why;
  // Rows of D are 16-byte aligned at N % 8 (bf16) or N % 4 (fp32, weight gradient).
  if (spec.n <= 0 || spec.n % f.n_multiple != 0)
    return fmt::format("N={} must be a positive multiple of {}", spec.n, f.n_multiple);
  if (f.k_at_run_time) {
    if (spec.k != 0) return fmt::format("K={}: the k-grouped kernel takes K at run time (k must be 0)", spec.k);
  } else if (spec.k <= 0 || spec.k % 16 != 0) {
    return fmt::format("K={} must be a positive multiple of 16", spec.k);
  }
  if (spec.n > kMaxDimension || spec.k > kMaxDimension) return fmt::format("N and K must be at most {}", kMaxDimension);
  if (spec.k > f.max_k)
    return fmt::format("K={} is more than {}, the most the kernels with 128x128 B scales take", spec.k, f.max_k);
  if (c.block_m != 64 && c.block_m != 128 && c.block_m != 192 && c.block_m != 256)
    return fmt::format("block_m={} must be 64, 128, 192 or 256", c.block_m);
  // Per math thread: block_n/2 fp32 registers of result per 64-row wave plus one
  // block_n/2 wgmma buffer, inside the setmaxnreg budget with room for addressing.
  // (Three math warpgroups have 160 registers each: one buffer and the result.)
  const int max_block_n = c.block_m == 256 || c.block_m == 192 ? 128 : 192;
  // The weight-gradient kernel takes widths in steps of 8 (its B scales come per column).
  const int n_step = f.fp32_output ? 8 : 16;
  if (c.block_n < 16 || c.block_n > max_block_n || c.block_n % n_step != 0)
    return fmt::format("block_n={} must be a multiple of {} in [16, {}] with block_m={}", c.block_n, n_step,
                       max_block_n, c.block_m);
  if (c.multicast < 0 || c.multicast > 2)
    return fmt::format("multicast={} must be 0 (none), 1 (share A) or 2 (share B)", c.multicast);
  if (c.tma_store < 0 || c.tma_store > 2)
    return fmt::format("tma_store={} must be 0 (direct stores), 1 (a buffer per slab) or 2 (one buffer)", c.tma_store);
  if (c.split_k != 1 && c.split_k != 2) return fmt::format("split_k={} must be 1 or 2", c.split_k);
  if (c.split_k == 2 && c.multicast != 0) return "split_k=2 and multicast both need the CTA pair; pick one";
  if (c.split_k == 2 && (spec.k + 127) / 128 < 2)
    return fmt::format("split_k=2 needs at least two 128-deep K blocks (K={})", spec.k);
  if (c.split_k == 2 && c.tma_store != 0 && c.block_n % 128 != 0)
    return fmt::format("split_k=2 with tma_store needs block_n % 128 == 0 (each CTA stores whole 64-column slabs)");
  if (c.tma_store != 0 && c.block_n < 64)
    return fmt::format("tma_store={} needs block_n >= 64 (64-column output slabs), not {}", c.tma_store, c.block_n);
  if (c.stages < 2 || c.stages > 16) return fmt::format("stages={} must be in [2, 16]", c.stages);
  if (c.group_n < 1 || c.group_n > 64) return fmt::format("group_n={} must be in [1, 64]", c.group_n);
  const KernelLayout l = kernel_layout(spec);
  if (l.smem_bytes > kMaxSmemBytes)
    return fmt::format("needs {} bytes of shared memory, more than {}", l.smem_bytes, kMaxSmemBytes);
  return "";
}

std::string spec_to_json(const KernelSpec& spec) {
  if (!is_gemm(spec.kind)) return nlohmann::json{{"kind", kind_name(spec.kind)}, {"option", spec.option}}.dump();
  nlohmann::json j = {{"kind", kind_name(spec.kind)},
                      {"n", spec.n},
                      {"k", spec.k},
                      {"block_m", spec.config.block_m},
                      {"block_n", spec.config.block_n},
                      {"stages", spec.config.stages},
                      {"group_n", spec.config.group_n},
                      {"multicast", spec.config.multicast},
                      {"tma_store", spec.config.tma_store},
                      {"split_k", spec.config.split_k}};
  if (spec.option != 0) j["option"] = spec.option;
  return j.dump();
}

KernelSpec spec_from_json(const std::string& text) {
  try {
    const nlohmann::json j = parse_json(text);
    KernelSpec s;
    const std::string kind = json_string(j, "kind");
    const Family* f = family_named(kind);
    if (f == nullptr) fail(ErrorCode::InvalidArgument, "unknown kernel kind '{}'", kind);
    s.kind = f->kind;
    // (Ranges here only keep the numbers representable; spec_illegal_reason judges them.)
    auto field = [&j](const char* key) { return static_cast<int>(json_integer(j, key, INT32_MIN, INT32_MAX)); };
    auto field_or = [&j](const char* key, int fallback) {
      return static_cast<int>(json_integer_or(j, key, fallback, INT32_MIN, INT32_MAX));
    };
    if (!f->gemm) {
      s.option = field_or("option", 0);
      return s;
    }
    s.n = json_integer(j, "n", INT64_MIN, INT64_MAX);
    s.k = json_integer(j, "k", INT64_MIN, INT64_MAX);
    s.config.block_m = field("block_m");
    s.config.block_n = field("block_n");
    s.config.stages = field("stages");
    s.config.group_n = field("group_n");
    s.config.multicast = field_or("multicast", 0);
    s.config.tma_store = field_or("tma_store", 0);
    s.config.split_k = field_or("split_k", 1);
    s.option = field_or("option", 0);
    return s;
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorCode::InvalidArgument, "malformed kernel spec JSON: {}", e.what());
  } catch (const JsonReadError& e) {
    fail(ErrorCode::InvalidArgument, "malformed kernel spec JSON: {}", e.what());
  }
}

}  // namespace fp8gemm::detail
