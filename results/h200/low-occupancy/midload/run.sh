#!/usr/bin/env bash
# The next tile's global loads in the middle of the tile's FMAs (tv5, MIDLOAD=1) against at its top (tv0)
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(cd "$(dirname "$0")" && pwd); mkdir -p $O
cub="ALDCOPY=0,ASYNC=0,DOT2=0,GLH=0,GLV=4,GROUPM=8,KREDUCE=0,KSL=1,KWG=16,KWI=16,LDS=1,MDIMC=8,MWG=64,NDIMC=16,NWG=128,PADA=0,PADB=0,BKM=0,REGCAP=0,SPLITK=1,STRM=1,STRN=1,SWZ=0,VWM=4,VWN=8,WSP=0,PREFETCH=1"
runs=("cub-s1|$cub,STAGES=1|1000 1000 1000" "cub-s2|$cub,STAGES=2|1000 1000 1000")
for s in "3361 189 2173" "238 6830 857" "271 865 4100" "984 1394 155" "1118 438 2141" "4490 3218 2126" "1000 1000 1000" "4096 4096 4096" "1590 223 1298" "3336 1374 184" "2048 2048 2048" "8192 64 8192" "1154 946 6726" "607 5505 720"; do
  set -- $s
  p=$($G db lookup results/databases/nvidia-h200.json -m $1 -n $2 -k $3 --json | python3 -c "import json,sys; c=json.load(sys.stdin); print(','.join(f'{k}={v}' for k,v in sorted(c['parameters'].items())))")
  runs+=("served|$p|$s")
done
for rep in 1 2; do
for e in "${runs[@]}"; do
  IFS='|' read -r name p s <<<"$e"; set -- $s
  for v in tv0 tv5; do
  $G --templates $C/$v run --kernel xgemm_fast --params "$p" -m $1 -n $2 -k $3 --min-time-ms 30 --json > $O/r.json 2>$O/r.err
  python3 - "$name" "$1x$2x$3" $O/r.json $O/r.err $v <<'PY' | tee -a $O/summary.txt
import json,sys
try:
  r=json.load(open(sys.argv[3])); c=r.get('config'); print('%-8s %-5s %-16s %-8s %10.1f %10.4f %s PF=%s ASYNC=%s WSP=%s KWI=%s KWG=%s'%(sys.argv[1],sys.argv[5],sys.argv[2],r['status'],r.get('gflops',0),r['time']['median_ms'],r.get('usage',{}).get('registers'),c['PREFETCH'],c['ASYNC'],c['WSP'],c['KWI'],c['KWG']))
except Exception as e: print(sys.argv[1],sys.argv[5],sys.argv[2],'fail',open(sys.argv[4]).read().strip()[:200])
PY
  done
done; done
