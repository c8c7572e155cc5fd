#!/usr/bin/env bash
# Why does a CTA pair miss the L2 twice as often and wait for its operands (log entry 142)?
# Variant libraries (local branches): nomc (exp/nomc: each CTA of a B pair loads its whole B
# itself, lockstep without multicast), hint (exp/l2hint: B loads evict_last), hintab
# (exp/l2hint-ab: and A loads evict_first), pf (exp/l2prefetch: the producer prefetches K block
# kb + kStages into the L2). First the bench on the contiguous 6144x7168 rows (B pairs of each
# library, and main unpaired), 4 processes in rotating order; then ncu (HBM reads, L2 read
# sectors and misses, cycles) of the 128x192 s4 tile on dense 32768x6144x7168 and the same rows.
cd "$(dirname "$0")/../.." || exit 2
D=build/dev; O=${OUT:-/tmp}/dram2; mkdir -p $O
nvidia-smi --query-gpu=name --format=csv,noheader
for lib in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do ls $lib/libcupti.so.13* >/dev/null 2>&1 && C=$lib; done
orders=("main nomc unp hint hintab pf" "pf nomc hint hintab unp main" "unp hintab main pf hint nomc" "hintab pf hint unp main nomc")
for r in 0 1 2 3; do
  for v in ${orders[$r]}; do
    lib=$v; cfg=128,192,4,8,2,1; [ $v = unp ] && { lib=main; cfg=128,192,4,8,0,1; }
    FP8GEMM_CACHE_DIR=$D/$lib/cache LD_LIBRARY_PATH=$D/$lib:$C $D/main/fp8gemm bench --shapes $D/c67.json --grouped --no-cublas --isolated --flush-mb 7630 --pause-ms 0 --kernel-time --config $cfg --json $O/bench-$v-r$r.json > $O/bench-$v-r$r.txt 2>&1
    echo "bench $v r$r rc $?: $(grep -E '^contiguous' $O/bench-$v-r$r.txt | awk -F'|' '{split($2,b," "); printf "%s ", b[2]}')"
  done
done
tar czf ${OUT:-/tmp}/dram2-bench.tgz -C ${OUT:-/tmp} dram2
M=dram__bytes_read.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,sm__cycles_elapsed.max,gpc__cycles_elapsed.avg.per_second,gpu__time_duration.sum
run() { # name lib config shapes [--grouped]
  FP8GEMM_CACHE_DIR=$D/$2/cache LD_LIBRARY_PATH=$D/$2 timeout 100 ncu --clock-control none --cache-control all --kernel-name regex:gemm_1d2d --launch-skip 1 --launch-count 1 --metrics $M $D/main/fp8gemm bench --shapes $4 $5 --no-cublas --replays 1 --config $3 > $O/$1.txt 2>&1
  echo "== $1 rc $?"; grep -E "dram__|lts__|sm__cycles|gpc__|gpu__time" $O/$1.txt | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' '; echo
}
run c-bpair main 128,192,4,8,2,1 $D/c67.json --grouped
run c-bpair-nomc nomc 128,192,4,8,2,1 $D/c67.json --grouped
run c-bpair-hint hint 128,192,4,8,2,1 $D/c67.json --grouped
run c-bpair-hintab hintab 128,192,4,8,2,1 $D/c67.json --grouped
run c-bpair-pf pf 128,192,4,8,2,1 $D/c67.json --grouped
run c-unp main 128,192,4,8,0,1 $D/c67.json --grouped
run c-unp-hint hint 128,192,4,8,0,1 $D/c67.json --grouped
run c-unp-pf pf 128,192,4,8,0,1 $D/c67.json --grouped
run d-bpair main 128,192,4,8,2,1 $D/d67.json
run d-bpair-nomc nomc 128,192,4,8,2,1 $D/d67.json
run d-bpair-hint hint 128,192,4,8,2,1 $D/d67.json
run d-unp main 128,192,4,8,0,1 $D/d67.json
run d-apair main 128,192,4,8,1,1 $D/d67.json
run d256-apair main 256,128,4,8,1,2 $D/d67.json
run d256-unp main 256,128,4,8,0,2 $D/d67.json
tar czf ${OUT:-/tmp}/dram2.tgz -C ${OUT:-/tmp} dram2
