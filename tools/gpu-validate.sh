#!/usr/bin/env bash
# GPU validation from an existing Release build, on a machine with an sm_90 GPU:
# device and library info, the GPU test suite, `fp8gemm check`, a prewarm of the
# DeepSeek-V3 set, compute-sanitizer (memcheck, racecheck, synccheck) on a small and a large shape and
# (memcheck, racecheck) on one kernel of every other family, and
# the SASS of the compiled kernels (FP8 wgmma must show as QGMMA, no local memory). Usage: tools/gpu-validate.sh [build-dir] [log-dir]
set -uo pipefail
build=${1:-build}
logs=${2:-gpu-validate-logs}
mkdir -p "$logs"
export LD_LIBRARY_PATH="$PWD/$build${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FP8GEMM_CACHE_DIR="${FP8GEMM_CACHE_DIR:-$PWD/$logs/cache}"
status=0

echo "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,utilization.gpu \
  --format=csv 2>&1 | tee "$logs/nvidia-smi.txt"
"$build/tools/fp8gemm" info 2>&1 | tee "$logs/info.txt"

echo "== prewarm (DeepSeek-V3 dense set, constant-B variants included)"
"$build/tools/fp8gemm" prewarm --b-constant --shapes shapes/deepseek-v3.json 2>&1 | tail -n 3 | tee "$logs/prewarm.txt"

echo "== GPU tests"
timeout "${GPU_TEST_TIMEOUT:-900}" "$build/tests/fp8gemm_gpu_tests" ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} \
  > "$logs/gpu-tests.txt" 2>&1 || status=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]|Failure|rel_error|error:' "$logs/gpu-tests.txt" | head -n 150

echo "== check"
"$build/tools/fp8gemm" check 2>&1 | tee "$logs/check.txt" || status=1

echo "== compute-sanitizer (memcheck, racecheck, synccheck on a small and a large shape; every family)"
# The small shape's planned kernel is a split-K one (partial sums exchanged through
# distributed shared memory); racecheck also runs on the same problem without split-K. The
# --b-constant lines run the constant-B variants (B loaded before the dependency wait).
# "gtest:TEST" lines run one GPU test instead of `check`: the C API tests call each form
# (weight gradient, contiguous, masked, k-grouped, the quantizers) once on small problems.
if command -v compute-sanitizer >/dev/null; then
  while read -r tool shape; do
    [ -n "$tool" ] || continue
    # shellcheck disable=SC2206
    case $shape in
      gtest:*) run=("$build/tests/fp8gemm_gpu_tests" "--gtest_filter=${shape#gtest:}") ;;
      *) run=("$build/tools/fp8gemm" check $shape) ;;
    esac
    timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 86 "${run[@]}" \
      > "$logs/sanitizer.txt" 2>&1 < /dev/null
    rc=$?
    printf '%-10s %-52s rc=%s  %s\n' "$tool" "$shape" "$rc" \
      "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer.txt" | head -n 1)" | tee -a "$logs/sanitizers.txt"
    [ "$rc" -eq 0 ] || status=1
  done <<'LIST'
memcheck  -m 7 -n 576 -k 7168
memcheck  -m 4096 -n 7168 -k 2048
memcheck  -m 128 -n 4096 -k 7168 --config 64,128,8,8,0,1,2
racecheck -m 7 -n 576 -k 7168
racecheck -m 7 -n 576 -k 7168 --config 64,16,8,8,0,0,1
racecheck -m 4096 -n 7168 -k 2048
racecheck -m 128 -n 4096 -k 7168 --config 64,128,8,8,0,1,2
synccheck -m 7 -n 576 -k 7168
memcheck  -m 1 -n 32768 -k 512 --b-constant
memcheck  -m 64 -n 4096 -k 7168 --b-constant
racecheck -m 64 -n 4096 -k 7168 --b-constant
racecheck -m 128 -n 24576 -k 1536 --b-constant
memcheck  gtest:GpuCApi.WeightGradientFp32IsBitIdentical
racecheck gtest:GpuCApi.WeightGradientFp32IsBitIdentical
memcheck  gtest:GpuCApi.GroupedContiguousIsBitIdentical
racecheck gtest:GpuCApi.GroupedContiguousIsBitIdentical
memcheck  gtest:GpuCApi.GroupedMaskedIsBitIdentical
racecheck gtest:GpuCApi.GroupedMaskedIsBitIdentical
memcheck  gtest:GpuCApi.KGroupedWeightGradientIsBitIdentical
racecheck gtest:GpuCApi.KGroupedWeightGradientIsBitIdentical
memcheck  gtest:GpuCApi.QuantizersAreBitIdentical
racecheck gtest:GpuCApi.QuantizersAreBitIdentical
LIST
  rm -f "$logs/sanitizer.txt"
else
  echo "compute-sanitizer not found; not run"
fi

echo "== SASS of the cached kernels"
if command -v cuobjdump >/dev/null; then
  for entry in "$FP8GEMM_CACHE_DIR"/kernels/*.fp8k; do
    [ -e "$entry" ] || continue
    tail -n +3 "$entry" > "$logs/kernel.cubin"
    sass=$(cuobjdump --dump-sass "$logs/kernel.cubin")
    printf '%-48s QGMMA=%-4s LDL/STL=%s\n' "$(basename "$entry" .fp8k | cut -c1-48)" \
      "$(grep -c QGMMA <<<"$sass")" "$(grep -cE '\b(LDL|STL)\b' <<<"$sass")"
  done | tee "$logs/sass-summary.txt"
  first=$(ls "$FP8GEMM_CACHE_DIR"/kernels/*.fp8k 2>/dev/null | head -n 1)
  [ -n "$first" ] && tail -n +3 "$first" > "$logs/kernel.cubin" && cuobjdump --dump-sass "$logs/kernel.cubin" > "$logs/kernel.sass"
  rm -f "$logs/kernel.cubin"
else
  echo "cuobjdump not found; SASS not inspected"
fi
exit $status
