#!/usr/bin/env bash
# Multistage copies (ASYNC) against register staging, by copy width (GLV) and B tile layout (BKM).
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(cd "$(dirname "$0")" && pwd); mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/host.txt; date -u >> $O/host.txt
python3 scripts/bench-cublas.py --shapes 4096x4096x4096,1000x1000x1000,929x895x187 --reps 7 --json -o $O/cublas.json > $O/cublas.log 2>&1
for i in 3 1 0 2; do
  timeout 200 $G search --kernel xgemm_fast --workload $C/workload-$i.txt --space-from $C/variants-$i.json --strategy exhaustive --max-evals 100000 --no-db --out $O/v-$i > $O/v-$i.log 2>&1
  echo "v-$i rc=$?"; tail -2 $O/v-$i.log
done
date -u >> $O/host.txt
