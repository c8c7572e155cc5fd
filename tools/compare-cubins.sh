#!/usr/bin/env bash
# Compares the kernels of two kernel caches (FP8GEMM_CACHE_DIR trees filled by
# `fp8gemm prewarm`) by kernel name: the cubin bytes of each entry (everything after the
# entry's two header lines, cache/README.md) must match. Prints one line per kernel that
# differs or is in one cache only, then the counts.
# Exit status: 0 when every kernel in both caches has identical cubins, 1 otherwise, 2 on bad use.
set -euo pipefail
if [ $# -ne 2 ] || [ ! -d "$1/kernels" ] || [ ! -d "$2/kernels" ]; then
  echo "usage: $0 CACHE_DIR_A CACHE_DIR_B (each holding a kernels/ folder)" >&2
  exit 2
fi
same=0 differ=0 only=0
declare -A b_entry
for f in "$2"/kernels/*.fp8k; do
  [ -e "$f" ] || continue
  b_entry[$(basename "$f" | sed 's/-[0-9a-f]*\.fp8k$//')]=$f
done
declare -A seen
for f in "$1"/kernels/*.fp8k; do
  [ -e "$f" ] || continue
  name=$(basename "$f" | sed 's/-[0-9a-f]*\.fp8k$//')
  seen[$name]=1
  other=${b_entry[$name]:-}
  if [ -z "$other" ]; then
    echo "only in $1: $name"; only=$((only + 1))
  elif cmp -s <(tail -n +3 "$f") <(tail -n +3 "$other"); then
    same=$((same + 1))
  else
    echo "differs: $name"; differ=$((differ + 1))
  fi
done
for name in "${!b_entry[@]}"; do
  [ -n "${seen[$name]:-}" ] || { echo "only in $2: $name"; only=$((only + 1)); }
done
echo "cubins: $same identical, $differ different, $only in one cache only"
[ "$differ" -eq 0 ] && [ "$only" -eq 0 ]
