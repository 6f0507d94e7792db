#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs a CLBlast client program (clblast_client.c) plain and with libgemmtune_clblast preloaded,
# the library as installed (cmake --install, component gemmtune_library: beside libgemmtune):
# - the library exports CLBlast's GEMM entry points under the names the installed CLBlast does;
# - preloaded with GEMMTUNE_CLBLAST=log, every call's status and event are the plain run's and
#   every result within the verification tolerance of the plain run's (the client also checks
#   each run against a reference computed on the host), one log line per call, and the calls of
#   the problems the test database tunes served by gemmtune, the others by CLBlast, each with
#   its reason (no tuned configuration, arguments CLBlast refuses, per-GEMM alphas, no fp16);
# - the same, then from 4 threads at once, each on a queue of its own;
# - GEMMTUNE_CLBLAST unset (on) computes what the logged run did, silently;
# - GEMMTUNE_CLBLAST=off, or a value that is none of off, on and log, leaves every call to
#   CLBlast: results identical to the plain run's, bit for bit.
# Usage: check_preload.sh BUILD_DIR CLIENT c|cpp DATABASE CLBLAST_LIBRARY
set -euo pipefail
build_dir="$1"
client="$2"
kind="$3"
database="$4"
clblast="$5"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "check_preload: $*" >&2; exit 1; }

cmake --install "$build_dir" --prefix "$work/prefix" --component gemmtune_library \
  >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install failed"; }
preload="$(find "$work/prefix" -name libgemmtune_clblast.so | head -n 1)"
[[ -n "$preload" ]] || fail "no libgemmtune_clblast.so installed"
[[ -n "$(find "$(dirname "$preload")" -maxdepth 1 -name 'libgemmtune.so*')" ]] ||
  fail "libgemmtune_clblast.so is not installed beside libgemmtune"
# In a build with -DGEMMTUNE_SANITIZE=ON the library needs AddressSanitizer's runtime, which must
# come first of all libraries: preloaded before it. The leak check is left out there: the OpenCL
# drivers and CLBlast keep allocations for the process's life (tests/lsan.supp names some), and
# gemmtune's own tests check its leaks.
asan="$(ldd "$preload" | awk '/libasan/ {print $3}')"
preloads="${asan:+$asan }$preload"
[[ -z "$asan" ]] || export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# The test database alone decides for the test problems, beside those compiled in: no system
# databases of an installation on this machine.
mkdir "$work/no-system-databases"
export GEMMTUNE_DB="$database" GEMMTUNE_SYSTEM_DATABASES="$work/no-system-databases"
unset GEMMTUNE_CLBLAST LD_PRELOAD

