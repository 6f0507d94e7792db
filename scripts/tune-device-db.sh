#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds a tuned database for the device this runs on from a database of a sibling device (one
# that shares its profile) and a workload, every entry measured here on the default clock:
#   1. `gemmtune bench`: every entry of each BASE database re-measured on this device (so the
#      sibling's configurations compete on this device's figures, not on the sibling's);
#   2. `gemmtune db merge`: the re-measured entries merged, fastest per problem;
#   3. `gemmtune search --workload`: the workload searched into that database (an entry is
#      replaced only by a faster one, so a shape of the base keeps the better of the two);
#   4. `gemmtune report` of the result.
# Usage: scripts/tune-device-db.sh OUTPUT_FOLDER BASE_DB[,BASE_DB...] WORKLOAD SECONDS [SEARCH ARGS...]
#   GEMMTUNE (default build/gemmtune) and SEARCH_TIMEOUT (seconds after which the search is sent
#   SIGTERM: it stops as on Ctrl-C, keeping every shape it measured) from the environment. Writes OUTPUT_FOLDER/db.json, the
#   search's folder OUTPUT_FOLDER/search, the report, each step's log and steps.txt (each step's
#   exit status).
set -u
out=${1:?usage: tune-device-db.sh OUTPUT_FOLDER BASE_DB[,BASE_DB...] WORKLOAD SECONDS [SEARCH ARGS...]}
bases=${2:?missing BASE_DB}
workload=${3:?missing WORKLOAD}
seconds=${4:?missing SECONDS}
shift 4
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gemmtune=${GEMMTUNE:-$root/build/gemmtune}
[[ -r $workload ]] || { echo "tune-device-db: cannot read workload $workload" >&2; exit 2; }
mkdir -p "$out"
: >"$out/steps.txt"
step() {
  local name=$1
  shift
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc" >>"$out/steps.txt"
  return $rc
}

IFS=, read -r -a base_dbs <<<"$bases"
i=0
for base in "${base_dbs[@]}"; do
  i=$((i + 1))
  step "bench-$i" "$gemmtune" bench "$base" -o "$out/bench-$i.json" || exit 1
  step "merge-$i" "$gemmtune" db merge "$out/db.json" "$out/bench-$i.json" || exit 1
done
stop=()
[[ -n ${SEARCH_TIMEOUT:-} ]] && stop=(timeout --signal=TERM --kill-after=60 "$SEARCH_TIMEOUT")
step search "${stop[@]}" "$gemmtune" search --workload "$workload" --time-budget "$seconds" \
  --db "$out/db.json" --out "$out/search" "$@"
step report "$gemmtune" report "$out/db.json" -o "$out"
cat "$out/steps.txt"
