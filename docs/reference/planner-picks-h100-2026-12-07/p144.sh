#!/usr/bin/env bash
# Planner: two-warpgroup one-buffer forward tiles of columns not a multiple of 64 +40 cycles per
# K block (px40) against main's planner (pbase), 3 rounds of alternated processes.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/p144; mkdir -p $O
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && export LD_LIBRARY_PATH=$lib; done
FP8GEMM_TUNING=off FP8GEMM_CLI=$D/main/fp8gemm timeout 240 bash tools/ab-bench.sh $O/ab 3 "$D/p144.json|--no-cublas --kernel-time" $D/pbase $D/px40 > $O/ab.txt 2>&1
echo "ab-bench rc $?"; python3 tools/ab_summary.py $O/ab 2>&1 | tail -n 20
tar czf ${OUT:-/tmp}/p144.tgz -C ${OUT:-/tmp} p144
