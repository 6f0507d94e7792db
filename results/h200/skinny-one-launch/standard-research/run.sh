#!/usr/bin/env bash
# Three weak standard-suite rows searched again (default strategy, gpu space, 45 s each), then
# the stored entries (A) against the searches' bests (B) in alternating rounds.
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(dirname "$0"); mkdir -p $O
$G search --kernel xgemm_fast --space gpu -s 8192x64x8192,64x4096x4096,2048x2048x2048 --time-budget 45 \
  --db $O/new.json --out $O/s > $O/s.log 2>&1
tail -6 $O/s.log
$G db show $O/new.json
python3 - "$C/A.json" "$O/new.json" "$O/B.json" <<'PY'
import json,sys
a=json.load(open(sys.argv[1])); n=json.load(open(sys.argv[2]))
keys=lambda e:(e['key']['m'],e['key']['n'],e['key']['k'])
new={keys(e):e for e in n['entries']}
b=dict(n); b.pop('measurements',None)
b['entries']=[new[keys(e)] for e in a['entries'] if keys(e) in new]
json.dump(b,open(sys.argv[3],'w'),indent=1)
print(len(b['entries']), 'of', len(a['entries']))
PY
python3 scripts/ab-bench.py $O/ab $C/A.json $O/B.json --rounds 2 --min-time-ms 100 > $O/ab.log 2>&1
cat $O/ab/summary.md
