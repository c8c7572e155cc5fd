#!/usr/bin/env bash
# (1) B loads with evict_last (build/dev/hint) against main on the m-grouped and dense M=4096 sets,
# 3 alternated rounds; (2) the L2 prefetch a ring ahead (build/dev/pf) in the 1D1D kernels, 1 round.
cd "$(dirname "$0")/../.." || exit 2
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && export LD_LIBRARY_PATH=$lib; done
O=${OUT:-/tmp}
D=build/dev
ncu --query-metrics --chip gh100 > /tmp/all-metrics.txt 2>&1; grep -iE "ltcfabric|srcnode|aperture" /tmp/all-metrics.txt > $O/ltc-metrics.txt; wc -l < $O/ltc-metrics.txt
M=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,sm__cycles_elapsed.max
for b in lts__t_sectors_srcunit_ltcfabric lts__t_sectors_srcunit_ltcfabric_lookup_miss lts__t_sectors_srcunit_ltcfabric_lookup_hit lts__t_sectors_srcunit_tex_aperture_device_lookup_miss; do grep -qE "^$b( |$)" /tmp/all-metrics.txt && M=$M,$b.sum; done; echo "metrics $M"
mkdir -p $O/fab
fab() { FP8GEMM_CACHE_DIR=$D/main/cache LD_LIBRARY_PATH=$D/main:$LD_LIBRARY_PATH timeout 100 ncu --clock-control none --cache-control all --kernel-name regex:gemm_1d2d --launch-skip 1 --launch-count 1 --metrics $M $D/main/fp8gemm bench --shapes $3 $4 --no-cublas --replays 1 --config $2 > $O/fab/$1.txt 2>&1
  echo "== $1 rc $?"; grep -E "dram__|lts__|sm__cycles|ERR" $O/fab/$1.txt | awk '{print $1, $NF}' | tr '\n' ' '; echo; }
fab c-bpair 128,192,4,8,2,1 $D/c67.json --grouped
fab c-unp 128,192,4,8,0,1 $D/c67.json --grouped
fab d-bpair 128,192,4,8,2,1 $D/d67.json
fab d-unp 128,192,4,8,0,1 $D/d67.json
date -u +%T
FP8GEMM_CLI=build/dev/main/fp8gemm timeout 330 bash tools/ab-bench.sh $O/hint 3 "shapes/m-grouped-only.json|--grouped --no-cublas --kernel-time;shapes/dense-m4096.json|--no-cublas --kernel-time" build/dev/main build/dev/hint > $O/hint.txt 2>&1
echo "hint ab-bench rc $?"; date -u +%T; python3 tools/ab_summary.py $O/hint 2>&1 | tail -n 40
tar czf $O/hint.tgz -C $O hint hint.txt
FP8GEMM_CLI=build/dev/main/fp8gemm timeout 150 bash tools/ab-bench.sh $O/kg 1 "shapes/k-grouped-only.json|--grouped --no-cublas --kernel-time;shapes/wgrad-only.json|--wgrad --no-cublas --kernel-time" build/dev/main build/dev/pf > $O/kg.txt 2>&1
echo "kg ab-bench rc $?"; date -u +%T; python3 tools/ab_summary.py $O/kg 2>&1 | tail -n 30
tar czf $O/all.tgz -C $O hint hint.txt kg kg.txt fab ltc-metrics.txt
