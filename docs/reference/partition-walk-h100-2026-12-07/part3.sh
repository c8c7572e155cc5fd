#!/usr/bin/env bash
# The tile order permuted by THIS card's measured placement and L2-partition map (tables from
# the probe, passed to the kernel source through FP8GEMM_EXP_PERM_*; build/dev/part3, branch
# exp/partwalk3) against main, B pairs (P) and unpaired (U), c67 and d67. Each process under timeout.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/part3; mkdir -p $O
nvidia-smi --query-gpu=name,serial --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && C=$lib; done
OUT=$O timeout 60 $D/probe/l2part > $O/probe.txt 2>&1; echo "probe rc $?"; head -3 $O/probe.txt
T=$(python3 $D/perm.py $O 2>$O/perm.err); echo "perm rc $? $(cat $O/perm.err)"; echo "$T" > $O/perm.txt
export FP8GEMM_EXP_PERM_PLAIN=${T% *} FP8GEMM_EXP_PERM_CLUSTER=${T#* }
rm -rf /tmp/p3cache
cfg() { [ ${1: -1} = U ] && echo 128,192,4,8,0,1 || echo 128,192,4,8,2,1; }
cache() { [ ${1%?} = part3 ] && echo /tmp/p3cache || echo $D/main/cache; }
for v in part3P part3U; do for s in c67 d67; do
  g=""; [ $s = c67 ] && g=--grouped
  FP8GEMM_CACHE_DIR=$(cache $v) LD_LIBRARY_PATH=$D/part3:$C timeout 60 $D/main/fp8gemm bench --shapes $D/$s.json $g --config $(cfg $v) --replays 3 > $O/check-$s-$v.txt 2>&1
  echo "check $s $v rc $?"; grep -E "^ *(contiguous|[0-9]+ )" $O/check-$s-$v.txt | cut -c1-140
done; done
orders=("mainP part3P mainU part3U" "part3U mainU part3P mainP" "mainU part3P part3U mainP")
for r in 0 1 2; do
  for v in ${orders[$r]}; do
    for s in c67 d67; do
      g=""; [ $s = c67 ] && g=--grouped
      FP8GEMM_CACHE_DIR=$(cache $v) LD_LIBRARY_PATH=$D/${v%?}:$C timeout 60 $D/main/fp8gemm bench --shapes $D/$s.json $g --no-cublas --isolated --flush-mb 7630 --pause-ms 0 --kernel-time --config $(cfg $v) --json $O/$s-$v-r$r.json > $O/$s-$v-r$r.txt 2>&1
      echo "$s $v r$r rc $?: $(grep -E '^ *(contiguous|[0-9]+ )' $O/$s-$v-r$r.txt | awk -F'|' '{split($2,b," "); printf "%s ", b[2]}')"
    done
  done
done
M=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,sm__cycles_elapsed.max,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_srcunit_ltcfabric_lookup_hit.sum
fab() { FP8GEMM_CACHE_DIR=$(cache ${2}P) LD_LIBRARY_PATH=$D/$2 timeout 60 ncu --clock-control none --cache-control all --kernel-name regex:gemm_1d2d --launch-skip 1 --launch-count 1 --metrics $M $D/main/fp8gemm bench --shapes $4 $5 --no-cublas --replays 1 --config $3 > $O/ncu-$1.txt 2>&1
  echo "== $1 rc $?"; grep -E "dram__|lts__|sm__cycles" $O/ncu-$1.txt | awk '{print $1, $NF}' | tr '\n' ' '; echo; }
for v in part3 main; do
  fab c-${v}P $v 128,192,4,8,2,1 $D/c67.json --grouped
  fab c-${v}U $v 128,192,4,8,0,1 $D/c67.json --grouped
  fab d-${v}P $v 128,192,4,8,2,1 $D/d67.json
  fab d-${v}U $v 128,192,4,8,0,1 $D/d67.json
done
sed -i "s#$(pwd)/##g" $O/*.txt; gzip -f $O/latency.csv
tar czf ${OUT:-/tmp}/part3.tgz -C ${OUT:-/tmp} part3
