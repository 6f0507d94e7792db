#!/usr/bin/env bash
# Does compiling the orchestrating layers at -Og change what a user or an application gets on a
# GPU? bench-suite from two builds of one commit, alternated: the default Release build
# (orchestrating layers at -Og) and one configured with -DGEMMTUNE_ORCHESTRATION_OPT= (every layer
# at -O3). Small random shapes, where host code weighs most in a call; no CLBlast (not compared).
# Usage, from the repository root: results/h100/opt-levels/run.sh OUT GEMMTUNE_OG GEMMTUNE_O3
set -u
W=${1:?usage: run.sh OUT GEMMTUNE_OG GEMMTUNE_O3}; OG=${2:?}; O3=${3:?}
mkdir -p "$W"
DB=results/nvidia-h100-80gb-hbm3.json
# Four rounds; the build that goes first alternates, so that neither always meets a colder GPU.
for round in 1 2 3 4; do
  order="og o3"; [ $((round % 2)) = 0 ] && order="o3 og"
  for v in $order; do
    bin=$OG; [ "$v" = o3 ] && bin=$O3
    "$bin" bench-suite --db $DB --random-shapes 24 --seed 1 --min-dim 16 --max-dim 1024 \
      --reps 20 --warmup 3 --no-clblast -o "$W/$v-$round.md" --save-json "$W/$v-$round.json" \
      > "$W/$v-$round.log" 2>&1
    echo "$v round $round rc=$?" >> "$W/steps.txt"
  done
done
python3 results/h100/opt-levels/compare.py "$W" > "$W/compare.txt" 2>&1
echo "compare rc=$?" >> "$W/steps.txt"
