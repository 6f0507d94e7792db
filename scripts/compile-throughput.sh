#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures how kernel compilation scales on a GPU's OpenCL driver: one process with 1, 4 and 16
# compile threads against 4, 8 and 16 processes, each building its own strided shard of the
# xgemm_fast gpu space into an empty gemmtune binary cache. The driver's own binary cache is
# disabled (CUDA_CACHE_DISABLE=1) so that every build is a real one.
# Usage: scripts/compile-throughput.sh [gemmtune binary] [device selector] > log
set -uo pipefail
G="${1:-build/gemmtune}"
D="${2:-0}"
export CUDA_CACHE_DISABLE=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ms() { echo $(($(date +%s%N) / 1000000)); }
compile() { "$G" compile -d "$D" --kernel xgemm_fast --space gpu "$@"; }
one_process() {  # threads shard
  local s; s=$(ms)
  compile --shard "$2" --compile-threads "$1" --cache-dir "$work/t$1" | grep built
  echo "1 process x $1 threads, shard $2: $(($(ms) - s)) ms"
}
processes() {  # processes threads first-shard shards
  local s i; s=$(ms)
  for ((i = 0; i < $1; i++)); do
    compile --shard "$(($3 + i))/$4" --compile-threads "$2" --cache-dir "$work/p$1" \
      >"$work/p$1_$i.log" 2>&1 &
  done
  wait
  cat "$work"/p"$1"_*.log | grep built
  echo "$1 processes x $2 threads, shards $3..$(($3 + $1 - 1))/$4: $(($(ms) - s)) ms"
}
one_process 1 5/4212
one_process 4 9/2106
one_process 16 7/2106
processes 4 4 20 8424
processes 8 2 40 16848
processes 16 1 32 33696
