#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a temporary prefix and runs the installed gemmtune the way a user
# would: it must find its data under <prefix>/share/gemmtune, list a space and run one verified
# GEMM. Then a copy of the binary far from any data folder must still find the data through the
# source folder recorded at configure time.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir="$(cd "$1" && pwd)"
source_dir="$(cd "$2" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
unset GEMMTUNE_DATA_DIR
fail() { echo "check_install: $*" >&2; exit 1; }

cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" || {
  cat "$work/install.log"; fail "cmake --install failed"; }
gemmtune="$work/prefix/bin/gemmtune"
[[ -x "$gemmtune" ]] || fail "no bin/gemmtune in the installed tree"

cd "$work"  # nothing of the source tree around
"$gemmtune" -v space --kernel xgemm --space ci >"$work/space.out" 2>"$work/space.err" ||
  { cat "$work/space.err"; fail "installed gemmtune space failed"; }
grep -q "kernel_templates folder: $work/prefix/share/gemmtune/kernel_templates" "$work/space.err" ||
  { cat "$work/space.err"; fail "installed gemmtune did not take its templates from share/gemmtune"; }
grep -q "valid configurations" "$work/space.out" || fail "space printed no count"

"$gemmtune" run --kernel xgemm -m 33 -n 17 -k 9 --min-runs 1 --max-runs 2 >"$work/run.out" 2>&1 ||
  { cat "$work/run.out"; fail "installed gemmtune run failed"; }
grep -q "^verified" "$work/run.out" || { cat "$work/run.out"; fail "run did not verify"; }

mkdir -p "$work/elsewhere/bin"
cp "$build_dir/gemmtune" "$work/elsewhere/bin/"
"$work/elsewhere/bin/gemmtune" -v space --kernel xgemm --space ci >/dev/null 2>"$work/far.err" ||
  { cat "$work/far.err"; fail "a binary outside the source tree found no data"; }
grep -q "kernel_templates folder: $source_dir/kernel_templates" "$work/far.err" ||
  { cat "$work/far.err"; fail "a binary outside the source tree did not fall back to the sources"; }
echo "check_install: installed tree and out-of-tree binary both found their data"
