// Random arguments for every validator: valid calls with one or two fields replaced by edge
// values (0, -1, powers of two and their neighbours, the limits, INT64_MIN / INT64_MAX, random
// 64-bit values and pointers). Each call either passes or throws InvalidArgument: never
// another error, never a crash, and (under a sanitizer build) no overflow. A fixed seed keeps
// every run the same.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "fp8gemm/fp8gemm.hpp"
#include "api/library.hpp"
#include "families/family.hpp"
#include "heuristics/heuristics.hpp"
#include "problem/validate.hpp"

using namespace fp8gemm;

namespace {

class Fuzzer {
 public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {}

  uint64_t bits() { return rng_(); }
  int64_t below(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }

  // An edge value, a small one, or any 64-bit value.
  int64_t edge() {
    static const int64_t special[] = {0,
                                      1,
                                      -1,
                                      2,
                                      3,
                                      8,
                                      16,
                                      127,
                                      128,
                                      129,
                                      4096,
                                      7168,
                                      65536,
                                      kMaxK1D2D,
                                      kMaxK1D2D + 16,
                                      kMaxDimension,
                                      kMaxDimension + 1,
                                      (int64_t(1) << 31) - 1,
                                      int64_t(1) << 32,
                                      int64_t(1) << 62,
                                      std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::max() - 3,
                                      std::numeric_limits<int64_t>::min(),
                                      -128};
    switch (below(3)) {
      case 0: return special[below(sizeof(special) / sizeof(special[0]))];
      case 1: return below(300);
      default: return static_cast<int64_t>(bits());
    }
  }

  // A size as callers pass them: mostly realistic (multiples of 16 often), sometimes an edge.
  int64_t size() {
    switch (below(5)) {
      case 0: return 1 + below(300);
      case 1: return 16 * (1 + below(600));
      case 2: return 128 * (1 + below(64));
      case 3: return (int64_t(1) << below(31)) + below(3) - 1;
      default: return edge();
    }
  }

  template <typename T>
  T* pointer() {
    switch (below(4)) {
      case 0: return nullptr;
      case 1: return reinterpret_cast<T*>(static_cast<uintptr_t>(bits()));
      default: return reinterpret_cast<T*>(static_cast<uintptr_t>((1 + below(16)) << 40) + 16 * below(64));
    }
  }

  // One field of an operand descriptor (data, rows, cols, ld) or of a scale descriptor (data,
  // rows, cols, row_stride, col_stride) set to a random pointer or edge value.
  template <typename M>
  void mutate_matrix(M& x) {
    if (const int field = static_cast<int>(below(4)); field < 3)
      mutate_shared(x, field);
    else
      x.ld = edge();
  }

  template <typename S>
  void mutate_scales(S& x) {
    if (const int field = static_cast<int>(below(5)); field < 3)
      mutate_shared(x, field);
    else if (field == 3)
      x.row_stride = edge();
    else
      x.col_stride = edge();
  }

  // 0-2 fields of a call's operands mutated: A, B, their scales and, when given, D.
  template <typename A, typename S, typename D = A>
  void mutate_operands(A& a, A& b, S& sa, S& sb, D* d = nullptr) {
    for (int64_t j = below(3); j > 0; --j) switch (below(d != nullptr ? 5 : 4)) {
        case 0: mutate_matrix(a); break;
        case 1: mutate_matrix(b); break;
        case 2: mutate_scales(sa); break;
        case 3: mutate_scales(sb); break;
        default: mutate_matrix(*d);
      }
  }

 private:
  // The fields both descriptor kinds have: 0 data, 1 rows, 2 cols.
  template <typename X>
  void mutate_shared(X& x, int field) {
    if (field == 0)
      x.data = pointer<std::remove_pointer_t<decltype(x.data)>>();
    else if (field == 1)
      x.rows = edge();
    else
      x.cols = edge();
  }