# The exported names: each a GEMM entry point CLBlast defines, the real types' nine C functions
# and nine C++ instantiations (complex types and every other routine stay CLBlast's).
exports() { nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" {print $3}' | sort -u; }
exports "$preload" >"$work/preload.names"
exports "$clblast" >"$work/clblast.names"
[[ $(wc -l <"$work/preload.names") -eq 18 ]] ||
  fail "the library exports $(wc -l <"$work/preload.names") names, not 18: $(tr '\n' ' ' <"$work/preload.names")"
missing="$(comm -23 "$work/preload.names" "$work/clblast.names")"
[[ -z "$missing" ]] || fail "exported names CLBlast does not define: $missing"
if grep -v -i gemm "$work/preload.names" | grep -q .; then
  fail "exported names other than GEMMs: $(grep -v -i gemm "$work/preload.names" | tr '\n' ' ')"
fi

# run NAME [VARIABLE=VALUE...] [-- CLIENT_ARGUMENT...]: the client with the variables, into
# $work/NAME.{txt,out,err}.
run() {
  local name="$1" rc=0 variables=()
  shift
  while [[ $# -gt 0 && "$1" != -- ]]; do
    variables+=("$1")
    shift
  done
  [[ $# -eq 0 ]] || shift
  env "${variables[@]}" "$client" --dump "$work/$name.txt" "$@" >"$work/$name.out" \
    2>"$work/$name.err" || rc=$?
  if [[ $rc -ne 0 ]]; then
    cat "$work/$name.out" "$work/$name.err"
    fail "the $name run failed ($rc)"
  fi
}
# calls NAME: the calls the NAME run made, and its log lines (one per call).
calls() { sed -n 's/.*: \([0-9]*\) calls on .*/\1/p' "$work/$1.out"; }
logged() {
  local lines
  # Counted where they stand: CLBlast's own messages from another thread may precede one.
  lines="$(grep -o 'gemmtune_clblast: ' "$work/$1.err" | wc -l)"
  [[ -n "$(calls "$1")" && "$lines" -eq "$(calls "$1")" ]] ||
    { cat "$work/$1.err"; fail "$lines log lines for $(calls "$1") calls in the $1 run"; }
}
same() { cmp -s "$work/$1.txt" "$work/$2.txt" || fail "the $2 run's results are not the $1 run's"; }

run plain
! grep -q '^gemmtune_clblast' "$work/plain.err" || fail "the plain run printed the library's lines"
run log LD_PRELOAD="$preloads" GEMMTUNE_CLBLAST=log
"$client" --compare "$work/plain.txt" "$work/log.txt" || fail "the preloaded run differs"
logged log
calls="$(calls log)"
served="$(grep -c ': gemmtune: ' "$work/log.err" || true)"
[[ "$served" -gt 0 && "$served" -lt "$calls" ]] ||
  { cat "$work/log.err"; fail "gemmtune served $served of $calls calls"; }

if [[ $kind == c ]]; then
  s=CLBlastSgemm d=CLBlastDgemm h=CLBlastHgemm
  ss=CLBlastSgemmStridedBatched sb=CLBlastSgemmBatched
else
  s='clblast::Gemm<float>' d='clblast::Gemm<double>' h='clblast::Gemm<half>'
  ss='clblast::GemmStridedBatched<float>' sb='clblast::GemmBatched<float>'
fi
expect() {
  grep -F -q "gemmtune_clblast: $1" "$work/log.err" || { cat "$work/log.err"; fail "no log line '$1'"; }
}
# The problems the test database tunes (exact entries, then model picks of the same families).
expect "$s row NN 37x21x13: gemmtune: xgemm_direct from the user database $database, exact entry"
expect "$s row TT 37x21x13: gemmtune: xgemm_direct from the user database"
expect "$s col NT 37x21x13: gemmtune: xgemm_direct from the user database"
expect "$d row NN 29x31x17: gemmtune: xgemm_direct from the user database"
expect "$s row NN 64x48x32: gemmtune: xgemm_direct from the user database $database, model pick"
expect "$ss row NN 20x12x9 batch 3: gemmtune: "
expect "$sb row NN 19x13x7 batch 3: gemmtune: "
# The rest: CLBlast's, with the reason.
expect "$d row TT 29x31x17: CLBlast: no tuned configuration"
expect "$sb col NT 19x13x7 batch 3: CLBlast: the GEMMs of the batch have different alphas or betas; status 0"
expect "$h row NN 16x16x16: CLBlast: "
expect "$s row NN 0x16x16: CLBlast: libgemmtune cannot take it: kInvalidDimension"
expect "$s row NN 16x16x16: CLBlast: libgemmtune refused it: kInvalidLeadingDimension"
expect "$s row NN 16x16x16: CLBlast: libgemmtune refused it: kBufferTooSmall"
expect "$ss row NN 16x16x16 batch 0: CLBlast: libgemmtune cannot take it: kInvalidDimension"
for status in -1017 -1016 -1009 -2049; do
  grep -q -- "; status $status\$" "$work/log.err" || fail "no call answered with CLBlast's $status"
done

run threads LD_PRELOAD="$preloads" GEMMTUNE_CLBLAST=log -- --threads 4
logged threads
"$client" --compare "$work/plain.txt" "$work/threads.txt" || fail "the run in threads differs"
[[ "$(grep -o ': gemmtune: ' "$work/threads.err" | wc -l)" -eq $((5 * served)) ]] ||
  fail "the threads were not served as the single thread was"
run on LD_PRELOAD="$preloads"
! grep -q '^gemmtune_clblast' "$work/on.err" || fail "GEMMTUNE_CLBLAST unset printed log lines"
same log on
run off LD_PRELOAD="$preloads" GEMMTUNE_CLBLAST=off
! grep -q '^gemmtune_clblast' "$work/off.err" || fail "GEMMTUNE_CLBLAST=off printed log lines"
same plain off
run bad LD_PRELOAD="$preloads" GEMMTUNE_CLBLAST=maybe
[[ "$(grep -c '^gemmtune_clblast' "$work/bad.err")" -eq 1 ]] ||
  { cat "$work/bad.err"; fail "GEMMTUNE_CLBLAST=maybe did not print one line"; }
same plain bad
echo "check_preload: $kind client: $served of $calls calls served by gemmtune, results as CLBlast's"
