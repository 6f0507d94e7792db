#!/usr/bin/env bash
# One run on one GPU: cuBLAS and bench-suite for the standard suite, the memory-bound suite and
# random shapes of seeds 1 and 2 (scripts/bench-vs-peers.sh), then Nsight Compute on the main
# kernel at 4096^3 and 8192^3 against cuBLAS's (scripts/ncu-main-loop.sh), then the wide-tile
# sweep at 4096^3 (wide-tiles.sh).
# Usage, from the repository root: results/h100/one-run/run.sh OUTPUT_FOLDER
#   GEMMTUNE (default build/gemmtune), NCU (default: ncu on PATH, else the CUDA toolkit's).
set -u
out=${1:?usage: run.sh OUTPUT_FOLDER}
db=results/nvidia-h100-80gb-hbm3.json
export GEMMTUNE=${GEMMTUNE:-build/gemmtune}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv >"$out/gpu.txt"
date -u +%Y-%m-%dT%H:%M:%SZ >>"$out/gpu.txt"
scripts/bench-vs-peers.sh "$out/peers" "$db" 1 2
ncu_bin=${NCU:-$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)}
for s in 4096 8192; do
  NCU=$ncu_bin scripts/ncu-main-loop.sh "$out/ncu-$s" "$db" $s $s $s
  echo "ncu $s rc=$?" >>"$out/peers/steps.txt"
done
results/h100/one-run/wide-tiles.sh "$out/wide-tiles"
