#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# pyclblast's single-precision GEMM timed plain and with libgemmtune_clblast preloaded: for each
# shapes file, scripts/bench-pyclblast.py once plain and once with LD_PRELOAD=libgemmtune_clblast.so
# and GEMMTUNE_CLBLAST=log (its stderr kept as the log), one after the other, then the ratio
# plain / preloaded per shape, their geometric mean and range, and how many logged calls name
# gemmtune as their server.
#
#   scripts/bench-pyclblast-preload.sh OUTPUT LIB_DIR SHAPES_FILE...
#
# LIB_DIR holds libgemmtune_clblast.so, libgemmtune.so.0 and libclblast.so.1 (the CLBlast that
# pyclblast was built against: scripts/build-pyclblast-device.sh); both runs get it first in
# LD_LIBRARY_PATH. A shapes file holds MxNxK,... (commas or white space). PYTHONPATH must give
# PYTHON (default python3) numpy, pyopencl and the pyclblast module. Environment: RUNS (default
# 10), WARMUP (default 2), DEVICE (P:D, default the first GPU), GEMMTUNE_* as the library reads
# them; OPENCL_LOADER=pyopencl makes pyopencl's bundled ICD loader (a manylinux wheel's) the
# libOpenCL.so.1 of CLBlast and libgemmtune too, as is done anyway where the system has none.
# OUTPUT gets, per shapes file NAME.txt: NAME-plain.{json,txt,err}, NAME-preloaded.{json,txt,log},
# NAME-ratio.{json,txt}; and env.txt (what ran where), steps.txt (seconds per step), summary.txt.
# Exit status: 0, or 1 where a step failed (the other steps still run).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "bench-pyclblast-preload: $*" >&2; exit 2; }
[[ $# -ge 3 ]] || fail "usage: bench-pyclblast-preload.sh OUTPUT LIB_DIR SHAPES_FILE..."
mkdir -p "$1" || fail "cannot make $1"
out="$(cd "$1" && pwd)"
libs="$(cd "$2" && pwd)" || fail "no folder $2"
shift 2
python="${PYTHON:-python3}"
runs="${RUNS:-10}"
warmup="${WARMUP:-2}"
for f in libgemmtune_clblast.so libgemmtune.so.0 libclblast.so.1; do
  [[ -f "$libs/$f" ]] || fail "no $f in $libs"
done
for f in "$@"; do [[ -f "$f" ]] || fail "no shapes file $f"; done
"$python" -c "import numpy, pyopencl, pyclblast" 2>"$out/import.err" ||
  { cat "$out/import.err" >&2; fail "$python cannot import numpy, pyopencl and pyclblast (PYTHONPATH)"; }
rm -f "$out/import.err"

# libOpenCL.so.1 for CLBlast and libgemmtune: the system's, else pyopencl's bundled loader under
# that name (the OpenCL objects pyopencl makes are the driver's, which any ICD loader dispatches).
library_path="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
loader="system"
if [[ "${OPENCL_LOADER:-auto}" == pyopencl ]] ||
   LD_LIBRARY_PATH="$library_path" ldd "$libs/libgemmtune.so.0" |
     grep -q 'libOpenCL.so.1 => not found'; then
  bundled="$("$python" -c "import glob, os, pyopencl
found = glob.glob(os.path.join(os.path.dirname(pyopencl.__file__), '.libs', 'libOpenCL*'))
print(sorted(found)[0] if found else '')")"
  [[ -n "$bundled" ]] || fail "no libOpenCL.so.1 on this system and none bundled with pyopencl"
  shim="$(mktemp -d)"
  trap 'rm -rf "$shim"' EXIT
  ln -s "$bundled" "$shim/libOpenCL.so.1"
  library_path="$libs:$shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  loader="pyopencl's $bundled"
fi
export LD_LIBRARY_PATH="$library_path"

module="$("$python" -c "import pyclblast; print(pyclblast.__file__)")"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  if command -v nvidia-smi >/dev/null; then
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)"
  fi
  echo "commit: $(git -C "$here/.." rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "python: $("$python" -c "import sys, numpy, pyopencl
print(sys.executable, sys.version.split()[0], 'numpy', numpy.__version__, 'pyopencl',
      pyopencl.VERSION_TEXT, pyopencl.__file__)")"
  echo "pyclblast: $module"
  echo "its libraries: $(ldd "$module" | awk '/clblast|OpenCL/ {printf "%s => %s; ", $1, $3}')"
  echo "libOpenCL.so.1 for CLBlast and libgemmtune: $loader"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  env | grep '^GEMMTUNE_' | sort
  (cd "$libs" && sha256sum libgemmtune_clblast.so libgemmtune.so.0 libclblast.so.1)
  echo "runs: $runs after $warmup untimed; shapes files: $*"
} >"$out/env.txt"
cat "$out/env.txt"

status=0
: >"$out/steps.txt"
: >"$out/summary.txt"
# step NAME COMMAND...: runs it, its seconds into steps.txt; a failure is remembered.
step() {
  local name="$1" start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  echo "$name: $((SECONDS - start)) s, exit $rc" | tee -a "$out/steps.txt"
  [[ $rc -eq 0 ]] || status=1
}
bench=("$python" "$here/bench-pyclblast.py" --runs "$runs" --warmup "$warmup"
  ${DEVICE:+--device "$DEVICE"})
for file in "$@"; do
  name="$(basename "$file" .txt)"
  cp "$file" "$out/$name.txt" 2>/dev/null || true
  step "$name plain" env -u LD_PRELOAD "${bench[@]}" --shapes "$file" --label plain \
    --json "$out/$name-plain.json" --text "$out/$name-plain.txt" 2>"$out/$name-plain.err"
  step "$name preloaded" env LD_PRELOAD="$libs/libgemmtune_clblast.so" GEMMTUNE_CLBLAST=log \
    "${bench[@]}" --shapes "$file" --label preloaded --json "$out/$name-preloaded.json" \
    --text "$out/$name-preloaded.txt" 2>"$out/$name-preloaded.log"
  step "$name ratio" "$python" "$here/bench-pyclblast.py" \
    --compare "$out/$name-plain.json" "$out/$name-preloaded.json" \
    --log "$out/$name-preloaded.log" --json "$out/$name-ratio.json" --text "$out/$name-ratio.txt"
  { echo "== $name ($file)"; cat "$out/$name-ratio.txt" 2>/dev/null; } >>"$out/summary.txt"
done
exit "$status"
