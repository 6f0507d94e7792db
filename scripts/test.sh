#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs missing dependencies, builds gemmtune and runs the whole test suite through ctest.
# Exits non-zero on any failure. The suite runs on any OpenCL device; PoCL (CPU) is enough.
# Extra arguments go to cmake's configure step (e.g. -DGEMMTUNE_SANITIZE=ON).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh" --amd
# The Python module's test needs the python3 that Debian's python3-pyopencl belongs to, which may
# not be the first python3 on PATH.
python_args=()
if /usr/bin/python3 -c "import pyopencl, numpy" 2>/dev/null; then
  python_args=(-DPython3_EXECUTABLE=/usr/bin/python3)
fi
"$root/scripts/build.sh" -DGEMMTUNE_BUILD_TESTS=ON "${python_args[@]}" "$@"
build_dir="${GEMMTUNE_BUILD_DIR:-$root/build}"
# Kernel binaries are cached per test run (gemmtune keeps them under $XDG_CACHE_HOME/gemmtune),
# so a stale cache can never hide a build failure.
export XDG_CACHE_HOME="$build_dir/test-cache"
# PoCL keeps its own cache of builds there (a rebuild of a cached source takes about 50 ms), and
# handing out a binary for gemmtune's cache makes it compile a generic copy of every kernel of the
# program first. Tests of the binary cache name their folder (--cache-dir), which this leaves alone.
export GEMMTUNE_BINARY_CACHE=none
# PoCL is always installed here (install-deps.sh), so a device test that finds no OpenCL device is
# a failure, never a skip (tests/test_support.hpp).
export GEMMTUNE_REQUIRE_DEVICE=1
# Kernel builds were three quarters of the suite's time on PoCL (822 s of test time with an empty
# kernel cache, 187 s with a full one, 2 cores). The tests check what a kernel computes, which the
# optimizer may change only in rounding, so PoCL builds their kernels without it (test time
# 465-517 s); the tests tagged [optimized] run with it, as a user's builds do
# (tests/CMakeLists.txt). POCL_EXTRA_BUILD_FLAGS="" runs every test on optimized builds. Other
# drivers ignore the variable.
export POCL_EXTRA_BUILD_FLAGS="${POCL_EXTRA_BUILD_FLAGS--cl-opt-disable}"
# With -DGEMMTUNE_SANITIZE=ON: leaks inside the OpenCL runtime (PoCL, LLVM) are not gemmtune's and
# are suppressed, so that LeakSanitizer fails a test on gemmtune's own leaks only. Harmless otherwise.
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
rm -rf "$XDG_CACHE_HOME"
cd "$build_dir"
ctest --output-on-failure --no-tests=error -j "${GEMMTUNE_TEST_JOBS:-2}" --timeout 600
