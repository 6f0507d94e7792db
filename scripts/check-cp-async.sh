#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# xgemm_fast's multistage copies (ASYNC=1) on an NVIDIA GPU of sm_80 or later, where the device
# profile's ptx_cp_async capability makes them PTX cp.async: a few ASYNC=1 configurations and the
# shipped database's best ASYNC=0 one, each measured and verified by `gemmtune run` on the default
# (queued) clock, then a short search of the "async" space at 4096^3. Prints per configuration its
# status (ok = verified against the reference), GFLOPS, kernel time and ptxas's registers and
# spills, and whether the builds took the cp.async path (the define in their options and cp.async
# in their PTX). About 3 minutes of GPU time.
#
# Usage: scripts/check-cp-async.sh OUTPUT
# Environment: GEMMTUNE (default build/gemmtune of this checkout), DEVICE (default: the first GPU),
#   SEARCH_SECONDS (default 60).
# OUTPUT gets NAME.txt (the run's output) and NAME.err per configuration, summary.txt (the table
# printed), ptx.txt (what the builds hold), search/ (the search's results and journal) and
# search.txt. Exit status: 0 when every configuration verified and the cp.async path was taken,
# 1 otherwise, 2 on bad usage.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -eq 1 ]] || { echo "usage: scripts/check-cp-async.sh OUTPUT" >&2; exit 2; }
mkdir -p "$1" || { echo "check-cp-async: cannot make $1" >&2; exit 2; }
out="$(cd "$1" && pwd)"
gemmtune="${GEMMTUNE:-$root/build/gemmtune}"
[[ -x "$gemmtune" ]] || { echo "check-cp-async: no gemmtune binary at $gemmtune" >&2; exit 2; }
device=(); [[ -n "${DEVICE:-}" ]] && device=(--device "$DEVICE")
# The binary finds the templates and profiles in this checkout wherever it was built. Fresh
# builds (no binary cache from before, no driver cache) so that ptxas reports every kernel.
export GEMMTUNE_DATA_DIR="${GEMMTUNE_DATA_DIR:-$root}"
export CUDA_CACHE_DISABLE=1
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT

"$gemmtune" devices >"$out/devices.txt" 2>&1
# The shipped database's best at 4096^3 (results/databases/nvidia-h100-80gb-hbm3.json, measured on
# an H100) and at 8192^3, ASYNC=0.
best4096="DOT2=0,GLV=4,GROUPM=8,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=16,NWG=128,PADA=0,PADB=0"
best4096+=",PREFETCH=1,REGCAP=128,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8"
best8192="ALDCOPY=1,DOT2=0,GLV=4,GROUPM=1,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=16,NWG=128"
best8192+=",PADA=0,PADB=0,PREFETCH=1,REGCAP=0,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8"
# ASYNC=1 on the same 128x128 tiles and 16x16 threads: three and four stages of a K tile of 8
# (24 and 32 KiB); a K tile of 16 three deep on 128x64 tiles (36 KiB: on 128x128 they would take
# 48 KiB, which with the 64 bytes NVIDIA's compiler adds exceed a work-group's local memory).
tile="GLV=4,GROUPM=8,KWI=8,MDIMC=16,NDIMC=16,MWG=128,NWG=128,VWM=2,VWN=8,REGCAP=128,ASYNC=1"
s3k8="$tile,KWG=8,STAGES=3"
s4k8="$tile,KWG=8,STAGES=4"
s3k16="GLV=4,GROUPM=8,KWI=8,MDIMC=16,NDIMC=16,MWG=128,NWG=64,VWM=2,VWN=4,ASYNC=1,KWG=16,STAGES=3"

