#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Teaches a database a set of shapes: the default search over a workload finds each shape's best
# configuration, then every configuration of the database and of that search is measured at every
# shape of the workload, so that the chooser's measured step can compare them there. Each further
# CROSS workload holds shapes the database's configurations were measured at before: only the
# search's new configurations are measured there. The database itself is not changed:
# `gemmtune db merge DB DB OUTDIR/new.json` and `gemmtune db add-measurements DB
# OUTDIR/cross-*.journal.jsonl.gz` take the results in.
#
# Usage: scripts/cover-shapes.sh OUTDIR DB WORKLOAD SEARCH_SECONDS [CROSS_WORKLOAD...]
#   GEMMTUNE (default build/gemmtune), GEMMTUNE_ARGS (extra arguments of every call, e.g.
#   --templates DIR --devices DIR), SEED (default 13), SPACE (the search's --space, default the
#   device's: e.g. skinny for shapes with one small side), CROSS_SECONDS (a cross-measurement is
#   sent SIGTERM after this many seconds, default 300: it stops as on Ctrl-C, keeping what it
#   measured).
# Writes OUTDIR/new.json (the search's entries), OUTDIR/all.json (DB and new.json merged), the
# search's and each cross-measurement's folder, log and gzipped journal, and steps.txt.
set -u
out=${1:?usage: cover-shapes.sh OUTDIR DB WORKLOAD SEARCH_SECONDS [CROSS_WORKLOAD...]}
db=${2:?missing DB}
workload=${3:?missing WORKLOAD}
seconds=${4:?missing SEARCH_SECONDS}
shift 4
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gemmtune=${GEMMTUNE:-$root/build/gemmtune}
read -r -a extra <<<"${GEMMTUNE_ARGS:-}"
seed=${SEED:-13}
space_args=()
[[ -n ${SPACE:-} ]] && space_args=(--space "$SPACE")
cross_seconds=${CROSS_SECONDS:-300}
for f in "$db" "$workload" "$@"; do
  [[ -r $f ]] || { echo "cover-shapes: cannot read $f" >&2; exit 2; }
done
mkdir -p "$out"
: >"$out/steps.txt"
step() {
  local name=$1
  shift
  local start=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $((SECONDS - start)) s" >>"$out/steps.txt"
  return $rc
}
most_configs=2000 # more configurations than any database of one kernel holds
shapes() { grep -cv '^\s*\(#\|$\)' "$1"; }

step search "$gemmtune" search "${extra[@]}" --kernel xgemm_fast --workload "$workload" \
  "${space_args[@]}" --time-budget "$seconds" --seed "$seed" --db "$out/new.json" \
  --out "$out/search" || exit 1
step merge "$gemmtune" db merge "$out/all.json" "$db" "$out/new.json" || exit 1
i=0
space="$out/all.json"
for w in "$workload" "$@"; do
  i=$((i + 1))
  [[ $i -gt 1 ]] && space="$out/new.json"
  # Exhaustive over the database's configurations ends each shape; the budget only has to exceed
  # them (it is the workload's, spread by weight).
  evals=$((most_configs * $(shapes "$w")))
  step "cross-$i" timeout -s TERM "$cross_seconds" "$gemmtune" search "${extra[@]}" \
    --kernel xgemm_fast --workload "$w" --space-from "$space" --strategy exhaustive \
    --max-evals "$evals" --db "$out/cross-$i.json" --out "$out/cross-$i"
  [[ -f $out/cross-$i/search-xgemm_fast.journal.jsonl ]] &&
    gzip -c "$out/cross-$i/search-xgemm_fast.journal.jsonl" >"$out/cross-$i.journal.jsonl.gz"
done
gzip -c "$out/search/search-xgemm_fast.journal.jsonl" >"$out/search.journal.jsonl.gz"
