#!/usr/bin/env bash
# Builds the library of the working tree as one variant for tools/ab-bench.sh: its
# libfp8gemm.so.0 goes to DIR/NAME/, and DIR/NAME/cache/ is prewarmed for the given shape
# sets with that library (so that the timed processes compile nothing).
#
#   tools/build-variant.sh BUILD_DIR DIR NAME SHAPES.json...
#
# BUILD_DIR is a configured Release build of this tree (its `fp8gemm` target is rebuilt).
# Typical use: change the tree (a kernel, a planner rule), run this script, revert the change,
# run it again for the base, and carry DIR to the GPU machine with the CLI. NAME must not
# contain '-' (tools/ab_summary.py splits file names at dashes). Prints the planned kernels.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
build=$1 dir=$2 name=$3
shift 3
case $name in *-*|*/*|'') echo "build-variant: NAME '$name' must not contain '-' or '/'" >&2; exit 2 ;; esac
cmake --build "$build" --target fp8gemm -j"$(nproc)" > "$build/variant-$name.log" 2>&1 ||
  { tail -20 "$build/variant-$name.log" >&2; exit 1; }
mkdir -p "$dir/$name"
cp -L "$build/libfp8gemm.so.0" "$dir/$name/libfp8gemm.so.0"
rm -rf "$dir/$name/cache"
for shapes in "$@"; do
  FP8GEMM_CACHE_DIR="$dir/$name/cache" LD_LIBRARY_PATH="$dir/$name" "$build/tools/fp8gemm" prewarm -q --shapes "$shapes"
done
echo "$name: $(ls "$dir/$name/cache/kernels" | sed 's/-[0-9a-f]*\.fp8k$//' | sort | tr '\n' ' ')"
