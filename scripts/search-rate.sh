#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configurations a minute of the default search on one GPU and on every GPU of the host: the
# two-GPU measurement. For each gemmtune binary given (default build/gemmtune), a default search
# at 2048^3 for SECONDS (default 60), seed 7, from empty caches (a fresh XDG_CACHE_HOME and
# CUDA_CACHE_PATH per run), first on the first GPU (-d FIRST, default 1:0), then on all (-d all).
# Prints one table row per run; the logs, results files and journals go to OUTDIR as one tar.
#
# Usage: scripts/search-rate.sh OUTDIR [GEMMTUNE...]   (from the repository root)
#   SECONDS_BUDGET (default 60), FIRST (default 1:0), SHAPE (default 2048x2048x2048)
set -euo pipefail
out="${1:?usage: scripts/search-rate.sh OUTDIR [GEMMTUNE...]}"
shift
binaries=("$@")
[[ ${#binaries[@]} -gt 0 ]] || binaries=(build/gemmtune)
budget="${SECONDS_BUDGET:-60}"
first="${FIRST:-1:0}"
shape="${SHAPE:-2048x2048x2048}"
root="$PWD"
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
{
  date -u
  nproc
  nvidia-smi -L 2>/dev/null || true
} >"$work/env.txt"
printf '%-28s %-6s %8s %10s %10s %10s  %s\n' binary devices procs "a minute" verified "best GF" \
  "bounded by"
i=0
for g in "${binaries[@]}"; do
  i=$((i + 1))
  for dev in "$first" all; do
    run="$work/b$i-${dev//:/_}"
    mkdir -p "$run"
    XDG_CACHE_HOME="$run/cache" CUDA_CACHE_PATH="$run/nv" \
      timeout $((budget * 3 + 120)) "$g" --templates "$root/kernel_templates" \
      --devices "$root/devices" search -d "$dev" -s "$shape" --time-budget "$budget" --seed 7 \
      --no-db --out "$run/out" >"$run/log.txt" 2>&1 || echo "run failed: $g -d $dev" >&2
    rm -rf "$run/cache" "$run/nv"
    results="$run/out/search-xgemm_fast.json"
    [[ -f "$results" ]] || continue
    python3 - "$results" "$g" "$dev" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
best = max((r.get("best", {}).get("gflops", 0) for r in json.load(open(sys.argv[1]))["results"]),
           default=0)
print(f"{sys.argv[2][-28:]:<28} {sys.argv[3]:<6} {m['compile_pool']['starts']:>8} "
      f"{m['evaluations_per_minute']:>10.1f} {m['verified_per_minute']:>10.1f} {best:>10.0f}  "
      f"{m['bounded_by']}")
PY
  done
done | tee "$work/table.txt"
tar czf "$out/search-rate.tgz" -C "$work" .
