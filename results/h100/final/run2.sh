#!/usr/bin/env bash
# 2026-11-25 (H100), after run.sh: a search at 8192^3 now starts from the database's entries of
# the nearest shapes (the exact one, 4096^3, ...), then the Bayesian search of the large space;
# then 4096^3 and 8192^3 of the suite again. Usage, from the repository root:
# results/h100/final/run2.sh OUTPUT_FOLDER
set -u
G=build/gemmtune; W=${1:?usage: run2.sh OUTPUT_FOLDER}; mkdir -p "$W"
DB=results/nvidia-h100-80gb-hbm3.json
cp $DB $W/database-before.json
$G search --kernel xgemm_fast -s 8192x8192x8192 --space large --strategy bayes --seed 1 \
  --time-budget 90 -d H100 --compile-processes 16 --db $DB --out $W/search-8192 \
  > $W/search-8192.log 2>&1
echo "search 8192 rc=$?" >> $W/steps.txt
$G bench-suite --db $DB --shapes 4096x4096x4096,8192x8192x8192 --reps 20 --warmup 3 \
  --cublas results/h100/cublas.json -o $W/suite-large.md --save-json $W/suite-large.json \
  > $W/suite-large.log 2>&1
echo "suite rc=$?" >> $W/steps.txt
cp $DB $W/database-after.json
