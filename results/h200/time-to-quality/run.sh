#!/usr/bin/env bash
# Time to quality of the default search on one GPU, from empty caches (gemmtune's binary and
# evaluation caches and the driver's compute cache), with a baseline binary in the same call:
#  1. rate: a 60 s default search at 2048x2048x2048, per binary;
#  2. quality: 60 s default searches at SHAPE (a shape the database lacks) with two seeds, the
#     baseline's 60 s search, and a REF_SECONDS search (seed 3) whose results, with every other
#     search's of this call, make the reference: the best configuration measured for SHAPE here.
# Writes each search's log, results file and journal under OUT and a summary to OUT/summary.txt.
# STEPS: a comma-separated selection of rate, shape, reference and summary (a device call may run
# only so long, so the steps can be run in several calls into one OUT).
# Usage: run.sh GEMMTUNE BASELINE OUT [STEPS [SHAPE [REF_SECONDS]]]
set -euo pipefail
gemmtune="$1"
baseline="$2"
out="$3"
steps=",${4:-rate,shape,reference,summary},"
shape="${5:-3072x2560x1536}"
ref_seconds="${6:-300}"
mkdir -p "$out"
if [[ "$steps" != ",summary," ]]; then
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv >"$out/gpus.csv"
  "$gemmtune" devices >"$out/devices.txt"
fi

search() {  # NAME BINARY SHAPE SECONDS SEED
  local scratch
  scratch="$(mktemp -d)"
  CUDA_CACHE_PATH="$scratch/cuda" GEMMTUNE_EVALUATION_CACHE="$scratch/evaluations" \
    "$2" search -s "$3" --time-budget "$4" --max-evals 100000 --seed "$5" \
    --cache-dir "$scratch/binaries" --no-db --out "$out/$1" >"$out/$1.log" 2>&1 ||
    echo "$1 failed: $?" >>"$out/$1.log"
  rm -rf "$scratch"
}

if [[ "$steps" == *,rate,* ]]; then
  search rate-new "$gemmtune" 2048x2048x2048 60 1
  search rate-baseline "$baseline" 2048x2048x2048 60 1
fi
if [[ "$steps" == *,shape,* ]]; then
  search shape-new-1 "$gemmtune" "$shape" 60 1
  search shape-new-2 "$gemmtune" "$shape" 60 2
  search shape-baseline-1 "$baseline" "$shape" 60 1
fi
if [[ "$steps" == *,reference,* ]]; then
  search shape-reference "$gemmtune" "$shape" "$ref_seconds" 3
fi
[[ "$steps" == *,summary,* ]] || exit 0

python3 - "$out" "$shape" <<'PY' | tee "$out/summary.txt"
import glob, gzip, json, os, sys
out, shape = sys.argv[1], sys.argv[2]
m, n, k = map(int, shape.split("x"))
def results(name):
    journal = glob.glob(os.path.join(out, name, "*.journal.jsonl*"))
    opener = gzip.open if journal and journal[0].endswith(".gz") else open
    rows = [json.loads(l) for l in opener(journal[0], "rt")] if journal else []
    return [r["result"] for r in rows if "result" in r]
def best(rs):
    ok = [r for r in rs if r.get("status") == "ok"]
    return max(ok, key=lambda r: r["gflops"]) if ok else None
for name in ["rate-new", "rate-baseline"]:
    line = [l.strip() for l in open(os.path.join(out, name + ".log")) if "configurations measured in" in l]
    print(f"{name}: {line[-1] if line else 'no summary line'}")
names = ["shape-new-1", "shape-new-2", "shape-baseline-1", "shape-reference"]
everything = [r for nm in names for r in results(nm)]
ref = best(everything)
print(f"reference for {shape}: {ref['gflops']:.0f} GFLOPS, best of {len(everything)} results "
      f"of the four searches at this shape; parameters {json.dumps(ref['config'], sort_keys=True)}")
for name in names:
    rs = results(name)
    b = best(rs)
    print(f"{name}: {len(rs)} results, best {b['gflops']:.0f} GFLOPS = {b['gflops'] / ref['gflops']:.3f} of the reference")
PY
