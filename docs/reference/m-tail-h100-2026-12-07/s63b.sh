#!/usr/bin/env bash
# A's box and its scales' box moved back by whole 8-row atoms to end at M (ash) against main
# (base): GPU suite on ash, alternated rounds on the tails, then the suite on base.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/s63b; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && export LD_LIBRARY_PATH=$lib; done
C=$D/fp8gemm_cli_now
suite() {
  FP8GEMM_CACHE_DIR=/tmp/suite-cache-$1 LD_LIBRARY_PATH=$D/$1:$LD_LIBRARY_PATH timeout 200 $D/fp8gemm_gpu_tests > $O/gpu_suite_$1.txt 2>&1
  echo "suite $1 rc $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]" $O/gpu_suite_$1.txt | tail -n 8
}
suite ash
while read -r tool args; do
  FP8GEMM_CACHE_DIR=/tmp/suite-cache-ash LD_LIBRARY_PATH=$D/ash:$LD_LIBRARY_PATH timeout 60 compute-sanitizer --tool $tool --error-exitcode 86 $C check $args > $O/san.txt 2>&1 < /dev/null
  printf '%-10s %-50s rc=%s %s | %s\n' $tool "$args" $? "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $O/san.txt | head -n 1)" "$(grep -E 'rel_error' $O/san.txt | head -n 1)" | tee -a $O/sanitizers.txt
done <<'LIST'
memcheck  -m 700 -n 2120 -k 7184 --config 128,128,5,8,0,1,1
racecheck -m 700 -n 2120 -k 7184 --config 128,128,5,8,0,1,1
memcheck  -m 700 -n 2120 -k 7184 --config 256,128,3,8,1,2
racecheck -m 65 -n 136 -k 144
LIST
echo "sanitizers at ${SECONDS}s"
P="$D/m-tail.json|--no-cublas --kernel-time --config 128,128,5,8,0,1,1 --config 192,80,5,8,0,1,1;$D/n-tail.json|--no-cublas --kernel-time"
for r in 1 2; do
  FP8GEMM_TUNING=off FP8GEMM_CLI=$C timeout 150 bash tools/ab-bench.sh $O/ab$r 1 "$P" $D/base $D/ash > $O/ab$r.txt 2>&1
  echo "round $r rc $? at ${SECONDS}s"
done
python3 tools/ab_summary.py $O/ab* 2>&1 | grep -v "^spread\|^clock"
if [ $SECONDS -lt ${UNTIL:-330} ]; then suite base; fi
tar czf ${OUT:-/tmp}/s63b.tgz -C ${OUT:-/tmp} s63b
