#!/usr/bin/env bash
# A's scale box moved back to end at M (sfa) against main (base): GPU suite and sanitizers on
# sfa, then alternated bench rounds while time allows.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/s63; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && export LD_LIBRARY_PATH=$lib; done
C=$D/fp8gemm_cli_now
SUITE=${SUITE:-1}
if [ "$SUITE" = 1 ]; then
  FP8GEMM_CACHE_DIR=/tmp/suite-cache LD_LIBRARY_PATH=$D/sfa:$LD_LIBRARY_PATH timeout 240 $D/fp8gemm_gpu_tests > $O/gpu_suite.txt 2>&1
  echo "suite rc $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]" $O/gpu_suite.txt | tail -n 12
  while read -r tool args; do
    [ -n "$tool" ] || continue
    case $args in
      gtest:*) run=($D/fp8gemm_gpu_tests "--gtest_filter=${args#gtest:}") ;;
      *) run=($C check $args) ;;
    esac
    FP8GEMM_CACHE_DIR=/tmp/suite-cache LD_LIBRARY_PATH=$D/sfa:$LD_LIBRARY_PATH timeout 120 compute-sanitizer --tool $tool --error-exitcode 86 "${run[@]}" > $O/san.txt 2>&1 < /dev/null
    rc=$?
    printf '%-10s %-50s rc=%s %s | %s\n' $tool "$args" $rc "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san.txt | head -n 1)" "$(grep -E 'rel_error|PASSED|FAILED' $O/san.txt | head -n 1)" | tee -a $O/sanitizers.txt
  done <<'LIST'
memcheck  -m 700 -n 2120 -k 7184 --config 128,128,5,8,0,1,1
racecheck -m 700 -n 2120 -k 7184 --config 128,128,5,8,0,1,1
memcheck  -m 700 -n 2120 -k 7184 --config 256,128,3,8,1,2
racecheck -m 700 -n 2120 -k 7184 --config 256,128,3,8,1,2
racecheck -m 4160 -n 576 -k 1536 --config 192,112,4,8,0,0
memcheck  gtest:GpuWgrad.ExplicitConfigsCoverEveryTile
racecheck gtest:GpuWgrad.ExplicitConfigsCoverEveryTile
LIST
  echo "sanitizers done at ${SECONDS}s"
fi
P="$D/m-tail.json|--no-cublas --kernel-time --config 128,128,5,8,0,1,1 --config 192,80,5,8,0,1,1;$D/n-tail.json|--no-cublas --kernel-time;shapes/off-tile-multiples.json|--no-cublas --kernel-time;$D/w-tail.json|--wgrad --no-cublas --kernel-time;shapes/dense-m4096.json|--no-cublas --kernel-time;shapes/wgrad-only.json|--wgrad --no-cublas --kernel-time"
r=0
while [ $r -lt ${ROUNDS:-3} ] && [ $SECONDS -lt ${UNTIL:-330} ]; do
  r=$((r+1))
  FP8GEMM_TUNING=off FP8GEMM_CLI=$C timeout $((560-SECONDS)) bash tools/ab-bench.sh $O/ab$r 1 "$P" $D/base $D/sfa > $O/ab$r.txt 2>&1
  echo "round $r rc $? at ${SECONDS}s"
done
python3 tools/ab_summary.py $O/ab* 2>&1 | tail -n 80
tar czf ${OUT:-/tmp}/s63.tgz -C ${OUT:-/tmp} s63
