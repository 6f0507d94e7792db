#!/usr/bin/env bash
# Installs gemmtune's build and test dependencies from Debian's packages.
# Idempotent: packages already present are left alone; nothing is done when all are there.
# Set GEMMTUNE_WITH_CLBLAST=0 to skip the optional CLBlast comparison library.
# --amd also installs the offline AMD target's compiler (LLVM's AMDGPU backend, lld, llvm-objdump
# and the ROCm device libraries), which the test suite needs and a plain build does not.
set -euo pipefail

required=(
  build-essential cmake ninja-build pkg-config
  ocl-icd-opencl-dev opencl-clhpp-headers opencl-c-headers
  libcli11-dev nlohmann-json3-dev libeigen3-dev libspdlog-dev libfmt-dev
  zlib1g-dev catch2 pocl-opencl-icd clinfo
  python3 python3-matplotlib python3-pyopencl
)
optional=(libclblast-dev)
# clang 16 is the oldest whose AMDGPU backend allocates gfx11 registers as ROCm does.
amd_toolchain=(clang-16 lld-16 llvm-16 rocm-device-libs)
if [[ "${1:-}" == "--amd" ]]; then
  required+=("${amd_toolchain[@]}")
fi

missing=()
for pkg in "${required[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [[ "${GEMMTUNE_WITH_CLBLAST:-1}" != 0 ]]; then
  for pkg in "${optional[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all dependencies present"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