  std::mt19937_64 rng_;
};

// Far-apart, aligned fake device addresses: validation never dereferences.
template <typename T = void>
T* at(int i) {
  return reinterpret_cast<T*>(uintptr_t(i + 1) << 44);
}

// The sizes of one call, kept small enough that a valid call's group products fit.
struct Sizes {
  int64_t m, n, k, groups;
};

Sizes sizes(Fuzzer& f) {
  Sizes s{f.size(), f.size(), f.size(), 1 + f.below(16)};
  const int64_t bound = int64_t(1) << 40;
  if (s.m < 0 || s.m > bound || s.n < 0 || s.n > bound || s.k < 0 || s.k > bound)
    s = Sizes{1 + f.below(5000), 8 * (1 + f.below(600)), 16 * (1 + f.below(600)), s.groups};
  return s;
}

// Runs `call` and counts its outcome; any error but InvalidArgument fails the test.
template <typename Call>
void expect_valid_or_invalid(const char* what, int iteration, Call&& call, int& passed) {
  try {
    if (call()) ++passed;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::InvalidArgument)
      ADD_FAILURE() << what << ", iteration " << iteration << ": " << to_string(e.code()) << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ", iteration " << iteration << ": not an fp8gemm::Error: " << e.what();
  }
}

// More for a longer local run, e.g. under -fsanitize=address,undefined.
#ifndef FP8GEMM_FUZZ_ITERATIONS
#define FP8GEMM_FUZZ_ITERATIONS 40000
#endif
constexpr int kIterations = FP8GEMM_FUZZ_ITERATIONS;

// A kernel spec's JSON with the given fields (as KernelSpec's JSON form names them).
std::string fmt_spec(const char* kind, int64_t n, int64_t k, int64_t block_m, int64_t block_n, int64_t stages,
                     int64_t group_n, int64_t multicast, int64_t tma_store, int64_t split_k, int64_t option) {
  return "{\"kind\":\"" + std::string(kind) + "\",\"n\":" + std::to_string(n) + ",\"k\":" + std::to_string(k) +
         ",\"block_m\":" + std::to_string(block_m) + ",\"block_n\":" + std::to_string(block_n) +
         ",\"stages\":" + std::to_string(stages) + ",\"group_n\":" + std::to_string(group_n) +
         ",\"multicast\":" + std::to_string(multicast) + ",\"tma_store\":" + std::to_string(tma_store) +
         ",\"split_k\":" + std::to_string(split_k) + ",\"option\":" + std::to_string(option) + "}";
}

}  // namespace

TEST(ValidationFuzz, DenseAndWeightGradient) {
  Fuzzer f(1);
  int passed_dense = 0, passed_wgrad = 0;
  for (int i = 0; i < kIterations; ++i) {
    const Sizes s = sizes(f);
    Fp8Matrix a{at(0), s.m, s.k, s.k}, b{at(1), s.n, s.k, s.k};
    ScaleMatrix sa = per_token_scales(at<const float>(2), s.m, s.k);
    const bool wgrad = f.below(2) != 0;
    ScaleMatrix sb = wgrad ? per_token_scales(at<const float>(3), s.n, s.k) : block_scales(at<const float>(3), s.n, s.k);
    f.mutate_operands(a, b, sa, sb);
    if (wgrad) {
      Fp32Matrix d{at<float>(4), s.m, s.n, s.n};
      if (f.below(3) == 0) f.mutate_matrix(d);
      Fp32Matrix c{f.below(2) ? d.data : at<float>(5), d.rows, d.cols, d.ld};
      const Fp32Matrix* cp = f.below(2) ? &c : nullptr;
      expect_valid_or_invalid("wgrad", i, [&] { return detail::validate_gemm_fp8_nt_wgrad(a, sa, b, sb, d, cp); },
                              passed_wgrad);
    } else {
      Bf16Matrix d{at(4), s.m, s.n, s.n};
      if (f.below(3) == 0) f.mutate_matrix(d);
      expect_valid_or_invalid("dense", i, [&] { return detail::validate_gemm_fp8_nt(a, sa, b, sb, d); }, passed_dense);
    }
  }
  // The generator reaches valid calls too, not only the first rule each time.
  EXPECT_GT(passed_dense, 100);
  EXPECT_GT(passed_wgrad, 100);
}

