#!/usr/bin/env bash
# Time against work-groups: 4490x3218x2126's served configuration (128x64 tiles) at M = 128 x T
# (T tiles along M, 51 along N), aligned, so that only the number of tiles changes; and 4096^3's
# entry (128x128) at M = 128 x T, N = 4096.
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; mkdir -p $O
p1="ALDCOPY=0,ASYNC=0,BKM=0,DOT2=0,GLH=0,GLV=4,GROUPM=1,KREDUCE=0,KSL=1,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=8,NWG=64,PADA=0,PADB=0,PREFETCH=1,REGCAP=128,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8,WSP=0"
p2="DOT2=0,GLV=4,GROUPM=8,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=16,NWG=128,PADA=0,PADB=0,PREFETCH=1,REGCAP=128,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8"
echo "config T M N K status us" > $O/summary.txt
for T in 20 26 30 31 32 33 34 36 38 40 41 42; do
  M=$((128*T))
  $G run --kernel xgemm_fast --params "$p1" -m $M -n 3264 -k 2128 --min-time-ms 200 --json --cache-dir $O/c > $O/a-$T.json 2>$O/a-$T.err
  python3 -c "import json;r=json.load(open('$O/a-$T.json'));print('a $T $M 3264 2128',r['status'],round(r['time']['median_ms']*1e3,1), r.get('usage',{}).get('registers'))" >> $O/summary.txt
done
for T in 16 20 24 25 26 28 30 32 33 34; do
  M=$((128*T))
  $G run --kernel xgemm_fast --params "$p2" -m $M -n 4096 -k 4096 --min-time-ms 200 --json --cache-dir $O/c > $O/b-$T.json 2>$O/b-$T.err
  python3 -c "import json;r=json.load(open('$O/b-$T.json'));print('b $T $M 4096 4096',r['status'],round(r['time']['median_ms']*1e3,1), r.get('usage',{}).get('registers'))" >> $O/summary.txt
done
cat $O/summary.txt
