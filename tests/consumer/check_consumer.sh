#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a temporary prefix, configures and builds tests/consumer (a separate
# CMake project) against it with find_package(gemmtune), once with the shared library
# (gemmtune::gemmtune) and once with the static one (gemmtune::gemmtune_static), and runs both far
# from the source and build trees: the installed library must work with nothing but libOpenCL at
# run time. Also checks the pkg-config file and that the installed library needs no other
# non-system library.
# Usage: check_consumer.sh BUILD_DIR SOURCE_DIR [CMAKE]
set -euo pipefail
build_dir="$(cd "$1" && pwd)"
source_dir="$(cd "$2" && pwd)"
cmake="${3:-cmake}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
unset GEMMTUNE_DATA_DIR GEMMTUNE_DB
fail() { echo "check_consumer: $*" >&2; exit 1; }

"$cmake" --install "$build_dir" --prefix "$work/prefix" --component gemmtune_library >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
prefix="$work/prefix"
lib="$(find "$prefix" -name 'libgemmtune.so*' -type f | head -1)"
[[ -n "$lib" ]] || fail "no libgemmtune.so installed"
[[ -n "$(find "$prefix" -name libgemmtune.a)" ]] || fail "no libgemmtune.a installed"
[[ -f "$prefix/include/gemmtune/gemmtune.hpp" && -f "$prefix/include/gemmtune/gemmtune_c.h" ]] ||
  fail "headers missing"
ls "$prefix"/share/gemmtune/databases/*.json >/dev/null 2>&1 || fail "no databases installed"
# Only libOpenCL besides the C and C++ runtimes.
needed="$(readelf -d "$lib" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' |
  grep -v -E '^(libOpenCL|libstdc\+\+|libm|libgcc_s|libc|ld-linux.*)\.so' || true)"
[[ -z "$needed" ]] || fail "the library needs more than libOpenCL at run time: $needed"
# The public headers name no third-party library of the implementation.
if grep -R -l -E 'nlohmann|Eigen|spdlog|fmt/' "$prefix/include/gemmtune"; then
  fail "a public header includes an implementation library"
fi
pc="$(find "$prefix" -name gemmtune.pc | head -1)"
[[ -n "$pc" ]] || fail "no gemmtune.pc installed"
if command -v pkg-config >/dev/null; then
  flags="$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs gemmtune)" ||
    fail "pkg-config cannot read gemmtune.pc"
  [[ "$flags" == *"-I$prefix/include"* || "$flags" == *"/include"* ]] || fail "pc flags: $flags"
  [[ "$flags" == *"-lgemmtune"* ]] || fail "pc flags lack -lgemmtune: $flags"
fi

cp -r "$source_dir/tests/consumer" "$work/consumer"
# The consumer against each library (VARIANT shared or static, STATIC OFF or ON): configured,
# built and run far from the source and build trees.
consume() {
  local variant="$1" static="$2" build="$work/consumer-$1" linked=static rc=0
  "$cmake" -S "$work/consumer" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release -DGEMMTUNE_CONSUMER_STATIC="$static" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; fail "configuring the $variant consumer project failed"; }
  "$cmake" --build "$build" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; fail "building the $variant consumer project failed"; }
  [[ "$(readelf -d "$build/consumer")" == *"Shared library: [libgemmtune.so"* ]] && linked=shared
  [[ $linked == "$variant" ]] || fail "the $variant consumer uses the $linked library"
  run_consumer "$build/consumer" "$variant" ""
}
# run_consumer PROGRAM NAME ENV: runs the consumer with ENV ("NAME=value ...") added.
run_consumer() {
  local program="$1" name="$2" rc=0
  (cd "$work" && env $3 "$program") >"$work/run.out" 2>&1 || rc=$?
  cat "$work/run.out"
  [[ $rc -eq 0 ]] || fail "the $name consumer program failed ($rc)"
  grep -q "are right" "$work/run.out" || fail "the $name consumer printed no result"
}
consume shared OFF
consume static ON
# The drivers AMD users have: Mesa's rusticl (on the CPU: events that read 0 ns, kernels of at
# most 32 work-items) and a device capped as Clover is (256 work-items, OpenCL C 1.1), the latter
# stood in for by PoCL. Every call must still be served right.
run_consumer "$work/consumer-shared/consumer" "rusticl" \
  "RUSTICL_ENABLE=llvmpipe GEMMTUNE_TEST_PLATFORM=rusticl"
run_consumer "$work/consumer-shared/consumer" "Clover-like" \
  "POCL_MAX_WORK_GROUP_SIZE=256 GEMMTUNE_DEVICE_OPENCL_C=1.1 GEMMTUNE_TEST_PLATFORM=Portable"
echo "check_consumer: installed package found, built against (shared and static) and run"
