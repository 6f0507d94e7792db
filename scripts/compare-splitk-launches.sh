#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Split-K in one launch against two, on the GPU clock: for every FP32 xgemm_fast entry of a
# database that splits K with the reduce kernel (KREDUCE=0), `gemmtune run --json` times the entry
# as it is and with KREDUCE=1 (the tile's last work-group adds the parts, one launch), each verified,
# in two rounds (the first round's builds cached for the second). Prints one row per shape (the
# faster round of each form) and the geometric mean of two-launch time over one-launch time.
# Usage: scripts/compare-splitk-launches.sh OUTDIR DATABASE [EVERY]   (EVERY: take every EVERY-th
#   entry by GPU time, default 1). GEMMTUNE (default build/gemmtune), DEVICE (default: the first
#   GPU) from the environment. Writes OUTDIR/runs.jsonl (every run's result) and OUTDIR/table.md.
set -euo pipefail
out="${1:?usage: scripts/compare-splitk-launches.sh OUTDIR DATABASE [EVERY]}"
db="${2:?usage: scripts/compare-splitk-launches.sh OUTDIR DATABASE [EVERY]}"
every="${3:-1}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gemmtune=${GEMMTUNE:-$root/build/gemmtune}
device_args=()
[[ -n "${DEVICE:-}" ]] && device_args=(-d "$DEVICE")
mkdir -p "$out"
: >"$out/runs.jsonl"
python3 - "$db" "$every" >"$out/entries.txt" <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
rows = []
for e in db["entries"]:
    k, p = e["key"], e["parameters"]
    if (k["kernel"] == "xgemm_fast" and k["precision"] == "32" and k["batch"] == 1
            and p.get("SPLITK", 1) > 1 and p.get("KREDUCE", 0) == 0 and e["gflops"] > 0):
        us = 2e-3 * k["m"] * k["n"] * k["k"] / e["gflops"]
        params = ",".join(f"{a}={b}" for a, b in sorted(p.items()) if a != "KREDUCE")
        rows.append((us, k["m"], k["n"], k["k"], k["layout"], k["order"], params))
rows.sort()
for r in rows[::int(sys.argv[2])]:
    print(*r[1:])
PY
for round in 1 2; do
  while read -r m n k layout order params; do
    for kreduce in 0 1; do
      result=$("$gemmtune" --templates "$root/kernel_templates" --devices "$root/devices" run \
        "${device_args[@]}" --kernel xgemm_fast -p "$params,KREDUCE=$kreduce" -m "$m" -n "$n" \
        -k "$k" --layout "$layout" --order "$order" --json --warmup 2 --min-time-ms 15 \
        --cache-dir "$out/cache" 2>>"$out/stderr.txt" | tr -d '\n') || true
      [[ -n "$result" ]] || result='{}'
      echo "{\"round\":$round,\"m\":$m,\"n\":$n,\"k\":$k,\"kreduce\":$kreduce,\"result\":$result}" \
        >>"$out/runs.jsonl"
    done
  done <"$out/entries.txt"
done
rm -rf "$out/cache"
python3 - "$out/runs.jsonl" <<'PY' | tee "$out/table.md"
import collections, json, math, sys
best = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    d = json.loads(line)
    r = d["result"]
    if r.get("status") != "ok":
        continue
    key = (d["m"], d["n"], d["k"])
    us = r["time"]["median_ms"] * 1e3
    form = best[key]
    if d["kreduce"] not in form or us < form[d["kreduce"]][0]:
        form[d["kreduce"]] = (us, r.get("launches"), r["config"]["SPLITK"])
print("| shape | SPLITK | two launches (µs) | one launch (µs) | two / one |")
print("| --- | ---: | ---: | ---: | ---: |")
ratios = []
for (m, n, k), f in best.items():
    if 0 not in f or 1 not in f:
        continue
    ratio = f[0][0] / f[1][0]
    ratios.append(ratio)
    print(f"| {m}x{n}x{k} | {f[0][2]} | {f[0][0]:.1f} ({f[0][1]}) | {f[1][0]:.1f} ({f[1][1]}) | {ratio:.3f} |")
if ratios:
    gm = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"\n{len(ratios)} shapes: one launch runs at {gm:.3f} of two launches' speed (geometric mean), "
          f"{sum(r >= 1 for r in ratios)} at least as fast")
PY
