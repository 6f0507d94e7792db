#!/usr/bin/env bash
# (1) One operand copied, the other half-wide, at 4490x3218x2126's served configuration, by shapes
#     that isolate each part; (2) every split of K at six standard-suite entries.
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(dirname "$0"); mkdir -p $O
served="ALDCOPY=1,ASYNC=0,BKM=0,DOT2=0,GLH=0,GLV=4,GROUPM=1,KREDUCE=0,KSL=1,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=8,NWG=64,PADA=0,PADB=0,PREFETCH=1,REGCAP=128,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8,WSP=0"
nocopy=${served/ALDCOPY=1/ALDCOPY=0}
half=${nocopy/GLH=0/GLH=1}
runs=(
 "served-both|$served|-m 4490 -n 3218 -k 2126"
 "copyA|$served|-m 4490 -n 3220 -k 2126"
 "halfA|$half|-m 4490 -n 3220 -k 2126"
 "elemA|$nocopy|-m 4490 -n 3220 -k 2126"
 "aligned|$nocopy|-m 4490 -n 3220 -k 2128"
 "copyB|$served|-m 4490 -n 3218 -k 2128"
 "halfA-elemB|$half|-m 4490 -n 3218 -k 2126"
)
printf '%-12s %-26s %-7s %10s %10s %s\n' name problem status GFLOPS us launches | tee $O/summary.txt
for round in 1 2 3; do
for e in "${runs[@]}"; do
  IFS='|' read -r name p prob <<<"$e"
  f=$O/$name-r$round.json
  timeout 120 $G run --kernel xgemm_fast --params "$p" $prob --min-time-ms 300 --json --cache-dir $O/cache >$f 2>$O/$name-r$round.err
  python3 - "$f" "$name" "$prob" <<'PY' | tee -a $O/summary.txt
import json,sys
try:
  r=json.load(open(sys.argv[1]))
  ms=r['time']['median_ms']
  print(f"{sys.argv[2]:12s} {sys.argv[3]:26s} {r.get('status','?'):7s} {r.get('gflops',0):10.1f} {ms*1e3 if ms else 0:10.1f} {r.get('launches','-')}")
except Exception as e:
  print(sys.argv[2], 'unreadable', e)
PY
done; done
# (2) splits at the standard entries
for i in 0 1 2 3 4 5; do
  timeout 200 $G search --kernel xgemm_fast --workload $C/var/workload-$i.txt --space-from $C/var/variants-$i.json \
    --strategy exhaustive --max-evals 100000 --no-db --out $O/sk-$i > $O/sk-$i.log 2>&1
  tail -3 $O/sk-$i.log
done
