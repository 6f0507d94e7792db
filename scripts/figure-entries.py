#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes configurations measured at grid shapes, each at one of its shapes, as a database.

FIGURES is a file of figures (results/h200/producer-rows/grid-figures.json.gz: sets of
xgemm_fast configurations, each with [m, n, k, GFLOPS, median µs] at row-major NN FP32 shapes).
From the set --set-name, every configuration whose parameters match each --where NAME=V is taken
at the shapes where its launch gives each compute unit at most --max-groups-per-cu work-groups
(ceil(N/MWG) * ceil(M/NWG) * SPLITK over --compute-units, the kernel's column-major view of a
row-major problem), where a work-group multiplies at least --min-k-tiles K tiles, and where the
figure took at least --min-us. Those are the shapes where a chooser rule of those bounds serves
the configuration (sm_90's producer-row rule: 2 work-groups a unit, 4 K tiles). Each shape is
written once, with one of its configurations, and --sample shapes are drawn (all if 0), both with
--seed. Each --assign NAME=V is set in every configuration, and the template's constraints
(`gemmtune space --check`) must take the result: a shape whose drawn configuration they refuse is
left out and counted. The device block comes from DATABASE. Written with and without an
--assign, the two files are what scripts/ab-bench.py compares row by row.

Usage: figure-entries.py OUTPUT FIGURES DATABASE --set-name NAME [--where NAME=V ...]
                         [--assign NAME=V ...] [--max-groups-per-cu 2] [--min-k-tiles 4]
                         [--min-us 4] [--compute-units 132] [--sample 0] [--seed 7]
  GEMMTUNE (default build/gemmtune) from the environment.
"""
import argparse
import math
import os
import random
import sys

from space_file import (assigned, bench_entry, name_value, read_database, read_json_with,
                        write_entries)

SCRIPT = "figure-entries.py"
KERNEL = "xgemm_fast"


def served_shapes(config, args):
    """The [m, n, k] of `config`'s figures where the bounds serve it."""
    p = config["parameters"]
    split = max(p.get("SPLITK", 1), 1)
    for m, n, k, _gflops, us in config["figures"]:
        groups = math.ceil(n / p["MWG"]) * math.ceil(m / p["NWG"]) * split
        k_tiles = math.ceil(math.ceil(k / split) / p["KWG"])
        if (groups / args.compute_units <= args.max_groups_per_cu and
                k_tiles >= args.min_k_tiles and us >= args.min_us):
            yield m, n, k


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output")
    ap.add_argument("figures")
    ap.add_argument("database", help="the database whose device block the output takes")
    ap.add_argument("--set-name", required=True)
    ap.add_argument("--where", type=name_value, action="append", default=[])
    ap.add_argument("--assign", type=name_value, action="append", default=[])
    ap.add_argument("--max-groups-per-cu", type=float, default=2.0)
    ap.add_argument("--min-k-tiles", type=int, default=4)
    ap.add_argument("--min-us", type=float, default=4.0)
    ap.add_argument("--compute-units", type=int, default=132)
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    if args.compute_units < 1 or args.sample < 0:
        sys.exit(f"{SCRIPT}: --compute-units must be positive and --sample not negative")
    gemmtune = os.environ.get("GEMMTUNE", "build/gemmtune")
    figures = read_json_with(args.figures, SCRIPT, "figures", "sets")
    sets = {s.get("name"): s for s in figures["sets"]}
    if args.set_name not in sets:
        sys.exit(f"{SCRIPT}: no set '{args.set_name}' in '{args.figures}' "
                 f"(it has: {', '.join(sorted(map(str, sets)))})")
    db = read_database(args.database, SCRIPT)
    by_shape = {}
    for config in sets[args.set_name]["configurations"]:
        p = config["parameters"]
        if all(p.get(name) == value for name, value in args.where):
            for shape in served_shapes(config, args):
                by_shape.setdefault(shape, []).append(p)
    rng = random.Random(args.seed)
    shapes = sorted(by_shape)
    rng.shuffle(shapes)
    if args.sample:
        shapes = shapes[:args.sample]
    entries, left_out = [], 0
    for m, n, k in sorted(shapes):
        params = assigned(gemmtune, KERNEL, rng.choice(by_shape[(m, n, k)]), args.assign, SCRIPT,
                          "--assign")
        if params is None:
            left_out += 1
            continue
        entries.append(bench_entry(KERNEL, "32", m, n, k, params))
    if not entries:
        sys.exit(f"{SCRIPT}: no shape to write ({left_out} refused by the template)")
    write_entries(args.output, db, entries)
    print(f"{args.output}: {len(entries)} entries of {len(by_shape)} shapes served, {left_out} "
          "left out by the template's constraints")


if __name__ == "__main__":
    main()
