#!/usr/bin/env bash
# k-grouped tile/stage sweep on 8 x 4096x7168 and 16 x 4096x7168, two processes, configs in turn.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/kgcfg; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && C=$lib; done
CF="--config 192,128,3,8 --config 128,128,4,8 --config 128,128,5,8 --config 128,192,3,8 --config 128,144,4,8 --config 192,128,3,16"
for r in 1 2; do
FP8GEMM_CACHE_DIR=$D/main/cache LD_LIBRARY_PATH=$D/main:$C timeout 200 $D/main/fp8gemm bench --shapes $D/kg16.json --grouped --no-cublas --isolated --flush-mb 7630 --pause-ms 0 --kernel-time $CF --json $O/r$r.json > $O/r$r.txt 2>&1
echo "round $r rc $?"; grep -E "k-grouped|kgrouped|^ *[0-9]+ " $O/r$r.txt | cut -c1-170
done
tar czf ${OUT:-/tmp}/kgcfg.tgz -C ${OUT:-/tmp} kgcfg
