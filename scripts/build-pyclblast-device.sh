#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds pyclblast, CLBlast's Python bindings, as its extension module alone, against a shared
# libclblast.so.1 (so that LD_PRELOAD=libgemmtune_clblast.so intercepts its CLBlastSgemm calls), on
# a machine without the package index: no pip, no scikit-build-core, no CMake; the C++ compiler and
# the Python that will import it. PyPI has no pyclblast wheel for current Pythons (its sdist
# carries cp37 wheels only), and a wheel would not do here anyway unless it linked the shared
# CLBlast.
#
#   scripts/build-pyclblast-device.sh SOURCE OUTPUT [CLBLAST_LIB_DIR]
#
# SOURCE holds pyclblast.cpp (the sdist's pyclblast.pyx through Cython 3; the sdist's own
# pyclblast.cpp, Cython 0.29.17's, does not compile against current Pythons' headers) or, where a
# Cython 3 is importable, only pyclblast.pyx; and include/ with CLBlast's headers (clblast_c.h)
# and the OpenCL headers (include/CL/*.h) where the system has none. CLBLAST_LIB_DIR (default
# SOURCE/lib) holds libclblast.so.1; the module is linked to it by that name, with the folder as
# its run path. OUTPUT gets pyclblast<EXT_SUFFIX> (put it on PYTHONPATH), build.log and
# build-info.txt.
#
# Environment: PYTHON (default python3), the Python that imports the module (its headers, Python.h,
# must be installed: Debian and Ubuntu python3.X-dev); numpy must be importable by it (the module
# uses numpy/halffloat.h and numpy's libnpymath.a); CXX (default g++, else c++); OPT (default -O2).
# When pyopencl is importable too, the module is imported once at the end.
set -euo pipefail
fail() { echo "build-pyclblast-device: $*" >&2; exit 1; }
[[ $# -ge 2 && $# -le 3 ]] || fail "usage: build-pyclblast-device.sh SOURCE OUTPUT [CLBLAST_LIB_DIR]"
source_dir="$(cd "$1" && pwd)" || fail "no folder $1"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
lib_dir="$(cd "${3:-$source_dir/lib}" && pwd)" || fail "no folder ${3:-$source_dir/lib}"
python="${PYTHON:-python3}"
opt="${OPT:--O2}"
log="$out/build.log"
: >"$log"

command -v "$python" >/dev/null || fail "no $python"
[[ -f "$lib_dir/libclblast.so.1" ]] || fail "no libclblast.so.1 in $lib_dir"
[[ -f "$source_dir/include/clblast_c.h" ]] || fail "no include/clblast_c.h in $source_dir"
cxx="${CXX:-}"
if [[ -z "$cxx" ]]; then
  for candidate in g++ c++; do
    if command -v "$candidate" >/dev/null; then cxx="$candidate"; break; fi
  done
fi
[[ -n "$cxx" ]] || fail "no C++ compiler (g++ or c++; or set CXX)"

# What the Python says about itself: version, headers, the module's file suffix, numpy's headers
# and libnpymath.a (numpy 2: numpy/_core/lib; numpy 1: numpy/core/lib, beside the include folder).
info="$("$python" - <<'EOF'
import os, sys, sysconfig
paths = sysconfig.get_paths()
print(sys.version.split()[0])
print(paths["include"])
print(paths.get("platinclude") or paths["include"])
print(sysconfig.get_config_var("EXT_SUFFIX"))
try:
    import numpy
    include = numpy.get_include()
    print(numpy.__version__)
    print(include)
    print(os.path.join(os.path.dirname(include), "lib", "libnpymath.a"))
except ImportError:
    print(""); print(""); print("")
EOF
)" || fail "$python cannot report its configuration"
mapfile -t fields <<<"$info"
py_version="${fields[0]}"
py_include="${fields[1]}"
py_platinclude="${fields[2]}"
ext_suffix="${fields[3]}"
numpy_version="${fields[4]}"
numpy_include="${fields[5]}"
npymath="${fields[6]}"
[[ -f "$py_include/Python.h" ]] ||
  fail "Python $py_version's headers are missing: no $py_include/Python.h" \
    "(Debian/Ubuntu: python${py_version%.*}-dev); the extension cannot be compiled here"
[[ -n "$numpy_version" ]] || fail "$python cannot import numpy"
[[ -f "$numpy_include/numpy/halffloat.h" ]] || fail "numpy $numpy_version has no $numpy_include/numpy/halffloat.h"
[[ -f "$npymath" ]] || fail "numpy $numpy_version has no $npymath (pyclblast's half-precision conversions)"

# The C++ source: the carried one, else Cython's translation of the .pyx.
cpp="$source_dir/pyclblast.cpp"
if [[ ! -f "$cpp" ]]; then
  [[ -f "$source_dir/pyclblast.pyx" ]] || fail "neither pyclblast.cpp nor pyclblast.pyx in $source_dir"
  "$python" -c "import Cython, sys; sys.exit(int(Cython.__version__.split('.')[0]) < 3)" 2>/dev/null ||
    fail "no pyclblast.cpp in $source_dir and no Cython 3 for $python to make it"
  cpp="$out/pyclblast.cpp"
  "$python" -m cython -3 --cplus "$source_dir/pyclblast.pyx" -o "$cpp" >>"$log" 2>&1 ||
    { tail -n 30 "$log" >&2; fail "Cython failed on pyclblast.pyx"; }
fi
generator="$(head -n 1 "$cpp")"

# The carried headers first (CLBlast's, and OpenCL's where carried), then Python's and numpy's.
includes=(-I"$source_dir/include" -I"$py_include")
[[ "$py_platinclude" == "$py_include" ]] || includes+=(-I"$py_platinclude")
includes+=(-I"$numpy_include")
module="$out/pyclblast$ext_suffix"
flags=(-std=gnu++17 "$opt" -fPIC -shared -pthread -fno-strict-aliasing -w -DNDEBUG
  -DCL_TARGET_OPENCL_VERSION=300)
start=$SECONDS
"$cxx" "${flags[@]}" "${includes[@]}" "$cpp" -o "$module.tmp" \
  -L"$lib_dir" -l:libclblast.so.1 "$npymath" -Wl,-rpath,"$lib_dir" >>"$log" 2>&1 ||
  { tail -n 30 "$log" >&2; fail "compiling pyclblast failed (log: $log)"; }
mv "$module.tmp" "$module"
seconds=$((SECONDS - start))
needed="$( (readelf -d "$module" 2>/dev/null || true) | awk '/NEEDED/ {gsub(/[][]/, "", $5); printf "%s ", $5}')"
{
  echo "module: $module"
  echo "python: $python $py_version ($py_include), numpy $numpy_version"
  echo "source: $cpp ($generator)"
  echo "compiler: $("$cxx" --version | head -n 1), flags: ${flags[*]} (${seconds} s)"
  echo "linked: $lib_dir/libclblast.so.1, $npymath; NEEDED: ${needed:-unknown}"
} >"$out/build-info.txt"
[[ "$needed" == *libclblast.so.1* ]] || fail "the module does not name libclblast.so.1 (NEEDED: $needed)"

# Imported once where pyopencl is there (pyclblast imports it), from the output folder first.
if "$python" -c "import pyopencl" >/dev/null 2>&1; then
  PYTHONPATH="$out${PYTHONPATH:+:$PYTHONPATH}" "$python" -c \
    "import pyclblast, sys; assert pyclblast.__file__.startswith(sys.argv[1]), pyclblast.__file__" \
    "$out" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; fail "the built module does not import"; }
  echo "imported: yes" >>"$out/build-info.txt"
else
  echo "imported: no (no pyopencl for $python)" >>"$out/build-info.txt"
fi
cat "$out/build-info.txt"
