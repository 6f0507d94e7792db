#!/usr/bin/env bash
# The memory suite alone, as bench-vs-peers.sh runs each suite.
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; mkdir -p $O
shapes=$($G bench-suite --suite memory --list-shapes 2>>$O/memory.log)
python3 scripts/bench-cublas.py --shapes "$shapes" --reps 7 --json -o $O/cublas-memory.json >>$O/memory.log 2>&1
$G bench-suite --db results/databases/nvidia-h200.json --suite memory --cublas $O/cublas-memory.json --reps 7 --warmup 2 \
  -o $O/memory.md --save-json $O/memory.json >>$O/memory.log 2>&1
echo "rc=$?"
