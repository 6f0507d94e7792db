#!/usr/bin/env bash
# Tail split (trial templates tv_tail): the served configuration against the same with its last
# (tiles % TAILU) tiles split SPLITK ways along K, added in the kernel. Two rounds, every result
# measured again (--fresh).
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(cd "$(dirname "$0")" && pwd); mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/host.txt; date -u >> $O/host.txt
python3 scripts/bench-cublas.py --shapes 4096x4096x4096,8192x8192x8192,4490x3218x2126,2048x2048x2048,4097x4097x4097,1713x1874x7549 --reps 7 --json -o $O/cublas.json > $O/cublas.log 2>&1
for r in 1 2; do
for i in 0 1 2 3 4 5; do
  timeout 150 $G --templates $C/tv_tail search --kernel xgemm_fast --workload $C/workload-$i.txt --space-from $C/variants-$i.json --strategy exhaustive --max-evals 100000 --no-db --fresh --min-time-ms 40 --out $O/r$r-v$i > $O/r$r-v$i.log 2>&1
  echo "r$r v$i rc=$?"; grep "evaluated" $O/r$r-v$i.log | tail -1 | cut -c1-150
done
done
date -u >> $O/host.txt
cd $O && tar czf ../w.tgz . && cd .. && rm -rf $O
