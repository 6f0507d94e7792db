#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a space of configurations around the configurations a database serves some shapes.

For shape number I of SHAPES, the configuration `gemmtune db lookup` picks there is varied in
the named parameters (every combination of the values given), and the variants are written to
OUTPUT_FOLDER/variants-I.json (the database format) with the shape in workload-I.txt, for

    gemmtune search --space-from variants-I.json --strategy exhaustive --workload workload-I.txt

which measures exactly those configurations at that shape (the template's constraints drop the
invalid ones). The entries are no measurements: a database holds one entry per shape, so variant
J stands at the placeholder shape 1x1xJ, with 1 GFLOPS (the format wants a positive rate) and
the space "variants".

Usage: entry-variants.py DATABASE OUTPUT_FOLDER SHAPES --vary PARAM=V1,V2 [--vary ...]
  SHAPES: MxNxK comma-separated; GEMMTUNE (default build/gemmtune) from the environment.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
from datetime import datetime, timezone


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


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


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
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(args.database) as f:
        source = json.load(f)
    os.makedirs(args.output, exist_ok=True)
    total = 0
    for index, shape in enumerate(shapes):
        choice = lookup(gemmtune, args.database, shape)
        variants = []
        for values in itertools.product(*(v for _, v in args.vary)):
            params = dict(choice["parameters"])
            params.update(zip(names, values))
            if params not in variants:
                variants.append(params)
        entries = [{
            "key": {"kernel": choice["kernel"], "precision": "32", "layout": "NN",
                    "order": "row", "batch": 1, "m": 1, "n": 1, "k": j + 1},
            "parameters": params, "gflops": 1.0, "max_error": 0.0, "alpha": 1.0, "beta": 0.0,
            "found": {"space": "variants", "strategy": "variants", "evaluations": 0, "seed": 0,
                      "date": date, "gemmtune_version": "0.1.0"}} for j, params in enumerate(variants)]
        # The source's format, device and metadata; entries of its own, no measurements.
        db = {key: source[key] for key in ("format", "schema_version", "device", "metadata")}
        db["entries"] = entries
        write_atomically(os.path.join(args.output, f"variants-{index}.json"), json.dumps(db, indent=1))
        m, n, k = shape
        write_atomically(os.path.join(args.output, f"workload-{index}.txt"), f"{m}x{n}x{k} 1\n")
        total += len(entries)
    print(f"entry-variants: {total} configurations at {len(shapes)} shapes", file=sys.stderr)

if __name__ == "__main__":
    main()
