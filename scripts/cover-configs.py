#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the configurations of databases that cover the shapes they measured them at.

Each database's cross-measurements (`measurements`: configurations measured at many shapes) are
read; a configuration covers a shape where it ran within WITHIN of the fastest measured there.
Configurations are taken greedily, each the one that covers the most shapes not yet covered,
until every shape is covered; then, up to COUNT, those within WITHIN at the most shapes. With
several databases (another device's too) each is covered on its own and the configurations are
pooled, under the first database's device. The result is a file in the database format for

    gemmtune search --space-from COVER --strategy exhaustive --workload NEW_SHAPES ...

which measures those configurations at new shapes, for the chooser to compare them there. The
entries are no measurements (scripts/space_file.py): the space "cover".

Usage: cover-configs.py OUTPUT DATABASE [DATABASE...] [--within 0.03] [--count 48]
  [--kernel xgemm_fast]  (COUNT per database)
"""
import argparse
import json
import sys
from collections import defaultdict

from space_file import write_space


def cover(source, kernel, within, count):
    """The covering configurations of one database, and how many it took to cover every shape."""
    configs = []  # parameters, one per measured configuration of the kernel
    at_shape = defaultdict(dict)  # shape -> configuration index -> GFLOPS
    for m in source.get("measurements", []):
        if m["key"]["kernel"] != kernel:
            continue
        configs.append(m["parameters"])
        for mm, nn, kk, gflops in m["gflops"]:
            at_shape[(mm, nn, kk)][len(configs) - 1] = gflops
    covers = defaultdict(set)  # configuration index -> shapes it covers
    for shape, figures in at_shape.items():
        fastest = max(figures.values())
        for c, g in figures.items():
            if g >= (1 - within) * fastest:
                covers[c].add(shape)
    chosen, uncovered = [], set(at_shape)
    while uncovered:
        best = max(range(len(configs)), key=lambda c: (len(covers[c] & uncovered), -c))
        chosen.append(best)
        uncovered -= covers[best]
    needed = len(chosen)
    for c in sorted(range(len(configs)), key=lambda c: (-len(covers[c]), c)):
        if len(chosen) >= count:
            break
        if c not in chosen:
            chosen.append(c)
    return [configs[c] for c in chosen], needed, len(configs), len(at_shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output")
    ap.add_argument("databases", nargs="+")
    ap.add_argument("--within", type=float, default=0.03)
    ap.add_argument("--count", type=int, default=48)
    ap.add_argument("--kernel", default="xgemm_fast")
    args = ap.parse_args()
    pooled, first = [], None
    for path in args.databases:
        with open(path) as f:
            source = json.load(f)
        first = first or source
        chosen, needed, total, shapes = cover(source, args.kernel, args.within, args.count)
        if not total:
            raise SystemExit(f"cover-configs: {path} has no measurements of {args.kernel}")
        pooled += [c for c in chosen if c not in pooled]
        print(f"cover-configs: {path}: {len(chosen)} of {total} configurations ({needed} cover "
              f"all {shapes} shapes within {args.within:g})", file=sys.stderr)
    write_space(args.output, first, args.kernel, pooled, "cover")
    print(f"cover-configs: {len(pooled)} configurations in {args.output}", file=sys.stderr)

if __name__ == "__main__":
    main()