# name, parameters, then the problem's options.
runs=(
  "base-4096|$best4096|-m 4096 -n 4096 -k 4096"
  "async-s3k8-4096|$s3k8|-m 4096 -n 4096 -k 4096"
  "async-s4k8-4096|$s4k8|-m 4096 -n 4096 -k 4096"
  "async-s3k16-128x64-4096|$s3k16|-m 4096 -n 4096 -k 4096"
  # Row-major TN: both operands' copies are 16-byte cp.async; NT: both element by element.
  "async-s3k8-TN-4096|$s3k8|-m 4096 -n 4096 -k 4096 --layout TN"
  "async-s3k8-NT-4096|$s3k8|-m 4096 -n 4096 -k 4096 --layout NT"
  # Edges: partial tiles in M, N and K, zero-filled copies; 4097 has odd leading dimensions.
  "async-s3k8-1000|$s3k8|-m 1000 -n 1000 -k 1000"
  "async-s4k8-4097|$s4k8|-m 4097 -n 4097 -k 4097"
  "async-s4k8-ald-4097|$s4k8,ALDCOPY=1|-m 4097 -n 4097 -k 4097"
  "base-8192|$best8192|-m 8192 -n 8192 -k 8192"
  "async-s3k8-8192|$s3k8,ALDCOPY=1|-m 8192 -n 8192 -k 8192"
)

status=0
summary="$out/summary.txt"
printf '%-26s %-12s %10s %12s  %s\n' configuration status GFLOPS "kernel ms" resources |
  tee "$summary"
for entry in "${runs[@]}"; do
  IFS='|' read -r name params problem <<<"$entry"
  # shellcheck disable=SC2086  # the problem's options split on purpose
  timeout 90 "$gemmtune" run --kernel xgemm_fast "${device[@]}" --params "$params" $problem \
    --cache-dir "$cache" >"$out/$name.txt" 2>"$out/$name.err"
  rc=$?
  st="$(awk '$1 == "status" {print $2}' "$out/$name.txt")"
  gflops="$(awk '$1 == "speed" {print $2}' "$out/$name.txt")"
  kms="$(awk '$1 == "kernel" && $2 == "median" {print $3}' "$out/$name.txt")"
  res="$(sed -n 's/^resources *//p' "$out/$name.txt")"
  [[ $rc -eq 0 && "$st" == ok ]] || { status=1; st="${st:-exit $rc}"; }
  printf '%-26s %-12s %10s %12s  %s\n' "$name" "$st" "${gflops:--}" "${kms:--}" "${res:--}" |
    tee -a "$summary"
done

# The path the builds took: the capability's define in their options (the cache entry's
# identity line) and cp.async in their PTX (the binary NVIDIA's driver returns).
{
  echo "builds in the binary cache: $(find "$cache" -name '*.bin' | wc -l)"
  echo "with -DCP_ASYNC_PTX=1 in their options: $(grep -la 'CP_ASYNC_PTX=1' -r "$cache" | wc -l)"
  echo "with ASYNC=1: $(grep -la 'DASYNC=1' -r "$cache" | wc -l)"
  echo "with cp.async in their PTX: $(grep -la 'cp\.async\.c[ag]\.shared\.global' -r "$cache" | wc -l)"
  echo "with cp.async.wait_group: $(grep -la 'cp\.async\.wait_group' -r "$cache" | wc -l)"
} | tee "$out/ptx.txt"
async_builds="$(grep -la 'DASYNC=1' -r "$cache" | wc -l)"
ptx_builds="$(grep -la 'cp\.async\.c[ag]\.shared\.global' -r "$cache" | wc -l)"
if [[ "$async_builds" -eq 0 || "$ptx_builds" -ne "$async_builds" ]]; then
  echo "check-cp-async: $ptx_builds of $async_builds ASYNC=1 builds hold cp.async" | tee -a "$out/ptx.txt"
  status=1
fi
# One ASYNC build's PTX around its copies, for the record.
sample="$(grep -la 'cp\.async\.cg' -r "$cache" | head -1)"
[[ -n "$sample" ]] && grep -a -m 12 -B 2 'cp\.async' "$sample" >"$out/ptx-sample.txt"

# A short search of the ASYNC=1 configurations at 4096^3 (the template's "async" space).
timeout $(( ${SEARCH_SECONDS:-60} + 90 )) "$gemmtune" search --kernel xgemm_fast --space async \
  "${device[@]}" -s 4096x4096x4096 --time-budget "${SEARCH_SECONDS:-60}" --out "$out/search" \
  --db "$out/search/db.json" --cache-dir "$cache" >"$out/search.txt" 2>&1 || status=1
tail -n 15 "$out/search.txt"
exit "$status"
