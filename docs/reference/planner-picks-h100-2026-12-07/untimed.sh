#!/usr/bin/env bash
# The planner's picks that no recorded sweep timed (22 dense problems), each timed in one
# process beside the sweep's stand-in and best (configs in turn).
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; U=$D/untimed; O=${OUT:-/tmp}/untimed; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && C=$lib; done
while read -r p cfgs; do
  FP8GEMM_TUNING=off FP8GEMM_CACHE_DIR=/tmp/untimed-cache LD_LIBRARY_PATH=$D/main:$C timeout 60 $D/main/fp8gemm bench --shapes $U/$p.json --no-cublas --isolated --flush-mb 7630 --pause-ms 0 --kernel-time $cfgs --json $O/$p.json > $O/$p.txt 2>&1
  echo "$p rc $?: $(grep -E '^ *[0-9]+ ' $O/$p.txt | awk -F'|' '{split($2,b," "); split($NF,c," "); printf "%s=%s ", c[1], b[1]}')"
done < $U/configs.txt
tar czf ${OUT:-/tmp}/untimed.tgz -C ${OUT:-/tmp} untimed
