#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pyclblast, CLBlast's Python bindings, built from its source distribution on the package index
# against the installed CLBlast, in a venv of the build folder that sees the system's site
# packages (Debian's numpy and pyopencl), then its own test suite (test/test_pyclblast.py of the
# sdist) run with libgemmtune_clblast preloaded: the suite passes, and the log shows every one of
# its single-precision GEMMs served by gemmtune and its complex ones left to CLBlast. pyclblast's
# extension module is loaded RTLD_LOCAL, and CLBlast with it, so CLBlast is in no global search
# order: the calls the library passes on reach it through the CLBlast already loaded.
# The package index must be reachable: a download that fails fails the test. The venv and the
# build are kept (WORK_DIR) and made again only for another version or Python.
# Usage: check_pyclblast.sh PRELOAD_LIBRARY DATABASE WORK_DIR [PYTHON]
set -euo pipefail
readonly kVersion=1.4.0
preload="$1"
database="$2"
work="$3"
python="${4:-python3}"
fail() { echo "check_pyclblast: $*" >&2; exit 1; }
# show FILE: the end of a log, where a failing step says why.
show() { tail -n 30 "$1" >&2; }

# The Python whose site packages hold numpy and pyopencl (Debian's belong to /usr/bin/python3,
# which may not be the first python3 on PATH).
chosen=""
for candidate in "$python" /usr/bin/python3; do
  if "$candidate" -c "import numpy, pyopencl" >/dev/null 2>&1; then
    chosen="$(command -v "$candidate")"
    break
  fi
done
[[ -n "$chosen" ]] || fail "no python3 with numpy and pyopencl (Debian: python3-numpy, python3-pyopencl)"
cython="$(command -v cython3 || true)"
[[ -n "$cython" ]] || fail "no cython3 (Debian: cython3)"

venv="$work/venv"
sdist="$work/sdist"
stamp="$venv/pyclblast-$kVersion.built"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$chosen" ]]; then
  rm -rf "$work"
  mkdir -p "$work"
  "$chosen" -m venv --system-site-packages "$venv" >"$work/venv.log" 2>&1 ||
    { show "$work/venv.log"; fail "cannot make a venv with $chosen (Debian: python3-venv)"; }
  pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)
  # The build backend pyclblast's pyproject.toml names; the rest of its build requirements
  # (Cython, numpy) are Debian's.
  "${pip[@]}" install scikit-build-core >"$work/pip.log" 2>&1 ||
    { show "$work/pip.log"; fail "cannot install scikit-build-core from the package index"; }
  "${pip[@]}" download --no-deps --no-binary pyclblast --no-build-isolation -d "$sdist" \
    "pyclblast==$kVersion" >>"$work/pip.log" 2>&1 ||
    { show "$work/pip.log"; fail "cannot download pyclblast $kVersion's source distribution"; }
  tar -xzf "$sdist/pyclblast-$kVersion.tar.gz" -C "$sdist"
  # Cython regenerates the module's source (the sdist's does not compile against Python 3.11's
  # headers); unoptimized, since the test exercises its calls, not its speed (its compile took 41 s
  # at -O3 and 7 s at -O0).
  "${pip[@]}" install --no-deps --no-build-isolation --config-settings=cmake.define.CYTHON="$cython" \
    --config-settings=cmake.build-type=Debug "$sdist/pyclblast-$kVersion.tar.gz" \
    >"$work/build.log" 2>&1 ||
    { show "$work/build.log"; fail "building pyclblast $kVersion against the installed CLBlast failed"; }
  echo "$chosen" >"$stamp"
fi

# In a build with -DGEMMTUNE_SANITIZE=ON the library needs AddressSanitizer's runtime, which must
# come first of all libraries: preloaded before it, and its leak check left out (Python's own
# allocations at exit are not the library's).
asan="$(ldd "$preload" | awk '/libasan/ {print $3}')"
preloads="${asan:+$asan }$preload"
[[ -z "$asan" ]] || export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

run="$work/run"
rm -rf "$run"
mkdir -p "$run/no-system-databases"
cp "$sdist/pyclblast-$kVersion/test/test_pyclblast.py" "$run/"
# suite NAME MODE TESTS: pyclblast's TESTS preloaded with GEMMTUNE_CLBLAST=MODE, into
# $run/NAME.{out,err}.
suite() {
  local rc=0
  (cd "$run" && env LD_PRELOAD="$preloads" GEMMTUNE_CLBLAST="$2" GEMMTUNE_DB="$database" \
    GEMMTUNE_SYSTEM_DATABASES="$run/no-system-databases" PYOPENCL_CTX="${PYOPENCL_CTX:-0}" \
    "$venv/bin/python" -m unittest -v "$3") >"$run/$1.out" 2>"$run/$1.err" || rc=$?
  if [[ $rc -ne 0 ]] || ! grep -q '^OK$' "$run/$1.err"; then
    show "$run/$1.err"
    fail "pyclblast's $3 failed preloaded with GEMMTUNE_CLBLAST=$2 ($rc)"
  fi
}
suite log log test_pyclblast
# Not anchored: unittest's "test_gemm ... " may begin the line a log line ends.
sgemm="$(grep -c 'gemmtune_clblast: CLBlastSgemm ' "$run/log.err" || true)"
served="$(grep -c 'gemmtune_clblast: CLBlastSgemm .*: gemmtune: ' "$run/log.err" || true)"
if [[ "$sgemm" -eq 0 || "$served" -ne "$sgemm" ]]; then
  grep 'gemmtune_clblast: ' "$run/log.err" | head -n 20 >&2 || true
  fail "gemmtune served $served of pyclblast's $sgemm single-precision GEMMs"
fi
! grep -q 'gemmtune_clblast: CLBlastCgemm' "$run/log.err" || fail "the complex GEMMs were intercepted"
# Every GEMM passed on: CLBlast reached through the CLBlast pyclblast loaded, since the global
# search order has none (the test fails there, where only RTLD_NEXT is asked).
suite off off test_pyclblast.TestPyCLBlast.test_gemm
! grep -q 'gemmtune_clblast' "$run/off.err" || fail "GEMMTUNE_CLBLAST=off printed log lines"
echo "check_pyclblast: pyclblast $kVersion's test suite passed preloaded; gemmtune served its $served single-precision GEMMs, and CLBlast all of them with GEMMTUNE_CLBLAST=off"
