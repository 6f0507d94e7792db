#!/usr/bin/env bash
# 2026-11-25 (H100), after the library's per-call work was cut (a cached call found without
# formatting a key, a repeated placement only sets the buffer arguments again): the standard FP32
# suite with the library column twice, 20 timed calls per side; random shapes of seed 2; then
# CLBlast's Xgemm with gemmtune's tuned parameters against its stock ones, interleaved in one
# process, at 2048^3 and 4096^3. Usage, from the repository root:
# results/h100/library/run.sh OUTPUT_FOLDER
set -u
G=build/gemmtune; W=${1:?usage: run.sh OUTPUT_FOLDER}; mkdir -p "$W"
DB=results/nvidia-h100-80gb-hbm3.json; T=results/h100/clblast_tuned; C=results/h100/coverage
for i in 1 2; do
  $G bench-suite --db $DB --precision 32 --reps 20 --warmup 3 --cublas results/h100/cublas.json \
    -o $W/suite-fp32-$i.md --save-json $W/suite-fp32-$i.json > $W/suite-fp32-$i.log 2>&1
  echo "suite $i rc=$?" >> $W/steps.txt
done
$G bench-suite --db $DB --random-shapes 24 --seed 2 --min-dim 16 --max-dim 8192 \
  --cublas $C/cublas-seed2.json -o $W/random-seed2.md --save-json $W/random-seed2.json \
  > $W/random-seed2.log 2>&1
echo "random seed 2 rc=$?" >> $W/steps.txt
for n in 2048 4096; do
  $G bench-suite --db $DB --shapes ${n}x${n}x${n} --reps 20 --warmup 3 \
    --clblast-params $T/clblast_export_$n.json -o $W/clblast-tuned-$n.md \
    --save-json $W/clblast-tuned-$n.json > $W/clblast-tuned-$n.log 2>&1
  echo "clblast tuned $n rc=$?" >> $W/steps.txt
done
