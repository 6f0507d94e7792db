#!/usr/bin/env bash
# The K-major B tile (vector stores of B) at cuBLAS's decomposition of 1000^3 and at weak rows' served configurations
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; mkdir -p $O
cub="ALDCOPY=0,ASYNC=0,DOT2=0,GLH=0,GLV=4,GROUPM=8,KREDUCE=0,KSL=1,KWG=16,KWI=16,LDS=1,MDIMC=8,MWG=64,NDIMC=16,NWG=128,PADA=0,REGCAP=0,SPLITK=1,STRM=1,STRN=1,SWZ=0,VWM=4,VWN=8,WSP=0,PREFETCH=1"
runs=()
for st in 1 2; do for b in "BKM=0,PADB=0" "BKM=1,PADB=0" "BKM=1,PADB=4" "BKM=0,PADB=4"; do runs+=("cub-s$st-$b|$cub,STAGES=$st,$b|1000 1000 1000"); done; done
for s in "3361 189 2173" "238 6830 857" "271 865 4100" "1118 438 2141" "1000 1000 1000"; do
  set -- $s
  p=$($G db lookup results/databases/nvidia-h200.json -m $1 -n $2 -k $3 --json | python3 -c "import json,sys; c=json.load(sys.stdin); print(','.join(f'{k}={v}' for k,v in sorted(c['parameters'].items())))")
  runs+=("served|$p|$s")
  runs+=("served-bkm|$(echo $p | sed 's/BKM=0/BKM=1/')|$s")
  runs+=("served-bkm-k16|$(echo $p | sed -e 's/BKM=0/BKM=1/' -e 's/KWG=8/KWG=16/' -e 's/KWI=8/KWI=16/')|$s")
done
for rep in 1 2; do
for e in "${runs[@]}"; do
  IFS='|' read -r name p s <<<"$e"; set -- $s
  $G run --kernel xgemm_fast --params "$p" -m $1 -n $2 -k $3 --min-time-ms 30 --json > $O/r.json 2>$O/r.err
  python3 - "$name" "$1x$2x$3" $O/r.json $O/r.err <<'PY' | tee -a $O/summary.txt
import json,sys
try:
  r=json.load(open(sys.argv[3])); print('%-26s %-16s %-8s %10.1f %10.4f %s %s'%(sys.argv[1],sys.argv[2],r['status'],r.get('gflops',0),r['time']['median_ms'],r.get('usage',{}).get('registers'),json.dumps(r.get('config'),separators=(',',':'))))
except Exception as e: print(sys.argv[1],sys.argv[2],'fail',open(sys.argv[4]).read().strip()[:200])
PY
done; done
