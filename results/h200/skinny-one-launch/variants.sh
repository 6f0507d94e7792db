#!/usr/bin/env bash
# The memory suite's skinny entries with their parts added in the main kernel (KREDUCE 1) and by
# the reduce kernel (0); at 1x4096x4096 also the one-launch form's neighbours.
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(dirname "$0"); mkdir -p $O
for i in 0 1 2 3 4 5; do
  $G search --kernel xgemm_skinny --workload $C/kr/workload-$i.txt --space-from $C/kr/variants-$i.json \
    --strategy exhaustive --max-evals 1000 --no-db --out $O/kr-$i > $O/kr-$i.log 2>&1
done
$G search --kernel xgemm_skinny --workload $C/kr2/workload-0.txt --space-from $C/kr2/variants-0.json \
  --strategy exhaustive --max-evals 1000 --no-db --out $O/kr2 > $O/kr2.log 2>&1
for f in $O/kr-*/*.journal.jsonl $O/kr2/*.journal.jsonl; do
  python3 - "$f" <<'PY'
import json,sys
rows=[]
for line in open(sys.argv[1]):
  j=json.loads(line); r=j.get('result') or {}
  if r.get('config'): rows.append((r.get('status'), round(r['time']['median_ms']*1e3,2) if r.get('time') else None, r['config'].get('KREDUCE'), {k:r['config'][k] for k in ('SPLITK','WGK','KU','NWI','VW','WGJ')}, r.get('launches')))
print(sys.argv[1].split('/')[-2], sorted(rows, key=lambda x: x[1] or 1e9)[:4])
PY
done
