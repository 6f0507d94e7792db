#!/usr/bin/env bash
# Memory-bound shapes, step 2, and the one-run page: xgemm_fast searches of the two 16-vector
# shapes (40 s each, into the H100 database, so that split-K xgemm_fast competes there with a
# measurement of its own), then scripts/bench-vs-peers.sh: cuBLAS and bench-suite in one
# invocation for the standard suite, the memory suite and random seeds 1 and 2.
# Usage, from the repository root: results/h100/memory/run-peers.sh OUTPUT_FOLDER
set -u
G=${GEMMTUNE:-build/gemmtune}; W=${1:?usage: run-peers.sh OUTPUT_FOLDER}; mkdir -p "$W"
DB=results/nvidia-h100-80gb-hbm3.json
for s in 16x8192x8192 8192x16x8192; do
  $G search --kernel xgemm_fast -s $s --time-budget 40 --db $DB --out "$W/search-fast-$s" \
    >> "$W/search-fast.log" 2>&1
  echo "search xgemm_fast $s rc=$?" >> "$W/search-steps.txt"
done
cp $DB "$W/db-after.json"
GEMMTUNE=$G scripts/bench-vs-peers.sh "$W/peers" $DB 1 2
