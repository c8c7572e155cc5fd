#!/usr/bin/env bash
# The shared library exports the public API only: every defined dynamic symbol is in
# namespace fp8gemm (or the type information / virtual table of fp8gemm::Error), a C API
# function fp8gemm_*, or the version node, and each carries the version FP8GEMM_0.1.
#   check_exports.sh path/to/libfp8gemm.so
set -euo pipefail
lib=$1
symbols=$(nm -DC --defined-only "$lib" | cut -d' ' -f3-)
bad=$(grep -vE '^(fp8gemm::|fp8gemm_|(typeinfo|typeinfo name|vtable) for fp8gemm::|FP8GEMM_0\.1$)' <<<"$symbols" || true)
detail=$(grep -E 'fp8gemm::detail' <<<"$symbols" || true)
unversioned=$(nm -D --defined-only --with-symbol-versions "$lib" | grep -v '@@FP8GEMM_0\.1$' | grep -v ' A FP8GEMM_0\.1' || true)
count=$(wc -l <<<"$symbols")
if [ -n "$bad" ] || [ -n "$detail" ] || [ -n "$unversioned" ]; then
  echo "check_exports: $lib exports symbols outside the public API:" >&2
  printf '%s\n' "$bad" "$detail" "$unversioned" | grep -v '^$' | head -n 40 >&2
  exit 1
fi
if ! grep -q '^fp8gemm::gemm_fp8_nt(' <<<"$symbols"; then
  echo "check_exports: $lib does not export fp8gemm::gemm_fp8_nt" >&2
  exit 1
fi
# The driver is opened at run time (dlopen): a machine without one still loads the library.
if readelf -d "$lib" | grep -E 'NEEDED.*\[libcuda\.so' >&2; then
  echo "check_exports: $lib needs libcuda; the library must open the driver itself" >&2
  exit 1
fi
echo "check_exports: $count symbols, all public API, all at FP8GEMM_0.1, no libcuda needed"
