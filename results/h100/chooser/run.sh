#!/usr/bin/env bash
# One chooser: bench-suite's gemmtune (direct) column and its library column (libgemmtune's
# gemmtune::Gemm with the same database) must run the same configuration on every row.
# The standard FP32 suite and the random shapes of seeds 1 and 2 (24 shapes, 16..8192), with the
# checked-in H100 database; then results/h100/chooser/same_choice.py compares the two columns.
# No cuBLAS here: this run checks choices, not ratios against a peer.
# Usage, from the repository root: results/h100/chooser/run.sh OUTPUT_FOLDER
set -u
G=build/gemmtune; W=${1:?usage: run.sh OUTPUT_FOLDER}; mkdir -p "$W"
DB=results/nvidia-h100-80gb-hbm3.json
$G bench-suite --db $DB --precision 32 --reps 10 --warmup 2 \
  -o $W/suite-fp32.md --save-json $W/suite-fp32.json > $W/suite-fp32.log 2>&1
echo "suite rc=$?" >> $W/steps.txt
for seed in 1 2; do
  $G bench-suite --db $DB --random-shapes 24 --seed $seed --min-dim 16 --max-dim 8192 --reps 10 \
    --warmup 2 -o $W/random-seed$seed.md --save-json $W/random-seed$seed.json \
    > $W/random-seed$seed.log 2>&1
  echo "random seed $seed rc=$?" >> $W/steps.txt
done
python3 results/h100/chooser/same_choice.py $W/suite-fp32.json $W/random-seed1.json \
  $W/random-seed2.json > $W/same_choice.txt 2>&1
echo "same choice rc=$?" >> $W/steps.txt
