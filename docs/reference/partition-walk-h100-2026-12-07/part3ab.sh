#!/usr/bin/env bash
# part3 (this card's tables) against main on every forward set, 2 rounds of alternated processes.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/p3ab; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && export LD_LIBRARY_PATH=$lib; done
OUT=$O timeout 60 $D/probe/l2part > $O/probe.txt 2>&1; echo "probe rc $?"
T=$(python3 $D/perm.py $O 2>$O/perm.err); echo "perm rc $?"; echo "$T" > $O/perm.txt; gzip -f $O/latency.csv
export FP8GEMM_EXP_PERM_PLAIN=${T% *} FP8GEMM_EXP_PERM_CLUSTER=${T#* }
FP8GEMM_CLI=$D/main/fp8gemm timeout 420 bash tools/ab-bench.sh $O/ab 2 "shapes/m-grouped-only.json|--grouped --no-cublas --kernel-time;shapes/dense-m4096.json|--no-cublas --kernel-time" $D/main $D/part3 > $O/ab.txt 2>&1
echo "ab-bench rc $?"; python3 tools/ab_summary.py $O/ab 2>&1 | tail -n 40
tar czf ${OUT:-/tmp}/p3ab.tgz -C ${OUT:-/tmp} p3ab
