#!/usr/bin/env bash
# CTAs numbered by their SM's L2 partition (build/dev/part) against main, pairs and unpaired.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/part; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && C=$lib; done
timeout 60 $D/probe/l2part > $O/probe.txt 2>&1; cp /tmp/latency.csv /tmp/placement.csv $O/ 2>/dev/null
orders=("mainP partP mainU partU" "partU mainU partP mainP" "mainU partP partU mainP" "partP mainP mainU partU")
for r in 0 1 2 3; do
  for v in ${orders[$r]}; do
    lib=${v%?}; k=${v: -1}; cfg=128,192,4,8,2,1; [ $k = U ] && cfg=128,192,4,8,0,1
    for s in c67 d67; do
      g=""; [ $s = c67 ] && g=--grouped
      FP8GEMM_CACHE_DIR=$D/$lib/cache LD_LIBRARY_PATH=$D/$lib:$C $D/main/fp8gemm bench --shapes $D/$s.json $g --no-cublas --isolated --flush-mb 7630 --pause-ms 0 --kernel-time --config $cfg --json $O/$s-$v-r$r.json > $O/$s-$v-r$r.txt 2>&1
      echo "$s $v r$r rc $?: $(grep -E '^(contiguous|dense|  *dense)' $O/$s-$v-r$r.txt | awk -F'|' '{split($2,b," "); printf "%s ", b[2]}')"
    done
  done
done
tar czf ${OUT:-/tmp}/part-bench.tgz -C ${OUT:-/tmp} part
M=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum
fab() { FP8GEMM_CACHE_DIR=$D/$2/cache LD_LIBRARY_PATH=$D/$2 timeout 60 ncu --clock-control none --cache-control all --kernel-name regex:gemm_1d2d --launch-skip 1 --launch-count 1 --metrics $M $D/main/fp8gemm bench --shapes $4 $5 --no-cublas --replays 1 --config $3 > $O/ncu-$1.txt 2>&1
  echo "== $1 rc $?"; grep -E "dram__|lts__|sm__cycles" $O/ncu-$1.txt | awk '{print $1, $NF}' | tr '\n' ' '; echo; }
fab c-partP part 128,192,4,8,2,1 $D/c67.json --grouped
fab c-partU part 128,192,4,8,0,1 $D/c67.json --grouped
fab d-partP part 128,192,4,8,2,1 $D/d67.json
fab d-partU part 128,192,4,8,0,1 $D/d67.json
tar czf ${OUT:-/tmp}/part.tgz -C ${OUT:-/tmp} part
