#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds gemmtune (Release by default) into build/ (or $GEMMTUNE_BUILD_DIR).
# Extra arguments go to cmake's configure step, e.g. -DGEMMTUNE_SANITIZE=ON.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${GEMMTUNE_BUILD_DIR:-$root/build}"
jobs="${GEMMTUNE_JOBS:-$(nproc)}"
# Ninja (installed with the dependencies) for a new build folder: it compiles a target's files
# while the libraries below it are still building, which Makefiles do not.
generator=()
if [[ ! -f "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="${GEMMTUNE_BUILD_TYPE:-Release}" "$@"
cmake --build "$build_dir" -j "$jobs"
