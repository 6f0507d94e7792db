#!/usr/bin/env bash
# From a fresh clone to a tuned database: installs missing dependencies, builds gemmtune
# (Release), then tunes one GEMM shape on the default device (first GPU, else first CPU) with a
# small budget, and says where the database and the report were written.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
gemmtune="${GEMMTUNE_BUILD_DIR:-$root/build}/gemmtune"
out_dir="${GEMMTUNE_QUICKSTART_DIR:-$root/results/quickstart}"
mkdir -p "$out_dir"
"$gemmtune" devices
"$gemmtune" search --shapes "${GEMMTUNE_QUICKSTART_SHAPE:-256x256x256}" --strategy bayes \
  --max-evals "${GEMMTUNE_QUICKSTART_EVALS:-24}" --seed 1 \
  --output "$out_dir/search.json" --journal "$out_dir/journal.jsonl" --db "$out_dir/tuned.json"
echo
echo "Tuned database:               $out_dir/tuned.json"
echo "Bottleneck report:            $out_dir/tuned-report.md (and .json)"
echo "Best configuration per shape: $out_dir/search.json"
echo "Every evaluation (journal):   $out_dir/journal.jsonl"
