#!/usr/bin/env bash
# Memory-bound shapes, step 1: the memory suite with the checked-in H100 database as it was (the
# skinny kernel without split-K), then an xgemm_skinny search of each memory-bound shape into the
# database (45 s each, from the database's entries), then the memory suite again.
# Usage, from the repository root: results/h100/memory/run-search.sh OUTPUT_FOLDER
set -u
G=${GEMMTUNE:-build/gemmtune}; W=${1:?usage: run-search.sh OUTPUT_FOLDER}; mkdir -p "$W"
DB=results/nvidia-h100-80gb-hbm3.json
: > "$W/steps.txt"
$G bench-suite --db $DB --suite memory --reps 10 --warmup 2 --no-clblast \
  -o "$W/memory-before.md" > "$W/memory-before.log" 2>&1
echo "memory suite before rc=$?" >> "$W/steps.txt"
for s in 1x4096x4096 1x8192x8192 8x4096x4096 16x8192x8192 4096x1x4096 8192x1x8192 4096x8x4096 \
         8192x16x8192; do
  $G search --kernel xgemm_skinny -s $s --time-budget 45 --db $DB --out "$W/search-$s" \
    >> "$W/search.log" 2>&1
  echo "search $s rc=$?" >> "$W/steps.txt"
done
$G bench-suite --db $DB --suite memory --reps 10 --warmup 2 --no-clblast \
  -o "$W/memory-after.md" > "$W/memory-after.log" 2>&1
echo "memory suite after rc=$?" >> "$W/steps.txt"
cat "$W/steps.txt"
