#!/usr/bin/env bash
# The picks that move under the gap64 rule (old and new, and the recorded best where another), each problem timed in one process with explicit configs.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; U=$D/gpk; O=${OUT:-/tmp}/gpk; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && C=$lib; done
while read -r p cfgs; do
  FP8GEMM_TUNING=off FP8GEMM_CACHE_DIR=/tmp/gpk-cache LD_LIBRARY_PATH=$D/main:$C timeout 60 $D/main/fp8gemm bench --shapes $U/$p.json --no-cublas --isolated --flush-mb 7630 --pause-ms 0 --kernel-time $cfgs --json $O/$p.json > $O/$p.txt 2>&1
  echo "$p rc $?: $(grep -E '^ *[0-9]+ ' $O/$p.txt | awk -F'|' '{split($2,b," "); split($NF,c," "); printf "%s=%s ", c[1], b[1]}')"
done < $U/configs.txt
tar czf ${OUT:-/tmp}/gpk.tgz -C ${OUT:-/tmp} gpk
