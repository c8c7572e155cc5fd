#!/usr/bin/env bash
# The tile order permuted by the measured placement and L2-partition map (build/dev/part2,
# branch exp/partwalk2) against main, B pairs (P) and unpaired (U), contiguous 6144x7168 rows
# (c67) and dense 32768x6144x7168 (d67). Every process under `timeout 60`.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/part2; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && C=$lib; done
OUT=$O timeout 60 $D/probe/l2part > $O/probe.txt 2>&1; echo "probe rc $?"; head -3 $O/probe.txt
cfg() { [ ${1: -1} = U ] && echo 128,192,4,8,0,1 || echo 128,192,4,8,2,1; }
# Correctness first: against cuBLASLt (rel.diff column).
for v in part2P part2U; do for s in c67 d67; do
  g=""; [ $s = c67 ] && g=--grouped
  FP8GEMM_CACHE_DIR=$D/part2/cache LD_LIBRARY_PATH=$D/part2:$C timeout 60 $D/main/fp8gemm bench --shapes $D/$s.json $g --config $(cfg $v) --replays 3 > $O/check-$s-$v.txt 2>&1
  echo "check $s $v rc $?"; grep -E "^ *(contiguous|[0-9]+ )" $O/check-$s-$v.txt | cut -c1-200
done; done
orders=("mainP part2P mainU part2U" "part2U mainU part2P mainP" "mainU part2P part2U mainP")
for r in 0 1 2; do
  for v in ${orders[$r]}; do
    lib=${v%?}
    for s in c67 d67; do
      g=""; [ $s = c67 ] && g=--grouped
      FP8GEMM_CACHE_DIR=$D/$lib/cache LD_LIBRARY_PATH=$D/$lib:$C timeout 60 $D/main/fp8gemm bench --shapes $D/$s.json $g --no-cublas --isolated --flush-mb 7630 --pause-ms 0 --kernel-time --config $(cfg $v) --json $O/$s-$v-r$r.json > $O/$s-$v-r$r.txt 2>&1
      echo "$s $v r$r rc $?: $(grep -E '^ *(contiguous|[0-9]+ )' $O/$s-$v-r$r.txt | awk -F'|' '{split($2,b," "); printf "%s ", b[2]}')"
    done
  done
done
tar czf ${OUT:-/tmp}/part2-bench.tgz -C ${OUT:-/tmp} part2
M=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum,lts__t_sectors_srcunit_ltcfabric_lookup_miss.sum
fab() { FP8GEMM_CACHE_DIR=$D/$2/cache LD_LIBRARY_PATH=$D/$2 timeout 60 ncu --clock-control none --cache-control all --kernel-name regex:gemm_1d2d --launch-skip 1 --launch-count 1 --metrics $M $D/main/fp8gemm bench --shapes $4 $5 --no-cublas --replays 1 --config $3 > $O/ncu-$1.txt 2>&1
  echo "== $1 rc $?"; grep -E "dram__|lts__|sm__cycles" $O/ncu-$1.txt | awk '{print $1, $NF}' | tr '\n' ' '; echo; }
for v in part2 main; do
  fab c-${v}P $v 128,192,4,8,2,1 $D/c67.json --grouped
  fab c-${v}U $v 128,192,4,8,0,1 $D/c67.json --grouped
  fab d-${v}P $v 128,192,4,8,2,1 $D/d67.json
  fab d-${v}U $v 128,192,4,8,0,1 $D/d67.json
done
sed -i "s#$(pwd)/##g" $O/*.txt
tar czf ${OUT:-/tmp}/part2.tgz -C ${OUT:-/tmp} part2
