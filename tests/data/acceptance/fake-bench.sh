#!/bin/sh
# A stand-in for `fp8gemm bench` in the test of tools/acceptance-run.sh: for
# `bench --shapes S.json ... --json OUT` it copies the recorded kernel-time bench file of that
# set (82a2f65, round 1, docs/reference) to OUT, and fails for any other command.
ref="$(cd "$(dirname "$0")/../../.." && pwd)/docs/reference"
[ "$1" = bench ] || { echo "fake-bench.sh: only bench" >&2; exit 2; }
shapes="" json=""
while [ $# -gt 0 ]; do
  case "$1" in
    --shapes) shapes=$2; shift ;;
    --json) json=$2; shift ;;
  esac
  shift
done
case "$(basename "$shapes" .json)" in
  dense-m4096) form=isolated ;;
  dense-decode) form=decode ;;
  m-grouped-only) form=mgrouped ;;
  k-grouped-only) form=kgrouped ;;
  wgrad-only) form=wgrad ;;
  *) echo "fake-bench.sh: no recorded file for $shapes" >&2; exit 1 ;;
esac
cp "$ref/bench-$form-kerneltime-h200-82a2f65-r1.json" "$json" && echo "geomean (recorded $form)"
