#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How xgemm_fast's producer-row form compares with the same configuration without it, by the
work-groups its launch gives each compute unit.

FIGURES is a file of producer-row figures (results/h200/producer-rows/grid-figures.json.gz: sets
of configurations, each with [m, n, k, GFLOPS, ...] at row-major NN shapes). For each figure,
the configuration without producer rows (WSP, and the PREFETCH, STAGES and ASYNC the producers
replace, left out of the match; PREFETCH 1 as the database's configurations have it) is looked up
among DATABASE's cross-measurements (`measurements`) at the same shape, and the ratio producer
GFLOPS / plain GFLOPS binned by work-groups per compute unit (ceil(N/MWG) * ceil(M/NWG) *
SPLITK over --compute-units, the kernel's column-major view of a row-major problem). Prints per set
and bin: the figures, their geometric mean, the smallest ratio, and how many are more than 3%
faster or slower.

Usage: producer-rows-bins.py DATABASE FIGURES [--compute-units 132] [--bins 1,2,3]
"""
import argparse
import gzip
import json
import math
import sys

SCRIPT = "producer-rows-bins.py"
REPLACED = ("WSP", "PREFETCH", "STAGES", "ASYNC")  # what the producer form sets
MARGIN = 0.03  # "faster" and "slower" beyond this share


def read(path, what):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{SCRIPT}: cannot read {what} from '{path}': {e}")


def identity(parameters):
    return json.dumps({k: v for k, v in parameters.items() if k not in REPLACED}, sort_keys=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("database")
    p.add_argument("figures")
    p.add_argument("--compute-units", type=int, default=132)
    p.add_argument("--bins", default="1,2,3", help="upper edges of the bins of work-groups a unit")
    args = p.parse_args()
    try:
        edges = [float(v) for v in args.bins.split(",")] + [math.inf]
    except ValueError:
        sys.exit(f"{SCRIPT}: --bins wants numbers separated by commas, got '{args.bins}'")
    db = read(args.database, "a database")
    figures = read(args.figures, "producer-row figures")
    plain = {}
    for c in db.get("measurements", []):
        if c["parameters"].get("PREFETCH", 1) != 1:
            continue
        at = plain.setdefault(identity(c["parameters"]), {})
        for m, n, k, gflops in c["gflops"]:
            at[(m, n, k)] = max(at.get((m, n, k), 0), gflops)
    print("| set | work-groups a unit | figures | producer / plain, geometric mean | smallest | "
          f"faster by > {MARGIN:.0%} | slower by > {MARGIN:.0%} |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for figure_set in figures["sets"]:
        binned = [[] for _ in edges]
        for conf in figure_set["configurations"]:
            params = conf["parameters"]
            base = plain.get(identity(params))
            if not base:
                continue
            for m, n, k, gflops, *_ in conf["figures"]:
                if (m, n, k) not in base:
                    continue
                groups = (math.ceil(n / params["MWG"]) * math.ceil(m / params["NWG"]) *
                          params.get("SPLITK", 1))
                per_unit = groups / args.compute_units
                slot = next(i for i, edge in enumerate(edges) if per_unit <= edge)
                binned[slot].append(gflops / base[(m, n, k)])
        low = 0
        for edge, ratios in zip(edges, binned):
            label = f"{low:g} - {edge:g}" if edge != math.inf else f"over {low:g}"
            low = edge
            if not ratios:
                continue
            mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            print(f"| {figure_set['name']} | {label} | {len(ratios)} | {mean:.3f} | "
                  f"{min(ratios):.3f} | {sum(r > 1 + MARGIN for r in ratios)} | "
                  f"{sum(r < 1 - MARGIN for r in ratios)} |")


if __name__ == "__main__":
    main()
