#!/usr/bin/env bash
# The padding helper (aligned copies) with 1 (old), 4 and 8 rows a work-item, at the served
# configuration of 4490x3218x2126 (both operands copied) and neighbours; xgemm (padded) at 1000^3.
set -u
O=$1; C=$(dirname "$0"); mkdir -p $O
for b in old r4 r8; do xz -dc $C/gemmtune-$b.xz > gemmtune-$b; chmod +x gemmtune-$b; done
served="ALDCOPY=1,ASYNC=0,BKM=0,DOT2=0,GLH=0,GLV=4,GROUPM=1,KREDUCE=0,KSL=1,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=8,NWG=64,PADA=0,PADB=0,PREFETCH=1,REGCAP=128,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8,WSP=0"
nocopy=${served/ALDCOPY=1/ALDCOPY=0}
runs=(
 "both|xgemm_fast|$served|-m 4490 -n 3218 -k 2126|queued"
 "both-wall|xgemm_fast|$served|-m 4490 -n 3218 -k 2126|whole-call"
 "copyB|xgemm_fast|$served|-m 4490 -n 3218 -k 2128|queued"
 "aligned|xgemm_fast|$nocopy|-m 4490 -n 3220 -k 2128|queued"
 "both-1713|xgemm_fast|$served|-m 1713 -n 1874 -k 7549|queued"
 "xgemm-1000|xgemm||-m 1000 -n 1000 -k 1000|queued"
 "xgemm-333|xgemm||-m 333 -n 333 -k 333|queued"
)
printf '%-10s %-5s %-26s %-7s %10s %10s %s\n' name bin problem status GFLOPS us launches | tee $O/summary.txt
for round in 1 2 3; do
for e in "${runs[@]}"; do
 for b in old r4 r8; do
  IFS='|' read -r name k p prob clock <<<"$e"
  f=$O/$name-$b-r$round.json
  pa=(); [ -n "$p" ] && pa=(--params "$p")
  timeout 120 gemmtune-$b run --kernel $k "${pa[@]}" $prob --clock $clock --min-time-ms 300 --json --cache-dir $O/cache-$b >$f 2>$O/$name-$b-r$round.err
  python3 - "$f" "$name" "$b" "$prob" <<'PY' | tee -a $O/summary.txt
import json,sys
try:
  r=json.load(open(sys.argv[1])); ms=r['time']['median_ms']
  print(f"{sys.argv[2]:10s} {sys.argv[3]:5s} {sys.argv[4]:26s} {r.get('status','?'):7s} {r.get('gflops',0):10.1f} {ms*1e3:10.1f} {r.get('launches','-')}")
except Exception as e:
  print(sys.argv[2], sys.argv[3], 'unreadable', e)
PY
 done
done; done
