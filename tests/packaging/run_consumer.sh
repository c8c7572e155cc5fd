#!/usr/bin/env bash
# Installs a build tree into a fresh prefix, moves the prefix (the package must be
# relocatable), and uses it the way a downstream project would, in a temporary directory
# outside the source tree:
#   run_consumer.sh SOURCE_DIR BUILD_DIR cli|find_package|pkg_config_c99|add_subdirectory|python_pip
# Each consumer program calls a GEMM through its own API and expects the documented answer
# on a machine without an NVIDIA driver (NoDriver). The directory is removed when the
# consumer passes and kept (its path printed) when it fails. Exit status 77: skipped (said why).
set -euo pipefail
src=$1 build=$2 what=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/fp8gemm-consumer-$what.XXXXXX")
trap 'status=$?; if [ $status -eq 0 ] || [ $status -eq 77 ]; then rm -rf "$work"; else echo "run_consumer.sh: $what failed; files in $work" >&2; fi' EXIT
echo "run_consumer.sh: $what in $work"
cmake --install "$build" --prefix "$work/staged" > "$work/install.log"
mv "$work/staged" "$work/prefix"
prefix=$work/prefix
cp -r "$src/tests/packaging" "$work/consumers"
# Nothing from the build tree or the environment may help the installed files find each other.
unset LD_LIBRARY_PATH
case $what in
  cli)
    # The installed CLI finds its library through its RUNPATH.
    "$prefix/bin/fp8gemm" --version
    "$prefix/bin/fp8gemm" info
    ;;
  find_package)
    cmake -S "$work/consumers/cxx_consumer" -B "$work/cxx" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
    cmake --build "$work/cxx"
    "$work/cxx/cxx_consumer"
    ;;
  pkg_config_c99)
    export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name fp8gemm.pc | head -n 1)")
    echo "pkg-config --cflags --libs fp8gemm: $(pkg-config --cflags --libs fp8gemm)"
    # shellcheck disable=SC2046
    gcc -std=c99 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags fp8gemm) "$work/consumers/c_consumer/main.c" \
      $(pkg-config --libs fp8gemm) -Wl,-rpath,"$(pkg-config --variable=libdir fp8gemm)" -o "$work/c_consumer"
    "$work/c_consumer"
    ;;
  add_subdirectory)
    cmake -S "$work/consumers/subdir_consumer" -B "$work/subdir" -DFP8GEMM_SOURCE_DIR="$src" -DCMAKE_BUILD_TYPE=Release
    # The subproject builds no tests or examples of its own.
    if grep -q "fp8gemm_cpu_tests\|fp8gemm_linear_example" "$work/subdir/Makefile" "$work/subdir/fp8gemm/Makefile" 2>/dev/null; then
      echo "add_subdirectory: fp8gemm's tests or examples are part of the consumer's build" >&2
      exit 1
    fi
    cmake --build "$work/subdir" -j"$(nproc)" --target subdir_consumer
    "$work/subdir/subdir_consumer"
    ;;
  python_pip)
    # The README's install command, offline, with the system's python3 (Debian: python3-pip,
    # python3-setuptools, python3-wheel), recording the installed library; the package then
    # imports without torch and opens that library.
    py=/usr/bin/python3
    [ -x "$py" ] || py=$(command -v python3)
    if ! "$py" -c "import setuptools, wheel" 2> /dev/null || ! "$py" -m pip --version > /dev/null 2>&1; then
      echo "run_consumer.sh: python_pip skipped: $py has no pip, setuptools or wheel"
      exit 77
    fi
    lib=$(find "$prefix" -name libfp8gemm.so.0 | head -n 1)
    mkdir -p "$work/src"
    cp -r "$src/python" "$src/include" "$work/src/"  # pip builds inside the source directory
    FP8GEMM_LIBRARY=$lib "$py" -m pip install --no-build-isolation --no-deps --no-index --target "$work/site" \
      "$work/src/python" > "$work/pip.log" 2>&1 || { cat "$work/pip.log"; exit 1; }
    (cd "$work" && env -u FP8GEMM_LIBRARY PYTHONPATH="$work/site" "$py" -c "
import sys, fp8gemm
assert fp8gemm.LIBRARY_PATH == sys.argv[1], (fp8gemm.LIBRARY_PATH, sys.argv[1])
assert 'torch' not in sys.modules
print('fp8gemm', fp8gemm.__version__, 'from', fp8gemm.LIBRARY_PATH, '| driver:', fp8gemm.runtime_info().driver)
" "$lib")
    ;;
  *)
    echo "run_consumer.sh: unknown consumer '$what'" >&2
    exit 2
    ;;
esac
echo "run_consumer.sh: $what passed"
