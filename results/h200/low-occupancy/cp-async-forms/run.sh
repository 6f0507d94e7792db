#!/usr/bin/env bash
# Experiment: cp.async form variants (tv0 committed, tv1 no memory clobbers, tv2 also 32-bit shared address)
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(dirname "$0"); mkdir -p $O
best4096="DOT2=0,GLV=4,GROUPM=8,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=16,NWG=128,PADA=0,PADB=0,PREFETCH=1,REGCAP=128,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8"
best1000="ALDCOPY=0,ASYNC=0,DOT2=0,GLV=4,GROUPM=8,KREDUCE=0,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=16,NWG=128,PADA=0,PADB=0,PREFETCH=1,REGCAP=128,SPLITK=4,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8"
tile="GLV=4,GROUPM=8,KWI=8,MDIMC=16,NDIMC=16,MWG=128,NWG=128,VWM=2,VWN=8,REGCAP=128,ASYNC=1,KWG=8"
a1000="$tile,STAGES=3,SPLITK=4"
cub="GLV=4,GROUPM=8,KWI=8,MDIMC=8,NDIMC=16,MWG=64,NWG=128,VWM=2,VWN=8,ASYNC=1,KWG=8,STAGES=3"
cubk16="GLV=4,GROUPM=8,KWI=16,MDIMC=8,NDIMC=16,MWG=64,NWG=128,VWM=2,VWN=8,ASYNC=1,KWG=16,STAGES=3"
cub128="GLV=4,GROUPM=8,KWI=8,MDIMC=16,NDIMC=8,MWG=128,NWG=64,VWM=2,VWN=8,ASYNC=1,KWG=8,STAGES=3"
runs=(
 "base|tv0|$best4096|-m 4096 -n 4096 -k 4096"
 "baseTN|tv0|$best4096|-m 4096 -n 4096 -k 4096 --layout TN"
 "base|tv0|$best1000|-m 1000 -n 1000 -k 1000"
 "base-cub|tv0|${cub/ASYNC=1,KWG=8,STAGES=3/ASYNC=0,KWG=8,STAGES=2},PREFETCH=1|-m 1000 -n 1000 -k 1000"
)
for v in tv0 tv1 tv2; do runs+=(
 "s3|$v|$tile,STAGES=3|-m 4096 -n 4096 -k 4096"
 "s3TN|$v|$tile,STAGES=3|-m 4096 -n 4096 -k 4096 --layout TN"
 "s4TN|$v|$tile,STAGES=4|-m 4096 -n 4096 -k 4096 --layout TN"
 "s3|$v|$a1000|-m 1000 -n 1000 -k 1000"
 "s3TN|$v|$a1000|-m 1000 -n 1000 -k 1000 --layout TN"
 "cub|$v|$cub|-m 1000 -n 1000 -k 1000"
 "cubTN|$v|$cub|-m 1000 -n 1000 -k 1000 --layout TN"
 "cubk16TN|$v|$cubk16|-m 1000 -n 1000 -k 1000 --layout TN"
 "cub128TN|$v|$cub128|-m 1000 -n 1000 -k 1000 --layout TN"
 "bkm|$v|$cubk16,BKM=1|-m 1000 -n 1000 -k 1000"
); done
printf '%-10s %-4s %-34s %-7s %10s %s\n' name tpl problem status GFLOPS resources | tee $O/summary.txt
i=0
for e in "${runs[@]}"; do
  IFS='|' read -r name v p prob <<<"$e"; i=$((i+1))
  timeout 120 $G --templates $C/$v run --kernel xgemm_fast --params "$p" $prob --min-time-ms 30 --cache-dir $O/cache-$v >$O/r$i.txt 2>$O/r$i.err
  st=$(awk '$1=="status"{print $2}' $O/r$i.txt); gf=$(awk '$1=="speed"{print $2}' $O/r$i.txt); res=$(sed -n 's/^resources *//p' $O/r$i.txt)
  printf '%-10s %-4s %-34s %-7s %10s %s\n' "$name" "$v" "$prob" "${st:-fail}" "${gf:--}" "${res:--}" | tee -a $O/summary.txt
done
