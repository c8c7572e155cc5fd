#!/usr/bin/env bash
# Installs the Debian packages fp8gemm builds with. The CUDA toolkit (12.3 or newer;
# NVRTC, headers, nvcc for the GPU tests) is expected at /usr/local/cuda.
set -euo pipefail
packages=(cmake g++ make pkgconf libfmt-dev nlohmann-json3-dev libgtest-dev libcli11-dev python3-dev
          python3-pip python3-setuptools python3-wheel)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  echo "install-deps: the CUDA toolkit was not found (expected /usr/local/cuda/bin/nvcc)" >&2
  exit 1
fi
