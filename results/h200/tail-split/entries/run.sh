#!/usr/bin/env bash
# The tail split (TAIL) at the H200 database's 33 large FP32 entries whose tiles leave a partial
# last round: each entry as stored (base) and with TAIL 1 or 2 and SPLITK 4, 8 or 16 (KREDUCE 1),
# every file benched in each of two rounds, the second in the reverse order.
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(cd "$(dirname "$0")" && pwd); mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/host.txt; date -u >> $O/host.txt
files="base t1s4 t1s8 t1s16 t2s4 t2s8 t2s16"
rev="t2s16 t2s8 t2s4 t1s16 t1s8 t1s4 base"
for r in 1 2; do
  [ $r = 1 ] && list=$files || list=$rev
  for f in $list; do
    timeout 120 $G bench $C/$f.json -o $O/r$r-$f.json --min-time-ms 20 > $O/r$r-$f.log 2>&1
    echo "r$r $f rc=$?"
  done
done
date -u >> $O/host.txt
cd $O && tar czf ../w.tgz . && cd .. && rm -rf $O
