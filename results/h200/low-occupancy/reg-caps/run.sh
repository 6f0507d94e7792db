#!/usr/bin/env bash
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(cd "$(dirname "$0")" && pwd); mkdir -p $O
python3 scripts/bench-cublas.py --shapes 1000x1000x1000,238x6830x857,4490x3218x2126 --reps 7 --json -o $O/cublas.json > $O/cublas.log 2>&1
for s in 1000x1000x1000 238x6830x857 4490x3218x2126; do
  $G --templates $C/tv3 search --kernel xgemm_fast --space-from $C/lowocc.json --strategy exhaustive --max-evals 100000 --no-db -s $s --out $O/s-$s > $O/s-$s.log 2>&1
  tail -3 $O/s-$s.log
done
