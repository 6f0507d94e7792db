#!/usr/bin/env bash
# Variants around two served configurations (skinny at 1x4096x4096; GROUPM at 4490x3218x2126),
# then the five suites with the tool as committed.
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(dirname "$0"); mkdir -p $O
for v in sk gm; do
  timeout 240 $G search --kernel $([ $v = sk ] && echo xgemm_skinny || echo xgemm_fast) \
    --workload $C/$v/workload-0.txt --space-from $C/$v/variants-0.json \
    --strategy exhaustive --max-evals 100000 --no-db --out $O/$v > $O/$v.log 2>&1
  tail -4 $O/$v.log
done
REPS=7 scripts/bench-vs-peers.sh $O/suites results/databases/nvidia-h200.json 1 2 3 > $O/suites.log 2>&1
python3 scripts/vs-peers-summary.py $O/suites > $O/suites-summary.md 2>&1
cat $O/suites-summary.md
