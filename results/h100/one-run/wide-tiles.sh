#!/usr/bin/env bash
# The tile structure of cuBLAS's FP32 kernel at 4096^3 (256x128 work-group tiles, 128 outputs per
# work-item, a multi-stage pipeline; see ncu-4096/details-cublas.txt) against the database's
# 128x128 tiles, inside xgemm_fast's own parameters: every configuration of a space of both
# (MWG, NWG 128 and 256; 128 or 256 work-items; vector widths, KWI, STAGES, REGCAP) measured at
# 4096^3, the database's configuration among them.
# Usage, from the repository root: results/h100/one-run/wide-tiles.sh OUTPUT_FOLDER
set -u
out=${1:?usage: wide-tiles.sh OUTPUT_FOLDER}
gemmtune=${GEMMTUNE:-build/gemmtune}
mkdir -p "$out"
rm -rf "$out/templates"
cp -r kernel_templates "$out/templates"
python3 - "$out/templates/xgemm_fast.json" <<'PY'
import json, sys
path = sys.argv[1]
spec = json.load(open(path))
spec["spaces"]["wide"] = {
    "description": "128x128 to 256x256 work-group tiles, 64 to 256 outputs per work-item",
    "base": "default",
    "values": {"MWG": [128, 256], "NWG": [128, 256], "KWG": [8, 16], "MDIMC": [16, 32],
               "NDIMC": [8, 16], "VWM": [2, 4], "VWN": [4, 8], "KWI": [4, 8], "STAGES": [1, 2],
               "PREFETCH": [1], "GROUPM": [8], "GLV": [4], "REGCAP": [0, 128], "SPLITK": [1]}}
json.dump(spec, open(path, "w"), indent=2)
PY
"$gemmtune" --templates "$out/templates" space --kernel xgemm_fast --space wide >"$out/space.txt" 2>&1
"$gemmtune" --templates "$out/templates" search --kernel xgemm_fast --space wide \
  --strategy exhaustive -s 4096x4096x4096 --time-budget "${BUDGET:-240}" --no-db \
  -o "$out/search.json" --journal "$out/journal.jsonl" >"$out/search.log" 2>&1
echo "wide-tiles rc=$?" >>"$out/steps.txt"
python3 - "$out/journal.jsonl" >"$out/top.txt" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    res = r.get("result", r)
    if res.get("status") == "ok":
        rows.append((res.get("gflops", 0), res.get("config", {})))
rows.sort(key=lambda x: -x[0])
print(f"{len(rows)} verified results")
for g, c in rows[:25]:
    print(f"{g:9.1f} " + ",".join(f"{k}={v}" for k, v in sorted(c.items())))
PY
cat "$out/top.txt" | head -12
