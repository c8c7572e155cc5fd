#!/usr/bin/env bash
# The bench runs that the bars of docs/PERFORMANCE.md ("The bars") are judged on, then
# tools/acceptance.py on them. On a machine with an sm_90 GPU:
#
#   tools/acceptance-run.sh OUT_DIR [ROUNDS [BEFORE_DIR]]
#
# Each round (default 2) writes OUT_DIR/rN/<set>.json and .txt for: dense M = 4096
# (shapes/dense-m4096.json) and the decode shapes (shapes/dense-decode.json) with cuBLASLt in
# the same run; the m-grouped sets, masked small ones included (shapes/m-grouped-only.json),
# and the k-grouped sets (--grouped), and the weight gradients (--wgrad), without it. Every
# run is `bench --isolated --flush-mb 7630 --pause-ms 0 --kernel-time`, the anchors'
# condition. BEFORE_DIR, a round directory of an earlier build measured the same way, is
# passed as --before (the no-regression bar). The CLI is FP8GEMM_CLI (default
# build/tools/fp8gemm of this checkout); --kernel-time opens libcupti.so.13, looked for on
# LD_LIBRARY_PATH and else under CUDA_HOME and /usr/local/cuda*. Exit status: that of
# tools/acceptance.py (0: every bar measured and holding in every round, 1: not, 2:
# unreadable input); 1 if a bench run failed (its log is named); 2 for a usage error.
set -uo pipefail
usage() { sed -n '2,17p' "$0" >&2; exit 2; }
if [ $# -lt 1 ] || [ $# -gt 3 ]; then usage; fi
out=$1 rounds=${2:-2} before=${3:-}
case "$rounds" in '' | *[!0-9]* | 0) echo "acceptance-run.sh: ROUNDS must be a positive integer, not '$rounds'" >&2; exit 2 ;; esac
if [ -n "$before" ] && ! ls "$before"/*.json > /dev/null 2>&1; then
  echo "acceptance-run.sh: BEFORE_DIR '$before' holds no bench .json files" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd) || exit 2
cli=${FP8GEMM_CLI:-$root/build/tools/fp8gemm}
[ -x "$cli" ] || { echo "acceptance-run.sh: no fp8gemm CLI at $cli (build first, or set FP8GEMM_CLI)" >&2; exit 2; }
have_cupti() {
  ldconfig -p 2> /dev/null | grep -q 'libcupti\.so\.13' && return 0
  local dir
  IFS=':' read -ra dirs <<< "${LD_LIBRARY_PATH:-}"
  for dir in "${dirs[@]}"; do ls "$dir"/libcupti.so.13* > /dev/null 2>&1 && return 0; done
  return 1
}
if ! have_cupti; then
  for dir in ${CUDA_HOME:+"$CUDA_HOME"} /usr/local/cuda /usr/local/cuda-*; do
    for lib in "$dir/lib64" "$dir/extras/CUPTI/lib64"; do
      if ls "$lib"/libcupti.so.13* > /dev/null 2>&1; then
        export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$lib"
        break 2
      fi
    done
  done
fi
condition=(--isolated --flush-mb 7630 --pause-ms 0 --kernel-time)
runs=("dense-m4096|" "dense-decode|" "m-grouped-only|--grouped --no-cublas" "k-grouped-only|--grouped --no-cublas"
      "wgrad-only|--wgrad --no-cublas")
round_args=()
for round in $(seq 1 "$rounds"); do
  dir="$out/r$round"
  mkdir -p "$dir" || exit 2
  for run in "${runs[@]}"; do
    IFS='|' read -r set flags <<< "$run"
    # shellcheck disable=SC2086
    "$cli" bench --shapes "$root/shapes/$set.json" "${condition[@]}" $flags --json "$dir/$set.json" > "$dir/$set.txt" 2>&1
    rc=$?
    echo "== round $round, $set${flags:+ ($flags)}: rc $rc, $(date +%T)"
    grep -E "geomean" "$dir/$set.txt"
    if [ "$rc" -ne 0 ]; then
      echo "acceptance-run.sh: the bench of shapes/$set.json failed (exit $rc); its log: $dir/$set.txt" >&2
      tail -n 5 "$dir/$set.txt" >&2
      exit 1
    fi
  done
  round_args+=(--round "$dir"/*.json)
done
before_args=()
[ -n "$before" ] && before_args=(--before "$before"/*.json)
python3 "$root/tools/acceptance.py" --anchors "$root/docs/reference/anchors-h200.json" "${round_args[@]}" "${before_args[@]}"
