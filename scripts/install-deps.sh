#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs gemmtune's dependencies from Debian's packages, by group:
#
#   scripts/install-deps.sh [--amd] [GROUP...]
#
#   build   compiler, CMake, Ninja, the libraries' headers, PoCL and CLBlast: what building and
#           running the tool needs
#   plots   python3 and matplotlib, for scripts/plot.py (107 of the 241 packages on a bare Debian 12)
#   tests   Catch2, clinfo and pyopencl, for the test suite and the Python module's test; Mesa's
#           OpenCL (rusticl, run on the CPU) and Oclgrind, for the driver tests; Cython, numpy,
#           the Python headers and venv, to build pyclblast for libgemmtune_clblast's test
#   amd     the offline AMD target's compiler (LLVM's AMDGPU backend, lld, llvm-objdump and the ROCm
#           device libraries), which the test suite needs and a plain build does not
#
# With no group: build, plots and tests; --amd adds amd. Idempotent: packages already present are
# left alone; nothing is done when all are there. GEMMTUNE_WITH_CLBLAST=0 skips the optional CLBlast.
set -euo pipefail

groups=()
for arg in "$@"; do
  case "$arg" in
    --amd) groups+=(build plots tests amd) ;;
    build | plots | tests | amd) groups+=("$arg") ;;
    *)
      echo "install-deps: unknown group '$arg' (expected build, plots, tests, amd or --amd)" >&2
      exit 2
      ;;
  esac
done
[[ ${#groups[@]} -gt 0 ]] || groups=(build plots tests)

wanted=()
for group in "${groups[@]}"; do
  case "$group" in
    build)
      wanted+=(build-essential cmake ninja-build pkg-config
        ocl-icd-opencl-dev opencl-clhpp-headers opencl-c-headers
        libcli11-dev nlohmann-json3-dev libeigen3-dev libspdlog-dev libfmt-dev zlib1g-dev
        pocl-opencl-icd)
      [[ "${GEMMTUNE_WITH_CLBLAST:-1}" == 0 ]] || wanted+=(libclblast-dev)
      ;;
    plots) wanted+=(python3 python3-matplotlib) ;;
    tests)
      wanted+=(catch2 clinfo python3 python3-pyopencl mesa-opencl-icd libclc-15 oclgrind valgrind
        cython3 python3-dev python3-numpy python3-venv)
      ;;
    # clang 16 is the oldest whose AMDGPU backend allocates gfx11 registers as ROCm does.
    amd) wanted+=(clang-16 lld-16 llvm-16 rocm-device-libs) ;;
  esac
done

missing=()
for pkg in $(printf '%s\n' "${wanted[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all dependencies present (${groups[*]})"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A second call shortly after the first (the quick start installs its groups in two steps) reuses
# the package lists the first one fetched (their change time: apt keeps the server's modification
# time).
lists=/var/lib/apt/lists
if [[ -z "$(find "$lists" -maxdepth 1 -name '*_Packages*' -cmin -30 2>/dev/null | head -n 1)" ]]; then
  "${sudo_cmd[@]}" apt-get update -q
fi
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
