"""Compares the -Og and -O3 builds' bench-suite runs (run.sh): per column, the geometric mean over
the rows of og/o3 GFLOPS (wall-clock 'gflops' and device-time 'kernel_gflops'), per round and over
all of them, and whether every row ran the same configuration in both builds."""
import json
import math
import sys
from pathlib import Path

out = Path(sys.argv[1])
ROUNDS = sorted(int(p.stem.split("-")[1]) for p in out.glob("og-*.json"))
runs = {(v, r): json.loads((out / f"{v}-{r}.json").read_text()) for v in ("og", "o3") for r in ROUNDS}


def key(row):
    s = row["shape"]
    return (s["m"], s["n"], s["k"])


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


for column in ("gemmtune", "library"):
    for field in ("gflops", "kernel_gflops"):
        ratios_all = []
        for r in ROUNDS:
            og = {key(row): row for row in runs[("og", r)]["rows"]}
            o3 = {key(row): row for row in runs[("o3", r)]["rows"]}
            ratios = [og[k][column][field] / o3[k][column][field] for k in og
                      if k in o3 and og[k][column].get(field) and o3[k][column].get(field)]
            if not ratios:  # the library column times the call only (kernel_gflops 0)
                continue
            ratios_all += ratios
            print(f"{column:9s} {field:14s} round {r}: og/o3 geomean {geomean(ratios):.3f} "
                  f"over {len(ratios)} rows (min {min(ratios):.3f}, max {max(ratios):.3f})")
        if ratios_all:
            print(f"{column:9s} {field:14s} all rounds: og/o3 geomean {geomean(ratios_all):.3f}")

same = 0
total = 0
for r in ROUNDS:
    og = {key(row): row for row in runs[("og", r)]["rows"]}
    o3 = {key(row): row for row in runs[("o3", r)]["rows"]}
    for k in og:
        total += 1
        same += og[k].get("library_choice") == o3.get(k, {}).get("library_choice")
print(f"same library choice in both builds: {same} of {total} rows")
