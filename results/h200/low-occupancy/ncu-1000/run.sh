#!/usr/bin/env bash
# ncu at 1000^3: xgemm_fast at cuBLAS's decomposition (64x128 tiles, 128 work-items, one work-group a unit) against cuBLAS
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; C=$(cd "$(dirname "$0")" && pwd); mkdir -p $O
P="ALDCOPY=0,ASYNC=0,BKM=0,DOT2=0,GLH=0,GLV=4,GROUPM=8,KREDUCE=0,KSL=1,KWG=16,KWI=16,LDS=1,MDIMC=8,MWG=64,NDIMC=16,NWG=128,PADA=0,PADB=0,PREFETCH=1,REGCAP=0,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=4,VWN=8,WSP=0"
$G run --kernel xgemm_fast --params "$P" -m 1000 -n 1000 -k 1000 --min-time-ms 30 --cache-dir $O/cache > $O/run.txt 2>&1
bin=$(ls -S $O/cache/kernels/*.bin | head -1)
python3 scripts/ptx-launch.py --binary $bin -m 1000 -n 1000 -k 1000 --groupm 8 --write-ptx $O/k.ptx > $O/ptx-launch.txt 2>&1
ncu --set full --import-source yes --kernel-name "regex:^XgemmFast$" --launch-skip 2 --launch-count 1 -f -o $O/ours python3 scripts/ptx-launch.py --binary $bin -m 1000 -n 1000 -k 1000 --groupm 8 > $O/ncu-ours.log 2>&1
cat > $O/cb.py <<'PY'
import torch
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.rand((1000, 1000), device="cuda") + 0.5
b = torch.rand((1000, 1000), device="cuda") + 0.5
for _ in range(4):
    c = a @ b
torch.cuda.synchronize()
PY
ncu --set full --import-source yes --kernel-name "regex:gemm" --launch-skip 2 --launch-count 1 -f -o $O/cublas python3 $O/cb.py > $O/ncu-cublas.log 2>&1
for s in ours cublas; do
  ncu --import $O/$s.ncu-rep --page details > $O/details-$s.txt 2>&1
  ncu --import $O/$s.ncu-rep --page source --print-source sass --csv > $O/sass-$s.csv 2>&1
done
ls -la $O
