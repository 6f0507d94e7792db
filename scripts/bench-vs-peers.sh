#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One run, one ratio: on a CUDA machine, times cuBLAS (scripts/bench-cublas.py, PyTorch) and runs
# `gemmtune bench-suite` with it as a column, suite after suite, in this one invocation, so that
# every ratio against a peer (CLBlast, cuBLAS) divides figures measured minutes apart on one
# device. Suites: the standard one, the memory-bound one (GB/s against a copy of the same bytes)
# and 24 random shapes (16..8192 per dimension) for each seed given.
# Usage: scripts/bench-vs-peers.sh OUTPUT_FOLDER [DATABASE[,DATABASE...]] [SEED...]
#   GEMMTUNE (default build/gemmtune), PYTHON (default python3), REPS (default 10), SUITES (the
#   named suites, default "standard memory"; "" for the random sets alone) from the
#   environment. Writes per suite: cublas-NAME.json, NAME.md, NAME.json, NAME.log; steps.txt has
#   each step's exit status.
set -u
out=${1:?usage: bench-vs-peers.sh OUTPUT_FOLDER [DATABASE] [SEED...]}
db=${2:-}
shift $(($# < 2 ? $# : 2))
seeds=("$@")
[[ ${#seeds[@]} -eq 0 ]] && seeds=(1 2)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gemmtune=${GEMMTUNE:-$root/build/gemmtune}
python=${PYTHON:-python3}
reps=${REPS:-10}
mkdir -p "$out"
: >"$out/steps.txt"
db_args=()
IFS=, read -r -a dbs <<<"$db"
for d in "${dbs[@]}"; do db_args+=(--db "$d"); done

# suite NAME ARGS...: the suite's shapes (bench-suite --list-shapes), cuBLAS on them, then the
# suite with the cuBLAS column.
suite() {
  local name=$1
  shift
  local shapes
  shapes=$("$gemmtune" bench-suite "$@" --list-shapes 2>>"$out/$name.log")
  "$python" "$root/scripts/bench-cublas.py" --shapes "$shapes" --reps "$reps" --json \
    -o "$out/cublas-$name.json" >>"$out/$name.log" 2>&1
  echo "$name cublas rc=$?" >>"$out/steps.txt"
  local cublas=()
  [[ -s "$out/cublas-$name.json" ]] && cublas=(--cublas "$out/cublas-$name.json")
  "$gemmtune" bench-suite "${db_args[@]}" "$@" "${cublas[@]}" --reps "$reps" --warmup 2 \
    -o "$out/$name.md" --save-json "$out/$name.json" >>"$out/$name.log" 2>&1
  echo "$name bench-suite rc=$?" >>"$out/steps.txt"
}

for named in ${SUITES-standard memory}; do
  suite "$named" --suite "$named"
done
for seed in "${seeds[@]}"; do
  suite "random-seed$seed" --random-shapes 24 --seed "$seed" --min-dim 16 --max-dim 8192
done
cat "$out/steps.txt"
