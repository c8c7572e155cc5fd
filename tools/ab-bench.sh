#!/usr/bin/env bash
# A/B timing of several builds of the library on one GPU, alternating them process by
# process so that they share the card's clock and power state.
#
#   tools/ab-bench.sh OUT_DIR ROUNDS PLAN VARIANT_DIR...
#
# Each VARIANT_DIR holds one build's libfp8gemm.so.0 (and, optionally, a prewarmed cache/
# used as its FP8GEMM_CACHE_DIR; otherwise VARIANT_DIR/cache is created): see
# tools/build-variant.sh. PLAN lists bench runs
# separated by ';', each "shape-file|bench flags", e.g.
#   "shapes/dense-m4096.json|;shapes/wgrad-only.json|--wgrad"
# Every run uses `bench --isolated --flush-mb 7630 --pause-ms 0` (the anchors' condition);
# add --kernel-time to a run's flags to time it by kernel durations, as the anchors were
# (libcupti.so.13 on LD_LIBRARY_PATH). Rows of one build move by up to ~8 % between
# processes (docs/PERFORMANCE.md, log 66): use three rounds or more.
# The CLI is VARIANT_DIR/fp8gemm where that exists (a build whose library another build's CLI
# cannot drive, e.g. an older commit's: copy its CLI there too), else FP8GEMM_CLI (default
# build/tools/fp8gemm); it links the library dynamically, so each variant's library is picked
# with LD_LIBRARY_PATH. Logs and JSON go to OUT_DIR; the
# geomean lines are printed as they come. tools/ab_summary.py OUT_DIR... tabulates each
# shape's median over the rounds per build and its ratio to the first build.
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,21p' "$0" >&2; exit 2; }
out=$1 rounds=$2 plan=$3
shift 3
cli=${FP8GEMM_CLI:-build/tools/fp8gemm}
mkdir -p "$out"
IFS=';' read -ra items <<< "$plan"
for round in $(seq 1 "$rounds"); do
  for item in "${items[@]}"; do
    IFS='|' read -r shapes flags <<< "$item"
    set_name=$(basename "$shapes" .json)
    for dir in "$@"; do
      v=$(basename "$dir")
      log="$out/$set_name-$v-$round"
      run_cli=$cli
      [ -x "$dir/fp8gemm" ] && run_cli=$dir/fp8gemm
      # shellcheck disable=SC2086
      FP8GEMM_CACHE_DIR="$dir/cache" LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$run_cli" bench --shapes "$shapes" --isolated --flush-mb 7630 --pause-ms 0 $flags --json "$log.json" > "$log.txt" 2>&1
      echo "== $set_name $flags | $v | round $round | rc $? | $(date +%T)"
      grep -E "geomean" "$log.txt"
    done
  done
done