TEST(ValidationFuzz, GroupedForms) {
  Fuzzer f(2);
  int passed[3] = {0, 0, 0};
  for (int i = 0; i < kIterations; ++i) {
    const Sizes s = sizes(f);
    const int form = static_cast<int>(f.below(3));  // 0 contiguous, 1 masked, 2 k-grouped
    const int64_t groups = f.below(8) == 0 ? f.edge() : s.groups;
    if (form == 2) {
      Fp8Matrix a{at(0), s.m, s.k, s.k}, b{at(1), s.n, s.k, s.k};
      ScaleMatrix sa = per_token_scales(at<const float>(2), s.m, s.k);
      ScaleMatrix sb = per_token_scales(at<const float>(3), s.n, s.k);
      Fp32Matrix d{at<float>(4), s.groups * s.m, s.n, s.n};
      f.mutate_operands(a, b, sa, sb, &d);
      expect_valid_or_invalid(
          "k-grouped", i,
          [&] { return detail::validate_gemm_k_grouped(a, sa, b, sb, d, nullptr, at<const int32_t>(6), groups); },
          passed[2]);
      continue;
    }
    const bool masked = form == 1;
    const int64_t rows = masked ? s.groups * s.m : 128 * (1 + f.below(64));
    Fp8Matrix a{at(0), rows, s.k, s.k}, b{at(1), s.groups * s.n, s.k, s.k};
    ScaleMatrix sa = per_token_scales(at<const float>(2), rows, s.k);
    ScaleMatrix sb = block_scales(at<const float>(3), s.groups * s.n, s.k);
    sb.rows = s.groups * scale_blocks(s.n);
    Bf16Matrix d{at(4), rows, s.n, s.n};
    f.mutate_operands(a, b, sa, sb, &d);
    const int64_t expected_m = f.below(4) == 0 ? f.edge() : 1 + f.below(s.m > 0 ? s.m : 1);
    expect_valid_or_invalid(
        masked ? "masked" : "contiguous", i,
        [&] { return detail::validate_gemm_grouped(masked, a, sa, b, sb, d, at<const int32_t>(6), groups, expected_m); },
        passed[form]);
  }
  EXPECT_GT(passed[0], 100);
  EXPECT_GT(passed[1], 100);
  EXPECT_GT(passed[2], 100);
}

TEST(ValidationFuzz, QuantizersAndLayoutCopies) {
  Fuzzer f(3);
  int passed[3] = {0, 0, 0};
  for (int i = 0; i < kIterations; ++i) {
    const Sizes s = sizes(f);
    const int op = static_cast<int>(f.below(3));  // 0 quantize per token / block, 1 transpose, 2 scale copy
    if (op == 0) {
      const bool per_block = f.below(2) != 0;
      Bf16Input x{at(0), s.m, s.k, s.k};
      Fp8Output q{at(1), s.m, s.k, s.k};
      ScaleOutput sc = per_block ? block_scale_output(at<float>(2), s.m, s.k) : per_token_scale_output(at<float>(2), s.m, s.k);
      for (int64_t j = f.below(3); j > 0; --j) switch (f.below(3)) {
          case 0: f.mutate_matrix(x); break;
          case 1: f.mutate_matrix(q); break;
          default: f.mutate_scales(sc);
        }
      const int64_t scale_rows = per_block ? scale_blocks(s.m) : s.m;
      expect_valid_or_invalid(
          "quantize", i,
          [&] {
            return detail::validate_quantize(per_block ? "quantize_per_block" : "quantize_per_token", x, q, sc,
                                             scale_rows, scale_blocks(s.k));
          },
          passed[0]);
    } else if (op == 1) {
      Fp8Matrix w{at(0), s.n, s.k, s.k};
      ScaleMatrix ws = block_scales(at<const float>(1), s.n, s.k);
      Fp8Output wt{at(2), s.k, s.n, s.n};
      ScaleOutput wts{at<float>(3), scale_blocks(s.k), scale_blocks(s.n), scale_blocks(s.n), 1};
      for (int64_t j = f.below(3); j > 0; --j) switch (f.below(4)) {
          case 0: f.mutate_matrix(w); break;
          case 1: f.mutate_scales(ws); break;
          case 2: f.mutate_matrix(wt); break;
          default: f.mutate_scales(wts);
        }
      expect_valid_or_invalid("transpose", i, [&] { return detail::validate_fp8_transpose(w, ws, wt, wts); },
                              passed[1]);
    } else {
      ScaleMatrix in = per_token_scales(at<const float>(0), s.m, s.k);
      ScaleOutput out{at<float>(1), in.rows, in.cols, in.cols, 1};
      for (int64_t j = f.below(3); j > 0; --j) {
        if (f.below(2))
          f.mutate_scales(in);
        else
          f.mutate_scales(out);
      }
      expect_valid_or_invalid("convert_scales", i, [&] { return detail::validate_scale_copy(in, out); }, passed[2]);
    }
  }
  EXPECT_GT(passed[0], 100);
  EXPECT_GT(passed[1], 100);
  EXPECT_GT(passed[2], 100);
}

