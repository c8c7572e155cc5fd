#include "cli/cublaslt_baseline.hpp"

#include <cublasLt.h>
#include <dlfcn.h>

#include <stdexcept>
#include <vector>

#include <fmt/format.h>

namespace fp8gemm::cli {

// The cuBLASLt entry points used, each as (member, symbol): declared and looked up from this list.
#define FP8GEMM_CUBLASLT_FUNCTIONS(X)                                                        \
  X(create, cublasLtCreate) X(destroy, cublasLtDestroy) X(get_version, cublasLtGetVersion)  \
  X(desc_create, cublasLtMatmulDescCreate) X(desc_destroy, cublasLtMatmulDescDestroy)       \
  X(desc_set, cublasLtMatmulDescSetAttribute) X(layout_create, cublasLtMatrixLayoutCreate)  \
  X(layout_destroy, cublasLtMatrixLayoutDestroy) X(pref_create, cublasLtMatmulPreferenceCreate) \
  X(pref_destroy, cublasLtMatmulPreferenceDestroy) X(pref_set, cublasLtMatmulPreferenceSetAttribute) \
  X(heuristic, cublasLtMatmulAlgoGetHeuristic) X(matmul, cublasLtMatmul)

struct CublasLtGemm::Impl {
  void* handle_lib = nullptr;
#define FP8GEMM_CUBLASLT_MEMBER(member, symbol) decltype(&symbol) member = nullptr;
  FP8GEMM_CUBLASLT_FUNCTIONS(FP8GEMM_CUBLASLT_MEMBER)
#undef FP8GEMM_CUBLASLT_MEMBER

  // One configured (form, m, n, k).
  struct Problem {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    std::vector<cublasLtMatmulHeuristicResult_t> algos;
    Form form = Form::Forward;
  };

  cublasLtHandle_t lt = nullptr;
  std::vector<Problem> problems;
  void* workspace = nullptr;
  size_t workspace_bytes = size_t(64) << 20;

  void release(Problem& p) {
    if (p.desc) desc_destroy(p.desc);
    if (p.la) layout_destroy(p.la);
    if (p.lb) layout_destroy(p.lb);
    if (p.ld) layout_destroy(p.ld);
    p = Problem{};
  }
  void release_problems() {
    for (Problem& p : problems) release(p);
    problems.clear();
  }
};

std::unique_ptr<CublasLtGemm> CublasLtGemm::open(std::string* why) {
  auto impl = std::make_unique<Impl>();
  impl->handle_lib = ::dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!impl->handle_lib) impl->handle_lib = ::dlopen("libcublasLt.so", RTLD_NOW | RTLD_LOCAL);
  if (!impl->handle_lib) {
    *why = std::string("libcublasLt could not be loaded: ") + ::dlerror();
    return nullptr;
  }
  bool ok = true;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(impl->handle_lib, name));
    if (!fn) {
      ok = false;
      *why = std::string("libcublasLt lacks ") + name;
    }
  };
#define FP8GEMM_CUBLASLT_LOOKUP(member, symbol) sym(impl->member, #symbol);
  FP8GEMM_CUBLASLT_FUNCTIONS(FP8GEMM_CUBLASLT_LOOKUP)
#undef FP8GEMM_CUBLASLT_LOOKUP
  if (!ok) return nullptr;
  if (impl->create(&impl->lt) != CUBLAS_STATUS_SUCCESS) {
    *why = "cublasLtCreate failed";
    return nullptr;
  }
  if (impl->get_version() < 120900) {
    *why = fmt::format("cuBLASLt {} has no block-scaled FP8 (needs 12.9 or newer)", impl->get_version());
    return nullptr;
  }
  if (cudaMalloc(&impl->workspace, impl->workspace_bytes) != cudaSuccess) {
    *why = "cudaMalloc(workspace) failed";
    return nullptr;
  }
  return std::unique_ptr<CublasLtGemm>(new CublasLtGemm(std::move(impl)));
}

CublasLtGemm::CublasLtGemm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CublasLtGemm::~CublasLtGemm() {
  impl_->release_problems();
  if (impl_->workspace) cudaFree(impl_->workspace);
  if (impl_->lt) impl_->destroy(impl_->lt);
}

std::string CublasLtGemm::version() const { return std::to_string(impl_->get_version()); }

int CublasLtGemm::algorithms() const { return algorithms(0); }

int CublasLtGemm::algorithms(int problem) const {
  return problem >= 0 && size_t(problem) < impl_->problems.size()
             ? static_cast<int>(impl_->problems[size_t(problem)].algos.size())
             : 0;
}

