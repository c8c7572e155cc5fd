#!/usr/bin/env bash
# Planner: forward one-buffer tiles of one 64-row wave per warpgroup whose columns are not a multiple
# of 64 +30 cycles per K block (g2: one and two 64-row waves per warpgroup) against main's planner (gbase), 3 rounds of alternated processes.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/g2; mkdir -p $O
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && export LD_LIBRARY_PATH=$lib; done
FP8GEMM_TUNING=off FP8GEMM_CLI=$D/main/fp8gemm timeout 300 bash tools/ab-bench.sh $O/ab 3 "$D/g2.json|--no-cublas --kernel-time" $D/gbase $D/g2 > $O/ab.txt 2>&1
echo "ab-bench rc $?"; python3 tools/ab_summary.py $O/ab 2>&1 | tail -n 20
tar czf ${OUT:-/tmp}/g2.tgz -C ${OUT:-/tmp} g2
