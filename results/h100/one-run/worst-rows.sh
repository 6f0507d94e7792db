#!/usr/bin/env bash
# Why the worst rows of the random suites against cuBLAS are slow: the chooser's configuration
# (taken from the nearest tuned entries) against what a search of that very shape finds. cuBLAS,
# the suite with the committed database, one search per shape into a copy of it, and the suite
# with that copy, in this one invocation.
# Usage, from the repository root: results/h100/one-run/worst-rows.sh OUTPUT_FOLDER [SHAPES]
#   KERNELS (default xgemm_fast): the templates searched, one search each; BUDGET seconds each.
set -u
out=${1:?usage: worst-rows.sh OUTPUT_FOLDER [SHAPES]}
shapes=${2:-3694x43x2290,4490x3218x2126,3361x189x2173,8192x64x8192}
gemmtune=${GEMMTUNE:-build/gemmtune}
budget=${BUDGET:-45}
mkdir -p "$out"
: >"$out/steps.txt"
python3 scripts/bench-cublas.py --shapes "$shapes" --reps 10 --json -o "$out/cublas.json" \
  >"$out/cublas.log" 2>&1
echo "cublas rc=$?" >>"$out/steps.txt"
suite() {  # suite NAME DB
  "$gemmtune" bench-suite --db "$2" --shapes "$shapes" --cublas "$out/cublas.json" --reps 10 \
    --warmup 2 -o "$out/$1.md" --save-json "$out/$1.json" >"$out/$1.log" 2>&1
  echo "suite $1 rc=$?" >>"$out/steps.txt"
}
suite before results/nvidia-h100-80gb-hbm3.json
cp results/nvidia-h100-80gb-hbm3.json "$out/db.json"
for s in ${shapes//,/ }; do
  for kernel in ${KERNELS:-xgemm_fast}; do
    "$gemmtune" search --kernel "$kernel" -s "$s" --time-budget "$budget" --db "$out/db.json" \
      --out "$out/search-$kernel-$s" >>"$out/search.log" 2>&1
    echo "search $kernel $s rc=$?" >>"$out/steps.txt"
  done
done
suite after "$out/db.json"
cat "$out/steps.txt"
