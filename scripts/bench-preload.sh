#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Times a CLBlast application's GEMMs plain and with libgemmtune_clblast preloaded: the C client
# of tests/preload (clblast_client_c --bench, built against the installed CLBlast) over a list of
# shapes, each shape's time per call in both runs and their ratio (plain / preloaded: above 1,
# the preloaded run is faster), then the geometric mean of the ratios. The preloaded run serves
# what the databases (compiled in, system, GEMMTUNE_DB) hold a tuned configuration for and leaves
# the rest to CLBlast; GEMMTUNE_CLBLAST=log prints which served each shape.
#
#   scripts/bench-preload.sh [--shapes MxNxK,...] [--precision s|d|h] [--layout row|col]
#                            [--runs N] [--device P:D]
#
# The options go to the client (its defaults: square shapes from 256 to 4096 and a few skinny
# ones, single precision, row-major, 10 runs after 2 untimed calls, the first GPU). It builds the
# two targets it needs in $GEMMTUNE_BUILD_DIR (default build/), a build folder configured with
# -DGEMMTUNE_BUILD_TESTS=ON (scripts/build.sh -DGEMMTUNE_BUILD_TESTS=ON) where CLBlast is installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${GEMMTUNE_BUILD_DIR:-$root/build}"
fail() { echo "bench-preload: $*" >&2; exit 2; }

[[ -f "$build_dir/CMakeCache.txt" ]] ||
  fail "no build folder $build_dir (scripts/build.sh -DGEMMTUNE_BUILD_TESTS=ON)"
cmake --build "$build_dir" --target gemmtune_clblast_preload clblast_client_c >/dev/null ||
  fail "cannot build libgemmtune_clblast and the client in $build_dir (configure it with -DGEMMTUNE_BUILD_TESTS=ON, CLBlast installed)"
client="$build_dir/tests/preload/clblast_client_c"
preload="$build_dir/libgemmtune_clblast.so"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A shape that fails prints its status and makes the client exit 1: the table still shows it.
rc=0
"$client" --bench "$@" >"$work/plain" || rc=$?
[[ $rc -le 1 ]] || fail "the plain run failed ($rc)"
rc=0
LD_PRELOAD="$preload" "$client" --bench "$@" >"$work/preloaded" || rc=$?
[[ $rc -le 1 ]] || fail "the preloaded run failed ($rc)"

head -n 1 "$work/plain"
# Lines: "bench MxNxK T ms G GFLOPS", or "bench MxNxK status S" for a call that failed.
awk '
  FNR == NR && $1 == "bench" { plain[$2] = ($4 == "ms") ? $3 : "status " $4; order[++n] = $2; next }
  $1 == "bench" { preloaded[$2] = ($4 == "ms") ? $3 : "status " $4 }
  END {
    printf "%-18s %14s %14s %8s\n", "shape", "CLBlast ms", "preloaded ms", "ratio"
    for (i = 1; i <= n; ++i) {
      s = order[i]; p = plain[s]; q = preloaded[s]
      ratio = "-"
      if (p !~ /status/ && q != "" && q !~ /status/ && q > 0) {
        r = p / q; ratio = sprintf("%.3f", r); logs += log(r); ++rated
      }
      printf "%-18s %14s %14s %8s\n", s, p, (q == "" ? "-" : q), ratio
    }
    if (rated) printf "geometric mean of %d ratios: %.3f\n", rated, exp(logs / rated)
  }' "$work/plain" "$work/preloaded"
