#!/usr/bin/env bash
# Run 2 of 2026-11-25 (H100): skinny coverage with xgemm_skinny, the coverage
# database (today's H100 database + the grid + skinny entries), and the random-shape reports for
# seeds 1 and 2 against CLBlast and cuBLAS. Usage, from the repository root:
# results/h100/coverage/run2.sh OUTPUT_FOLDER
set -u
G=build/gemmtune; W=${1:?usage: run2.sh OUTPUT_FOLDER}; mkdir -p "$W"
C=results/h100/coverage
$G search --kernel xgemm_skinny --workload $C/skinny.txt --time-budget 100 --strategy bayes \
  --seed 7 --db $W/skinny.json --out $W/skinny > $W/skinny.log 2>&1
echo "skinny rc=$?" >> $W/steps.txt
cp results/nvidia-h100-80gb-hbm3.json $W/coverage.json
$G db merge $W/coverage.json $C/grid.json $W/skinny.json >> $W/steps.txt 2>&1
echo "merge rc=$?" >> $W/steps.txt
for seed in 1 2; do
  shapes=$($G bench-suite --random-shapes 24 --seed $seed --min-dim 16 --max-dim 8192 --list-shapes)
  echo "seed $seed: $shapes" >> $W/steps.txt
  python3 scripts/bench-cublas.py --shapes "$shapes" --json -o $W/cublas-seed$seed.json \
    > $W/cublas-seed$seed.log 2>&1
  for db in coverage; do
    $G bench-suite --db $W/$db.json --random-shapes 24 --seed $seed --min-dim 16 --max-dim 8192 \
      --cublas $W/cublas-seed$seed.json -o $W/random-seed$seed-$db.md \
      --save-json $W/random-seed$seed-$db.json > $W/random-seed$seed-$db.log 2>&1
    echo "random seed $seed $db rc=$?" >> $W/steps.txt
  done
done
