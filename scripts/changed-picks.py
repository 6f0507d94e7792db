#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the shapes whose pick two databases (or profiles) disagree on, as two entry databases to A/B.

For each shape of SHAPES (MxNxK a line; '#' comments; row-major NN, FP32, one GEMM),
`gemmtune db lookup` runs against OLD and NEW. Where the two picks differ (kernel or
configuration), the shape goes into OUTPUT/old.json with OLD's pick and into OUTPUT/new.json with
NEW's, so that

    scripts/ab-bench.py OUT OUTPUT/old.json OUTPUT/new.json

measures what changing the database changes where it changes anything. With --devices-old and
--devices-new (folders of device profiles), the two lookups read their own profiles: OLD and NEW
may then be one database, to measure what a change of the selection policy changes.
OUTPUT/changed.txt lists those shapes with both picks. The device block comes from OLD.

Usage: changed-picks.py OLD NEW SHAPES OUTPUT [--devices-old DIR] [--devices-new DIR]
  GEMMTUNE (default build/gemmtune) from the environment.
"""
import argparse
import json
import os
import subprocess
import sys

from space_file import read_database, write_atomically, write_entries

SCRIPT = "changed-picks.py"


def read_shapes(path):
    shapes = []
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                text = line.split("#")[0].strip()
                if not text:
                    continue
                try:
                    m, n, k = (int(v) for v in text.split()[0].split("x"))
                except ValueError:
                    sys.exit(f"{SCRIPT}: {path} line {number}: expected MxNxK, got '{text}'")
                shapes.append((m, n, k))
    except OSError as e:
        sys.exit(f"{SCRIPT}: cannot read shapes from '{path}': {e}")
    return shapes


def pick(gemmtune, db, shape, devices):
    m, n, k = shape
    profiles = ["--devices", devices] if devices else []
    out = subprocess.run([gemmtune] + profiles + ["db", "lookup", db, "-m", str(m), "-n", str(n),
                                                  "-k", str(k), "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        sys.exit(f"{SCRIPT}: gemmtune db lookup {db} at {m}x{n}x{k} failed: {last}")
    choice = json.loads(out.stdout)
    return choice["kernel"], choice["parameters"]


def entry(shape, choice):
    m, n, k = shape
    kernel, parameters = choice
    return {"key": {"kernel": kernel, "precision": "32", "layout": "NN", "order": "row",
                    "batch": 1, "m": m, "n": n, "k": k},
            "parameters": parameters, "status": "ok", "gflops": 1.0, "alpha": 1.0, "beta": 0.0}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("shapes")
    p.add_argument("output")
    p.add_argument("--devices-old", help="folder of device profiles for OLD's lookups")
    p.add_argument("--devices-new", help="folder of device profiles for NEW's lookups")
    args = p.parse_args()
    gemmtune = os.environ.get("GEMMTUNE", "build/gemmtune")
    source = read_database(args.old, SCRIPT)
    read_database(args.new, SCRIPT)
    olds, news, lines = [], [], []
    for shape in read_shapes(args.shapes):
        before = pick(gemmtune, args.old, shape, args.devices_old)
        after = pick(gemmtune, args.new, shape, args.devices_new)
        if before == after:
            continue
        olds.append(entry(shape, before))
        news.append(entry(shape, after))
        lines.append("{}x{}x{}\t{} {}\t{} {}".format(*shape, before[0], json.dumps(before[1]),
                                                    after[0], json.dumps(after[1])))
    os.makedirs(args.output, exist_ok=True)
    write_entries(os.path.join(args.output, "old.json"), source, olds)
    write_entries(os.path.join(args.output, "new.json"), source, news)
    write_atomically(os.path.join(args.output, "changed.txt"), "".join(l + "\n" for l in lines))
    print(f"{SCRIPT}: {len(olds)} of the shapes picked differently")


if __name__ == "__main__":
    main()
