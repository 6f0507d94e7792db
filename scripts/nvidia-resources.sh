#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Measures the real registers, spills and local memory of a stratified sample of the
# configurations a journal recorded, on an NVIDIA OpenCL device, for `gemmtune rank --resources`:
# the N fastest recorded configurations and M others drawn with a seed. Each is built and run once
# by `gemmtune run` on a small problem of the recorded precision, order and layout (the build does
# not depend on the shape); ptxas's report in the build log (-cl-nv-verbose, which gemmtune adds
# on NVIDIA) gives the counts. Builds are fresh: no gemmtune binary cache, and the driver's compute
# cache off (CUDA_CACHE_DISABLE=1), since a cached binary comes without a ptxas report.
#
# Writes one JSON object per line:
#   {"kernel": ..., "config": {...}, "registers": R, "spills": S (32-bit words),
#    "local_mem_bytes": L, "status": "ok"|..., "source": "CL_KERNEL_*, ptxas"}
# (registers null where the build log held no report; status "refused" with a message where
# gemmtune refused the configuration before building it).
#
# The counts are those of the kernel template as it is now: a recording made with an earlier
# version of the template was measured on code that may have used other counts.
#
# Usage: scripts/nvidia-resources.sh JOURNAL[.gz] OUT.jsonl [--fastest N] [--others M] [--seed S]
#          [--jobs J] [--device SELECTOR] [--gemmtune BINARY]
# Defaults: 100 fastest, 500 others, seed 1, one job per core, the first GPU, build/gemmtune
# (built with scripts/build.sh's settings, tests off, when missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '/^# Usage:/,/^# Defaults:/p' "$0" | sed 's/^# //' >&2; exit 2; }
[[ $# -ge 2 ]] || usage
journal="$1" out="$2"
shift 2
fastest=100 others=500 seed=1 jobs="$(nproc)" device="" gemmtune="$root/build/gemmtune"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --fastest) fastest="$2"; shift 2 ;;
    --others) others="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --device) device="$2"; shift 2 ;;
    --gemmtune) gemmtune="$2"; shift 2 ;;
    *) echo "nvidia-resources.sh: unknown option $1" >&2; usage ;;
  esac
done
for n in "$fastest" "$others" "$seed" "$jobs"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "nvidia-resources.sh: '$n' is not a whole number" >&2; exit 2; }
done
[[ -r "$journal" ]] || { echo "nvidia-resources.sh: cannot read $journal" >&2; exit 2; }
: >"$out" || { echo "nvidia-resources.sh: cannot write $out" >&2; exit 2; }
if [[ ! -x "$gemmtune" ]]; then
  build="$(dirname "$gemmtune")"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGEMMTUNE_BUILD_TESTS=OFF >&2
  cmake --build "$build" -j "$(nproc)" --target gemmtune >&2
fi
# The binary finds the templates and profiles in this checkout wherever it was built.
export GEMMTUNE_DATA_DIR="${GEMMTUNE_DATA_DIR:-$root}"
export CUDA_CACHE_DISABLE=1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The sample, one configuration a line: index, kernel, parameters, precision, order, layout.
python3 - "$journal" "$fastest" "$others" "$seed" >"$work/sample.tsv" <<'EOF'
import gzip, json, random, sys
path, fastest, others, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
best, order, problem = {}, [], None
with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
    for line in f:
        try:
            j = json.loads(line)
        except ValueError:
            continue  # a line cut short
        if j.get("type") != "result":
            continue
        p, r = j["problem"], j["result"]
        problem = problem or p
        key = json.dumps(r["config"], sort_keys=True)
        g = r.get("gflops", 0) if r.get("status") == "ok" else 0
        if key not in best:
            order.append(key)
            best[key] = g
        best[key] = max(best[key], g)
if problem is None:
    sys.exit("nvidia-resources.sh: %s holds no result" % path)
ranked = sorted((k for k in order if best[k] > 0), key=lambda k: -best[k])
head = ranked[:fastest]
rest = [k for k in order if k not in set(head)]
sample = head + random.Random(seed).sample(rest, min(others, len(rest)))
for i, key in enumerate(sample):
    params = ",".join("%s=%d" % kv for kv in sorted(json.loads(key).items()))
    print("\t".join([str(i), problem["kernel"], params, str(problem.get("precision", "32")),
                     problem.get("order", "row"), problem.get("layout", "NN")]))
EOF
total="$(wc -l <"$work/sample.tsv")"
echo "nvidia-resources.sh: building $total configurations of $journal with $jobs jobs" >&2

build_one() {  # index kernel params precision order layout
  "$gemmtune" run --kernel "$2" -p "$3" --precision "$4" --order "$5" --layout "$6" \
    -m 256 -n 256 -k 256 --warmup 0 --min-runs 1 --max-runs 1 --cache-dir none --json \
    ${device:+--device "$device"} >"$work/$1.json" 2>"$work/$1.err" || true
}
export -f build_one
export gemmtune device work
tr '\t' '\n' <"$work/sample.tsv" | xargs -d '\n' -n 6 -P "$jobs" bash -c 'build_one "$@"' _

python3 - "$work" "$out" <<'EOF'
import json, os, sys
work, out = sys.argv[1], sys.argv[2]
counted = refused = 0
with open(os.path.join(work, "sample.tsv")) as s, open(out, "w") as o:
    for line in s:
        i, kernel, params, *_ = line.rstrip("\n").split("\t")
        row = {"kernel": kernel,
               "config": {k: int(v) for k, v in (p.split("=") for p in params.split(","))}}
        try:
            with open(os.path.join(work, i + ".json")) as f:
                r = json.load(f)
        except (OSError, ValueError):
            with open(os.path.join(work, i + ".err")) as f:
                err = f.read().strip().splitlines()
            row.update(status="refused", message=err[-1] if err else "no output")
            refused += 1
        else:
            u = r.get("usage", {})
            # The configuration stays as recorded (rank matches the journal's spelling).
            row.update(registers=u.get("registers"),
                       spills=u.get("spills"), local_mem_bytes=u.get("local_mem_bytes"),
                       status=r.get("status"), source=u.get("source", ""))
            counted += row["registers"] is not None
        o.write(json.dumps(row, sort_keys=True) + "\n")
print("nvidia-resources.sh: %d with ptxas counts, %d refused, written to %s"
      % (counted, refused, out), file=sys.stderr)
EOF
