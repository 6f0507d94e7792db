#!/usr/bin/env bash
# 2026-11-25 (H100), last run of the day, with the kernels and the verification of today:
#  1. a search at 4097^3 (the large space, which includes ALDCOPY) into the H100 database;
#  2. search throughput at 2048^3 from empty caches (gemmtune's binary cache and the driver's,
#     both fresh folders) with a pool of 16 compile processes;
#  3. the standard FP32 suite with the library column;
#  4. the random shapes of seeds 1 and 2.
# Usage, from the repository root: results/h100/final/run.sh OUTPUT_FOLDER
set -u
G=build/gemmtune; W=${1:?usage: run.sh OUTPUT_FOLDER}; mkdir -p "$W"
DB=results/nvidia-h100-80gb-hbm3.json; C=results/h100/coverage
cp $DB $W/database-before.json
$G search --kernel xgemm_fast -s 4097x4097x4097 --space large --strategy bayes --seed 1 \
  --time-budget 120 -d H100 --compile-processes 16 --db $DB --out $W/search-4097 \
  > $W/search-4097.log 2>&1
echo "search 4097 rc=$?" >> $W/steps.txt
EMPTY=$(mktemp -d); DRIVER=$(mktemp -d)
CUDA_CACHE_PATH=$DRIVER $G search --kernel xgemm_fast --strategy random -s 2048x2048x2048 \
  --time-budget 60 --seed 1 -d H100 --compile-processes 16 --cache-dir $EMPTY --no-db --fresh \
  --out $W/throughput -v > $W/throughput.log 2>&1
echo "throughput rc=$?" >> $W/steps.txt
$G bench-suite --db $DB --precision 32 --reps 20 --warmup 3 --cublas results/h100/cublas.json \
  -o $W/suite-fp32.md --save-json $W/suite-fp32.json > $W/suite-fp32.log 2>&1
echo "suite rc=$?" >> $W/steps.txt
for seed in 1 2; do
  $G bench-suite --db $DB --random-shapes 24 --seed $seed --min-dim 16 --max-dim 8192 \
    --cublas $C/cublas-seed$seed.json -o $W/random-seed$seed.md \
    --save-json $W/random-seed$seed.json > $W/random-seed$seed.log 2>&1
  echo "random seed $seed rc=$?" >> $W/steps.txt
done
cp $DB $W/database-after.json
