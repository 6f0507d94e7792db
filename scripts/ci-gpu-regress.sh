#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Performance regression check for CI on a machine with a GPU: re-measures every entry of a
# checked-in baseline database on this machine's device (gemmtune bench), then compares the new
# numbers with the baseline (gemmtune compare), allowing the threshold beyond measured noise.
#
# Usage: scripts/ci-gpu-regress.sh BASELINE.json [--device SELECTOR] [--threshold 3%]
#                                  [--out DIR] [--gemmtune PATH]
# Writes DIR/bench.json (the new database), DIR/summary.md and DIR/junit.xml (default DIR:
# ci-regress). Appends the Markdown summary to $GITHUB_STEP_SUMMARY when that is set.
# Exit status: 0 no regression, 1 a regression (or an entry that now fails), 2 bad input,
# 3 device failure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gemmtune="${GEMMTUNE:-$root/build/gemmtune}"
baseline=""
device=""
threshold="3%"
out="ci-regress"

usage() { sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device="$2"; shift 2 ;;
    --threshold) threshold="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --gemmtune) gemmtune="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "ci-gpu-regress: unknown option $1" >&2; usage >&2; exit 2 ;;
    *)
      if [[ -n "$baseline" ]]; then echo "ci-gpu-regress: one baseline only" >&2; exit 2; fi
      baseline="$1"; shift ;;
  esac
done

if [[ -z "$baseline" ]]; then usage >&2; exit 2; fi
if [[ ! -f "$baseline" ]]; then echo "ci-gpu-regress: no baseline file $baseline" >&2; exit 2; fi
if [[ ! -x "$gemmtune" ]]; then
  echo "ci-gpu-regress: $gemmtune is not an executable (build first, or pass --gemmtune)" >&2
  exit 2
fi

mkdir -p "$out"
device_args=()
if [[ -n "$device" ]]; then device_args=(--device "$device"); fi

"$gemmtune" bench "$baseline" "${device_args[@]}" -o "$out/bench.json"

code=0
"$gemmtune" compare "$baseline" "$out/bench.json" --threshold "$threshold" \
  --markdown "$out/summary.md" --junit "$out/junit.xml" || code=$?

if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$out/summary.md" ]]; then
  cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$code"