// Random shapes for every planning entry (prewarm, tune, kernel_name and the calls plan
// through the same steps): a shape the rules refuse is InvalidArgument; a non-empty shape
// they accept plans, on any SM count, a legal kernel (the heuristic's "no legal config" is
// unreachable). Empty shapes (M or N = 0) are skipped by every entry before planning.
TEST(ValidationFuzz, EveryAcceptedShapePlansALegalKernel) {
  Fuzzer f(4);
  int planned = 0;
  for (int i = 0; i < kIterations / 8; ++i) {
    GemmShape shape{f.size(), f.size(), f.size(), static_cast<GemmKind>(f.below(6)), 1 + f.below(40)};
    if (f.below(8) == 0) shape.groups = f.edge();
    if (f.below(2)) shape.n = shape.n / 8 * 8;  // often what the bf16 / fp32 outputs need
    if (f.below(2)) shape.k = shape.k / 16 * 16;
    try {
      detail::check_gemm_shape(shape, "fuzz");
    } catch (const Error& e) {
      if (e.code() != ErrorCode::InvalidArgument)
        ADD_FAILURE() << "iteration " << i << ": " << to_string(e.code()) << ": " << e.what();
      continue;
    }
    if (shape.m == 0 || shape.n == 0) continue;  // empty: every entry skips it (nothing to plan)
    SCOPED_TRACE(testing::Message() << "iteration " << i << ": " << shape.m << " x " << shape.n << " x " << shape.k
                                    << " kind " << static_cast<int>(shape.kind) << " groups " << shape.groups);
    const detail::GemmProblem problem = detail::cost_model_problem(detail::planned_problem(shape, "fuzz"));
    for (int sms : {132, 114, 78, 1}) {
      try {
        const auto ranked = detail::rank_configs(problem, detail::DeviceTraits{sms});
        ASSERT_FALSE(ranked.empty());
        EXPECT_EQ(detail::spec_illegal_reason(ranked.front().spec), "");
      } catch (const Error& e) {
        ADD_FAILURE() << sms << " SMs: " << to_string(e.code()) << ": " << e.what();
      }
    }
    ++planned;
  }
  EXPECT_GT(planned, 100);
}

// Kernel specs as a tuning database or a cache listing stores them (JSON), with random field
// values: each is refused as InvalidArgument (malformed, unknown kind), judged illegal with a
// reason, or legal, and a legal GEMM spec is named and costed by the model without error.
TEST(ValidationFuzz, KernelSpecsFromJsonAreJudgedNeverTrusted) {
  Fuzzer f(5);
  const char* kinds[] = {"gemm1d2d", "gemm1d1d", "gemm1d2d_gc", "gemm1d2d_gm", "gemm1d1d_kg", "quant1x128", "bogus"};
  const int64_t values[] = {0,   1,   -1,  2,   3,   4,    8,         16,        64,
                            96,  112, 128, 144, 152, 160,  192,       256,       7168,
                            INT32_MAX, INT32_MIN, kMaxDimension, INT64_MAX, INT64_MIN};
  auto value = [&] { return f.below(2) ? values[f.below(sizeof(values) / sizeof(values[0]))] : f.below(300) - 20; };
  int legal = 0;
  for (int i = 0; i < kIterations / 2; ++i) {
    const std::string json =
        fmt_spec(kinds[f.below(7)], value(), value(), value(), value(), value(), value(), f.below(4) - 1,
                 f.below(4) - 1, f.below(4) - 1, f.below(3) - 1);
    try {
      const detail::KernelSpec spec = detail::spec_from_json(json);
      if (!detail::spec_illegal_reason(spec).empty()) continue;
      ++legal;
      EXPECT_FALSE(spec.slug().empty()) << json;
      if (detail::family(spec.kind).gemm)
        for (int64_t m : {int64_t(1), int64_t(4096)}) EXPECT_GE(detail::predict_us(spec, m, detail::DeviceTraits{}), 0.0) << json;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::InvalidArgument) ADD_FAILURE() << json << ": " << to_string(e.code()) << ": " << e.what();
    }
  }
  EXPECT_GT(legal, 100);
}
