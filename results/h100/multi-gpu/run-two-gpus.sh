#!/usr/bin/env bash
# One 60 s search at 2048x2048x2048 on one GPU and on every GPU of the host, from empty caches
# (binary, evaluation and the driver's compute cache), for the default strategy (bayes) and for
# random. Writes each search's log, results file and journal under OUT, and checks that no journal
# holds a configuration twice. Usage: run-two-gpus.sh GEMMTUNE OUT [SECONDS [DEVICE_SETS]]
# DEVICE_SETS: "default all" (the first GPU alone, then every GPU); a host may list a CPU platform
# first, so the one-GPU run names no index.
set -euo pipefail
gemmtune="$1"
out="$2"
seconds="${3:-60}"
device_sets="${4:-default all}"
mkdir -p "$out"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv >"$out/gpus.csv"
"$gemmtune" devices >"$out/devices.txt"
for strategy in bayes random; do
  for devices in $device_sets; do
    name="$strategy-$( [ "$devices" = all ] && echo all || echo one)"
    scratch="$(mktemp -d)"
    # Empty caches: gemmtune's binary and evaluation caches and the driver's compute cache.
    CUDA_CACHE_PATH="$scratch/cuda" GEMMTUNE_EVALUATION_CACHE="$scratch/evaluations" \
      "$gemmtune" search -s 2048x2048x2048 --strategy "$strategy" --time-budget "$seconds" \
      --max-evals 100000 --seed 1 --device "$devices" --cache-dir "$scratch/binaries" \
      --no-db --out "$out/$name" >"$out/$name.log" 2>&1 || echo "$name failed: $?" >>"$out/$name.log"
    rm -rf "$scratch"
    python3 - "$out/$name" <<'PY'
import glob, json, sys
journal = glob.glob(sys.argv[1] + "/*.journal.jsonl")[0]
configs = [json.dumps(r["result"]["config"], sort_keys=True) for r in map(json.loads, open(journal))
           if r.get("type") == "result"]
print(f"{journal}: {len(configs)} results, {len(configs) - len(set(configs))} configurations twice")
PY
  done
done | tee "$out/journals.txt"
grep -h "configurations measured in" "$out"/*.log
