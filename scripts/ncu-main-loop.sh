#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Profiles the main kernel of gemmtune's chosen configuration and cuBLAS's kernel for one FP32
# row-major shape with Nsight Compute (ncu), on a CUDA machine with the NVIDIA OpenCL driver and
# PyTorch: the counters that say what limits a GEMM's main loop (issue slots, FMA pipe, shared
# memory, stalls, occupancy, instruction mix), side by side.
# Usage: scripts/ncu-main-loop.sh OUTPUT_FOLDER DATABASE M N K
#   GEMMTUNE (default build/gemmtune), PYTHON (default python3), NCU (default ncu) from the
#   environment. Writes gemmtune.ncu-rep, cublas.ncu-rep, choice.json, details-gemmtune.txt,
#   details-cublas.txt and metrics.csv (the metrics below, one row per kernel). Where ncu does not
#   see the OpenCL driver's launches (NVIDIA's), xgemm_fast's binary is profiled through
#   scripts/ptx-launch.py.
set -euo pipefail
out=${1:?usage: ncu-main-loop.sh OUTPUT_FOLDER DATABASE M N K}
db=${2:?usage: ncu-main-loop.sh OUTPUT_FOLDER DATABASE M N K}
m=${3:?}
n=${4:?}
k=${5:?}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gemmtune=${GEMMTUNE:-$root/build/gemmtune}
python=${PYTHON:-python3}
ncu=${NCU:-ncu}
command -v "$ncu" >/dev/null || { echo "ncu-main-loop: no '$ncu' here" >&2; exit 1; }
mkdir -p "$out"

# The configuration the library would run (the one chooser), as kernel and parameters.
"$gemmtune" db lookup "$db" -m "$m" -n "$n" -k "$k" --json >"$out/choice.json"
read -r kernel params < <("$python" - "$out/choice.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
params = ",".join(f"{k}={v}" for k, v in sorted(c["parameters"].items()))
print(c["kernel"], params)
PY
)
echo "ncu-main-loop: $kernel $params at ${m}x${n}x${k}"

# Full sections; the first launches are the verification run and warm-ups, so one later launch of
# the main kernel (named after the template) is profiled.
sections=(--set full)
"$ncu" "${sections[@]}" --target-processes all --kernel-name "regex:^$kernel\$" --launch-skip 2 \
  --launch-count 1 -f -o "$out/gemmtune" \
  "$gemmtune" run --kernel "$kernel" --params "$params" -m "$m" -n "$n" -k "$k" --min-runs 3 \
  --max-runs 3 >"$out/ncu-gemmtune.log" 2>&1 || true
sides=(cublas)
if [[ -f "$out/gemmtune.ncu-rep" ]]; then
  sides=(gemmtune cublas)
elif [[ $kernel == xgemm_fast ]]; then
  # NVIDIA's OpenCL launches are not visible to ncu: the same binary (PTX, from gemmtune's binary
  # cache) is launched through the CUDA driver instead (scripts/ptx-launch.py), where it is.
  "$gemmtune" run --kernel "$kernel" --params "$params" -m "$m" -n "$n" -k "$k" --min-runs 1 \
    --max-runs 1 --cache-dir "$out/cache" >"$out/cache.log" 2>&1 || true
  bin=$(ls -S "$out"/cache/kernels/*.bin 2>/dev/null | head -1 || true)
  groupm=$(sed -n 's/.*GROUPM=\([0-9]*\).*/\1/p' <<<"$params")
  if [[ -n $bin ]]; then
    "$ncu" "${sections[@]}" --import-source yes --kernel-name "regex:^XgemmFast\$" --launch-skip 2 \
      --launch-count 1 -f -o "$out/gemmtune" "$python" "$root/scripts/ptx-launch.py" --binary "$bin" \
      -m "$m" -n "$n" -k "$k" --groupm "${groupm:-1}" >"$out/ncu-gemmtune.log" 2>&1 || true
  fi
  [[ -f "$out/gemmtune.ncu-rep" ]] && sides=(gemmtune cublas)
  rm -rf "$out/cache"
fi
if [[ ${#sides[@]} -eq 1 ]]; then
  echo "ncu-main-loop: ncu profiled no gemmtune kernel (ncu-gemmtune.log)"
fi

cat >"$out/cublas_call.py" <<PY
import torch
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.rand(($m, $k), device="cuda") + 0.5
b = torch.rand(($k, $n), device="cuda") + 0.5
for _ in range(4):
    c = a @ b
torch.cuda.synchronize()
PY
# cuBLAS's GEMM kernels carry gemm in their names (sgemm, cutlass ... gemm); skip the first call.
"$ncu" "${sections[@]}" --target-processes all --kernel-name "regex:gemm" --launch-skip 2 \
  --launch-count 1 -f -o "$out/cublas" "$python" "$out/cublas_call.py" >"$out/ncu-cublas.log" 2>&1

for side in "${sides[@]}"; do
  "$ncu" --import "$out/$side.ncu-rep" --page details >"$out/details-$side.txt"
done
metrics=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
metrics+=,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__registers_per_thread,launch__shared_mem_per_block_static
metrics+=,launch__shared_mem_per_block_dynamic,launch__block_size,launch__grid_size
metrics+=,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
metrics+=,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__average_warp_latency_issue_stalled_barrier.ratio
metrics+=,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio
metrics+=,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio
metrics+=,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio
metrics+=,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio
metrics+=,smsp__average_warp_latency_issue_stalled_not_selected.ratio
metrics+=,smsp__average_warp_latency_issue_stalled_wait.ratio
{
  for side in "${sides[@]}"; do
    "$ncu" --import "$out/$side.ncu-rep" --page raw --csv --metrics "$metrics" | sed "s/^/$side,/"
  done
} >"$out/metrics.csv"
echo "ncu-main-loop: wrote $out"
