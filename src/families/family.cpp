#include "families/family.hpp"

#include <iterator>

#include "util/error.hpp"

namespace fp8gemm::detail {

namespace {

const Family* const kFamilies[] = {&kGemm1D2DFamily,        &kGemm1D1DFamily,           &kQuantize1x128Family,
                                   &kQuantize128x128Family, &kQuantizeTransposedFamily, &kTransposeFp8Family,
                                   &kCopyScalesFamily,      &kGroupedContiguousFamily,  &kGroupedMaskedFamily,
                                   &kKGroupedFamily};

}  // namespace

const Family& family(KernelKind kind) {
  // The table is in KernelKind order (checked by a test): one index, no search.
  const size_t i = static_cast<size_t>(kind);
  FP8GEMM_CHECK(i < std::size(kFamilies) && kFamilies[i]->kind == kind, "no family for kernel kind {}", int(kind));
  return *kFamilies[i];
}

const Family* const* all_families(size_t* count) {
  *count = std::size(kFamilies);
  return kFamilies;
}

const Family* family_of_gemm_kind(int gemm_kind) {
  for (const Family* f : kFamilies)
    if (f->gemm_kind >= 0 && f->gemm_kind == gemm_kind) return f;
  return nullptr;
}

const Family* family_named(const std::string& name) {
  for (const Family* f : kFamilies)
    if (name == f->name) return f;
  return nullptr;
}

}  // namespace fp8gemm::detail
