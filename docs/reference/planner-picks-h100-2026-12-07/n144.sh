#!/usr/bin/env bash
# Why 128x144 forward tiles run slow per MAC: ncu of 128x128 s5, 128x144 s5 and 128x192 s4 on 3000x4608x3584.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/n144; mkdir -p $O
for c in "128,128,5,8,0,1 n128" "128,144,5,8,0,1 n144" "128,192,4,8,0,1 n192"; do
  set -- $c
  FP8GEMM_TUNING=off FP8GEMM_CACHE_DIR=/tmp/n144-cache LD_LIBRARY_PATH=$D/main timeout 120 ncu --clock-control none --cache-control all --kernel-name regex:gemm_1d2d --launch-skip 1 --launch-count 1 --section WarpStateStats --section SourceCounters --metrics sm__cycles_elapsed.max,smsp__inst_executed.sum,gpc__cycles_elapsed.avg.per_second,gpu__time_duration.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed --import-source no -o $O/$2 $D/main/fp8gemm bench --shapes $D/n144.json --no-cublas --replays 1 --config $1 > $O/$2.log 2>&1
  echo "ncu $2 rc $?"
  ncu --import $O/$2.ncu-rep --page details > $O/$2-details.txt 2>&1
  ncu --import $O/$2.ncu-rep --page source --csv --print-source sass > $O/$2-sass.csv 2>&1
  grep -E "cycles_elapsed|inst_executed|gpu__time|per_second|bank|gmma|Warp Cycles Per Issued" $O/$2-details.txt | head -12
  python3 tools/ncu_stalls.py $O/$2-sass.csv > $O/$2-stalls.txt 2>&1; head -20 $O/$2-stalls.txt
  gzip -f $O/$2-sass.csv; rm -f $O/$2.ncu-rep
done
