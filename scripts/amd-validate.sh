#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# For a person who owns an AMD card: runs what needs the card and writes ONE report file to send
# back. What it checks is what results/amd/README.md lists as waiting for a card:
#   1. device detection: which OpenCL devices there are and which profile each matched;
#   2. offline against runtime resources: the profile's starting configurations built offline
#      (LLVM AMDGPU backend, when installed) and by the card's own driver (`run` reads the code
#      object's metadata of the program binary), side by side;
#   3. a short search per template at one shape, every result verified against Eigen;
#   4. the standard suite against CLBlast (when this build has CLBlast).
# Usage: scripts/amd-validate.sh [--device SELECTOR] [--budget SECONDS] [--out FILE]
# Needs a built gemmtune (scripts/build.sh) and the card's OpenCL driver (ROCm, or Mesa's rusticl).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gemmtune="${GEMMTUNE:-$root/build/gemmtune}"
device=""
budget=60
shape="1024x1024x1024"
out=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --device) device="$2"; shift 2 ;;
    --budget) budget="$2"; shift 2 ;;
    --shape) shape="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "amd-validate: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$gemmtune" ]] || { echo "amd-validate: no gemmtune at $gemmtune (run scripts/build.sh)" >&2; exit 2; }
[[ "$budget" =~ ^[1-9][0-9]*$ ]] || { echo "amd-validate: --budget must be a positive number of seconds" >&2; exit 2; }
device_args=()
[[ -n "$device" ]] && device_args=(--device "$device")

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="${out:-$PWD/amd-validate-$stamp.md}"

section() { printf '\n## %s\n\n' "$1" >>"$work/report.md"; }
# Runs a command, its output fenced in the report; a failure is recorded, never fatal.
record() {
  printf '```\n$ %s\n' "$*" >>"$work/report.md"
  if "$@" >>"$work/report.md" 2>&1; then status=0; else status=$?; fi
  printf '(exit %s)\n```\n' "$status" >>"$work/report.md"
  return 0
}

printf '# gemmtune AMD validation report\n\ndate %s, gemmtune %s, host %s\n' "$stamp" \
  "$("$gemmtune" --version 2>/dev/null || echo '?')" "$(uname -srm)" >"$work/report.md"

section "1. Devices and the profile each matched"
record "$gemmtune" devices
"$gemmtune" devices --json >"$work/devices.json" 2>/dev/null || true
record cat "$work/devices.json"
profile="$(python3 - "$work/devices.json" "$device" <<'PY' 2>/dev/null || true
import json, sys
devices = json.load(open(sys.argv[1]))
devices = devices if isinstance(devices, list) else devices.get("devices", [])
gpus = [d for d in devices if d.get("type") == "gpu"] or devices
print(gpus[0].get("profile", "generic") if gpus else "generic")
PY
)"
printf '\nprofile used below: `%s`\n' "${profile:-generic}" >>"$work/report.md"

section "2. Starting configurations: offline build against the card's driver"
if [[ "$profile" == gfx* ]]; then
  mapfile -t starts < <(python3 - "$root/devices/$profile.json" <<'PY' 2>/dev/null || true
import json, sys
p = json.load(open(sys.argv[1]))
for e in p.get("starting_configurations", {}).get("entries", []):
    params = ",".join(f"{k}={v}" for k, v in sorted(e["parameters"].items()))
    print(f'{e["kernel"]} {e.get("precision", "32")} {params}')
PY
)
  for line in "${starts[@]}"; do
    read -r kernel precision params <<<"$line"
    record "$gemmtune" compile --kernel "$kernel" --target "$profile" --precision "$precision" --params "$params"
    record "$gemmtune" run "${device_args[@]}" --kernel "$kernel" --precision "$precision" --params "$params" -m 2048 -n 2048 -k 2048
  done
else
  echo "no AMD profile matched: nothing to compare (send this report anyway: the device names above are what the matching needs)" >>"$work/report.md"
fi

section "3. A short search per template at $shape (every result verified)"
for kernel in xgemm_fast xgemm xgemm_direct; do
  record "$gemmtune" search "${device_args[@]}" --kernel "$kernel" -s "$shape" --time-budget "$budget" \
    --db "$work/tuned.json" --out "$work/search-$kernel"
done
record "$gemmtune" db show "$work/tuned.json"

section "4. The standard suite against CLBlast"
record "$gemmtune" bench-suite "${device_args[@]}" --db "$work/tuned.json"

cp "$work/report.md" "$out"
echo "amd-validate: report written to $out"
