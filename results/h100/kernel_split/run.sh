#!/usr/bin/env bash
# The FP32 suite (gemmtune column) with the binary and templates of commit f1f3ce3 (before the
# single call path and the split of xgemm_fast.cl) against the current ones, twice each,
# alternating, on the database of that commit. Usage, from the repository root, with the old
# commit built into OLD_BUILD (its gemmtune binary) and checked out in OLD_TREE:
#   git show f1f3ce3:results/nvidia-h100-80gb-hbm3.json > db-f1f3ce3.json
#   results/h100/kernel_split/run.sh OLD_TREE OLD_BUILD db-f1f3ce3.json OUTPUT_FOLDER
set -u
OLD_TREE=${1:?usage}; OLD_BUILD=${2:?usage}; DB=${3:?usage}; W=${4:?usage}; mkdir -p "$W"
for i in 1 2; do
  GEMMTUNE_DATA_DIR=$OLD_TREE $OLD_BUILD/gemmtune bench-suite --db $DB --reps 20 --warmup 3 \
    --no-clblast --json > $W/old-$i.json
  GEMMTUNE_DATA_DIR=$PWD build/gemmtune bench-suite --db $DB --reps 20 --warmup 3 --no-clblast \
    --json > $W/new-$i.json
done
