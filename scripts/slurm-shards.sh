#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tunes one job on many GPU nodes of a Slurm cluster: a job array runs one shard per task
# (`gemmtune search --shard I/N`, one GPU each) and a job that depends on the whole array merges
# the shards' databases (`gemmtune db merge`).
#
# Usage: scripts/slurm-shards.sh --shards N [--out DIR] [--gemmtune PATH] [--sbatch "OPTIONS"]
#                                [--dry-run] -- SEARCH_OPTIONS...
#   --shards N      number of shards (array tasks 0 to N-1)
#   --out DIR       where every shard writes (default: shards); give a folder all nodes can reach
#   --gemmtune P    the gemmtune binary (default: build/gemmtune of this checkout)
#   --sbatch OPTS   extra sbatch options for both jobs, e.g. "--partition=gpu --time=04:00:00"
#   --gpus OPTS     how each shard asks for its GPU (default: --gres=gpu:1)
#   --dry-run       print the sbatch commands instead of submitting them
# SEARCH_OPTIONS are those of `gemmtune search` (kernel, space, strategy, shapes, budget), without
# --shard, -o and --db, which this script sets. Example:
#   scripts/slurm-shards.sh --shards 8 --out /shared/tune-h100 -- \
#     --kernel xgemm_fast --space gpu --strategy exhaustive -s 4096x4096x4096
#
# DIR receives search-shard-IofN.json, its journal, db-shard-IofN.json (and its report) per
# shard, and tuned.json, the merged database (with tuned-report.md), when every shard succeeded.
# Exhaustive and random searches split each shape's space, bayes and anneal split the shapes
# (README: Tuning on many machines). A task that is requeued or run again continues its shard's
# journal, so nothing measured is lost; after a failed shard, run the same command again: finished
# shards measure nothing more, and the merge follows. All nodes must have the same GPU model and
# driver (the space depends on the device's limits, the merge refuses other hardware).
#
# Internal modes, run by Slurm: --task (one shard; SLURM_ARRAY_TASK_ID says which) and --merge.
set -euo pipefail

shards=""
out="shards"
gemmtune=""
sbatch_opts=""
gpus="--gres=gpu:1"
dry_run=0
mode="submit"
search_args=()

usage() { sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
fail() {
  echo "slurm-shards: $*" >&2
  exit 2
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --shards) shards="${2:-}"; shift 2 ;;
    --out) out="${2:-}"; shift 2 ;;
    --gemmtune) gemmtune="${2:-}"; shift 2 ;;
    --sbatch) sbatch_opts="${2:-}"; shift 2 ;;
    --gpus) gpus="${2:-}"; shift 2 ;;
    --dry-run) dry_run=1; shift ;;
    --task) mode="task"; shift ;;
    --merge) mode="merge"; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; search_args=("$@"); break ;;
    *) fail "unknown option $1 (search options go after --; see --help)" ;;
  esac
done

[[ "$shards" =~ ^[1-9][0-9]*$ ]] || fail "--shards must be a positive number, not '${shards}'"
[[ -n "$out" ]] || fail "--out needs a folder"

case "$mode" in
  task)
    # Slurm runs a copy of this script, so every path came in absolute from the submitting side.
    index="${SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}"
    journal="$out/search-shard-${index}of${shards}.journal.jsonl"
    if [[ -f "$journal" ]]; then
      # Requeued or run again: continue the shard; its journal holds the settings.
      exec "$gemmtune" search --resume "$journal"
    fi
    exec "$gemmtune" search "${search_args[@]}" --shard "$index/$shards" \
      -o "$out/search.json" --db "$out/db.json"
    ;;
  merge)
    parts=()
    for ((i = 0; i < shards; ++i)); do
      part="$out/db-shard-${i}of${shards}.json"
      # A shard whose space part held nothing better than failures writes no database.
      [[ -f "$part" ]] && parts+=("$part")
    done
    [[ ${#parts[@]} -gt 0 ]] || fail "no shard database in $out"
    "$gemmtune" db merge "$out/tuned.json" "${parts[@]}"
    exec "$gemmtune" report "$out/tuned.json" -o "$out"
    ;;
esac

# ---- submit ----
[[ ${#search_args[@]} -gt 0 ]] || fail "no search options after --"
for a in "${search_args[@]}"; do
  case "$a" in
    --shard | --shard=* | -o | --output | --output=* | --db | --db=* | --resume | --resume=*)
      fail "$a is set by this script" ;;
  esac
done
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gemmtune="${gemmtune:-$root/build/gemmtune}"
[[ -x "$gemmtune" ]] || fail "$gemmtune is not an executable (build first, or pass --gemmtune)"
# The jobs run a copy of this script elsewhere: every path they get is absolute.
out="$(realpath -ms "$out")"
gemmtune="$(realpath -s "$gemmtune")"
self="$root/scripts/slurm-shards.sh"

# shellcheck disable=SC2206  # the extra options are meant to split into words
extra=($sbatch_opts)
# shellcheck disable=SC2206
gpu=($gpus)
array_cmd=(sbatch --parsable --job-name=gemmtune-shards "--array=0-$((shards - 1))" "${gpu[@]}"
  "--output=$out/slurm-%A_%a.out" "${extra[@]}"
  "$self" --task --shards "$shards" --out "$out" --gemmtune "$gemmtune" -- "${search_args[@]}")
merge_cmd=(sbatch --parsable --job-name=gemmtune-merge "--output=$out/slurm-merge-%j.out"
  "${extra[@]}" "$self" --merge --shards "$shards" --out "$out" --gemmtune "$gemmtune")

if [[ $dry_run -eq 1 ]]; then
  printf '%q ' "${array_cmd[@]}"
  echo
  printf '%q ' "${merge_cmd[@]:0:2}" "--dependency=afterok:ARRAY_JOB_ID" "${merge_cmd[@]:2}"
  echo
  exit 0
fi
mkdir -p "$out"
array_job="$("${array_cmd[@]}")"
array_job="${array_job%%;*}"  # --parsable prints "jobid[;cluster]"
merge_job="$("${merge_cmd[@]:0:2}" "--dependency=afterok:$array_job" "${merge_cmd[@]:2}")"
echo "submitted shards as job array $array_job and the merge as job ${merge_job%%;*}"
echo "results: $out/tuned.json (per shard: $out/search-shard-IofN.json, db-shard-IofN.json)"