void CublasLtGemm::reset() { impl_->release_problems(); }

bool CublasLtGemm::prepare(Form form, int64_t m, int64_t n, int64_t k, const float* sfa, const float* sfb,
                           std::string* why) {
  impl_->release_problems();
  return add_problem(form, m, n, k, sfa, sfb, why) == 0;
}

int CublasLtGemm::add_problem(Form form, int64_t m, int64_t n, int64_t k, const float* sfa, const float* sfb,
                              std::string* why, int64_t ld) {
  Impl::Problem s;
  s.form = form;
  // Released (and -1 returned) unless it is stored below.
  auto fail = [&](const std::string& reason) {
    impl_->release(s);
    *why = reason;
    return -1;
  };
  const bool wgrad = form == Form::WeightGradient;
  Impl& lib = *impl_;
  // Row-major D [M,N] is column-major D^T [N,M] = B [N,K] x A^T: cuBLAS-A is our B
  // (transposed; BLK128x128 scales, or VEC128 for the weight gradient), cuBLAS-B is our A
  // (VEC128 scales): the "TN" form FP8 requires. VEC128 scales are one float per row and
  // 128 K, outer-dimension-major ([ceil(K/128)][rows]): our per-token layout, unpadded.
  if (lib.desc_create(&s.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS)
    return fail("cublasLtMatmulDescCreate failed");
  const cublasOperation_t t = CUBLAS_OP_T, nop = CUBLAS_OP_N;
  const cublasLtMatmulMatrixScale_t blk = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  const cublasLtMatmulMatrixScale_t vec = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
  lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &nop, sizeof(nop));
  lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, wgrad ? &vec : &blk, sizeof(blk));
  lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &vec, sizeof(vec));
  lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sfb, sizeof(sfb));
  lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sfa, sizeof(sfa));
  const int64_t row = ld > 0 ? ld : k;
  lib.layout_create(&s.la, CUDA_R_8F_E4M3, static_cast<uint64_t>(k), static_cast<uint64_t>(n), row);
  lib.layout_create(&s.lb, CUDA_R_8F_E4M3, static_cast<uint64_t>(k), static_cast<uint64_t>(m), row);
  // D (and C, the same layout: in place for the weight gradient) is bf16 or fp32.
  lib.layout_create(&s.ld, wgrad ? CUDA_R_32F : CUDA_R_16BF, static_cast<uint64_t>(n), static_cast<uint64_t>(m), n);
  cublasLtMatmulPreference_t pref = nullptr;
  lib.pref_create(&pref);
  lib.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &lib.workspace_bytes, sizeof(lib.workspace_bytes));
  s.algos.resize(3);
  int found = 0;
  const cublasStatus_t st = lib.heuristic(lib.lt, s.desc, s.la, s.lb, s.ld, s.ld, pref, 3, s.algos.data(), &found);
  lib.pref_destroy(pref);
  s.algos.resize(st == CUBLAS_STATUS_SUCCESS ? static_cast<size_t>(found) : 0);
  if (s.algos.empty())
    return fail(fmt::format("cuBLASLt has no block-scaled FP8 {}algorithm for M={} N={} K={} (status {})",
                            wgrad ? "fp32-accumulate (VEC128 x VEC128) " : "", m, n, k, static_cast<int>(st)));
  lib.problems.push_back(s);
  return static_cast<int>(lib.problems.size()) - 1;
}

void CublasLtGemm::run(const void* a, const float* sfa, const void* b, const float* sfb, void* d, int algo,
                       cudaStream_t stream) {
  run_problem(0, a, sfa, b, sfb, d, algo, stream);
}

void CublasLtGemm::run_problem(int problem, const void* a, const float* sfa, const void* b, const float* sfb, void* d,
                               int algo, cudaStream_t stream) {
  Impl& lib = *impl_;
  Impl::Problem& s = lib.problems.at(static_cast<size_t>(problem));
  lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sfb, sizeof(sfb));
  lib.desc_set(s.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sfa, sizeof(sfa));
  // beta 1 with C = D: the weight gradient accumulates into D in place.
  const float alpha = 1.0f, beta = s.form == Form::WeightGradient ? 1.0f : 0.0f;
  const cublasStatus_t st = lib.matmul(lib.lt, s.desc, &alpha, b, s.la, a, s.lb, &beta, d, s.ld, d, s.ld,
                                       &s.algos.at(static_cast<size_t>(algo)).algo, lib.workspace, lib.workspace_bytes,
                                       stream);
  if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(fmt::format("cublasLtMatmul failed (status {})", int(st)));
}

}  // namespace fp8gemm::cli
