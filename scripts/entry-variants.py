#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a space of configurations around the configurations a database serves some shapes.

For shape number I of SHAPES, the configuration `gemmtune db lookup` picks there is varied in
the named parameters (every combination of the values given), and the variants are written to
OUTPUT_FOLDER/variants-I.json (the database format) with the shape in workload-I.txt, for

    gemmtune search --space-from variants-I.json --strategy exhaustive --workload workload-I.txt

which measures exactly those configurations at that shape. A variant the template's constraints
refuse is left out and counted (`gemmtune space --check`); a name the kernel has no parameter of,
or a value outside a parameter's values, is an error. The entries are no measurements
(scripts/space_file.py): the space "variants".

Usage: entry-variants.py DATABASE OUTPUT_FOLDER SHAPES --vary PARAM=V1,V2 [--vary ...]
  SHAPES: MxNxK comma-separated; GEMMTUNE (default build/gemmtune) from the environment.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys

from space_file import NOT_IN_KERNEL, refusal, write_atomically, write_space


def parse_vary(text):
    name, _, values = text.partition("=")
    if not name or not values:
        raise argparse.ArgumentTypeError(f"--vary wants PARAM=V1,V2, got '{text}'")
    try:
        return name, [int(v) for v in values.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--vary {name}: values must be integers, got '{values}'")


def parse_shape(text):
    try:
        m, n, k = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"entry-variants: '{text}' is not a shape MxNxK")
    return m, n, k


def lookup(gemmtune, db, shape):
    m, n, k = shape
    out = subprocess.run([gemmtune, "db", "lookup", db, "-m", str(m), "-n", str(n), "-k", str(k),
                          "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"entry-variants: db lookup at {m}x{n}x{k} failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("database")
    ap.add_argument("output")
    ap.add_argument("shapes")
    ap.add_argument("--vary", type=parse_vary, action="append", required=True)
    args = ap.parse_args()
    gemmtune = os.environ.get("GEMMTUNE", "build/gemmtune")
    shapes = [parse_shape(s) for s in args.shapes.split(",") if s]
    names = [name for name, _ in args.vary]
    with open(args.database) as f:
        source = json.load(f)
    os.makedirs(args.output, exist_ok=True)
    total = 0
    left_out = 0
    for index, shape in enumerate(shapes):
        choice = lookup(gemmtune, args.database, shape)
        variants, seen = [], []
        for values in itertools.product(*(v for _, v in args.vary)):
            params = dict(choice["parameters"])
            params.update(zip(names, values))
            if params in seen:
                continue
            seen.append(params)
            reason = refusal(gemmtune, choice["kernel"], params)
            if reason is None:
                variants.append(params)
            elif any(words in reason for words in NOT_IN_KERNEL):
                raise SystemExit(f"entry-variants: --vary: {reason.split(': ')[-1]}")
            else:
                left_out += 1
        write_space(os.path.join(args.output, f"variants-{index}.json"), source, choice["kernel"],
                    variants, "variants")
        m, n, k = shape
        write_atomically(os.path.join(args.output, f"workload-{index}.txt"), f"{m}x{n}x{k} 1\n")
        total += len(variants)
    print(f"entry-variants: {total} configurations at {len(shapes)} shapes, {left_out} left out by "
          "the template's constraints", file=sys.stderr)

if __name__ == "__main__":
    main()
