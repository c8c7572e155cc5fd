#!/usr/bin/env bash
# 128x144 s5 against 128x128 s5, 128x192 s4 and 192x96 s4 (TMA store) on a grid around 3000x4608x3584; two processes.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/g144; mkdir -p $O
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && C=$lib; done
nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2; do
  FP8GEMM_TUNING=off FP8GEMM_CACHE_DIR=/tmp/g144-cache LD_LIBRARY_PATH=$D/main:$C timeout 150 $D/main/fp8gemm bench --shapes $D/g144.json --no-cublas --isolated --flush-mb 7630 --pause-ms 0 --kernel-time --config 128,144,5,8,0,1,1 --config 128,128,5,8,0,1,1 --config 128,192,4,8,0,1,1 --config 192,96,4,8,0,1,1 --json $O/r$r.json > $O/r$r.txt 2>&1
  echo "r$r rc $?"
done
tail -40 $O/r2.txt
tar czf ${OUT:-/tmp}/g144.tgz -C ${OUT:-/tmp} g144
