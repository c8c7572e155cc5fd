#!/bin/sh
# A stand-in for a variant's own `fp8gemm` CLI in the test of tools/ab-bench.sh: says which
# CLI ran and with which library path.
echo "geomean (the variant's own CLI; LD_LIBRARY_PATH starts with $(basename "${LD_LIBRARY_PATH%%:*}"))"
