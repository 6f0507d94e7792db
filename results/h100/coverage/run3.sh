#!/usr/bin/env bash
# Run 3 of 2026-11-25 (H100): random shapes (seeds 1 and 2) with the coverage
# database now checked in, seed 1 also with the database of before, and the standard FP32 suite
# with the library column. cuBLAS figures come from run 2 (same shapes). Usage, from the
# repository root: results/h100/coverage/run3.sh OUTPUT_FOLDER
set -u
G=build/gemmtune; W=${1:?usage: run3.sh OUTPUT_FOLDER}; mkdir -p "$W"; C=results/h100/coverage
DB=results/nvidia-h100-80gb-hbm3.json
for seed in 1 2; do
  $G bench-suite --db $DB --random-shapes 24 --seed $seed --min-dim 16 --max-dim 8192 \
    --cublas $C/cublas-seed$seed.json -o $W/random-seed$seed.md --save-json $W/random-seed$seed.json \
    > $W/random-seed$seed.log 2>&1
  echo "random seed $seed rc=$?" >> $W/steps.txt
done
$G bench-suite --db $C/database-before.json --random-shapes 24 --seed 1 --min-dim 16 --max-dim 8192 \
  --cublas $C/cublas-seed1.json -o $W/random-seed1-before.md > $W/random-seed1-before.log 2>&1
echo "random seed 1 before rc=$?" >> $W/steps.txt
$G bench-suite --db $DB --precision 32 --cublas results/h100/cublas.json -o $W/suite-fp32.md \
  --save-json $W/suite-fp32.json > $W/suite-fp32.log 2>&1
echo "suite rc=$?" >> $W/steps.txt
