#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the configurations a bench-suite run served, each at its row's shape, as a database.

Every row of the SUITE files (`gemmtune bench-suite --save-json`, plain or gzipped) that is one
GEMM without an epilogue becomes an entry. The entry has the row's shape and precision, row-major
NN (bench-suite's layout), and the configuration the row was served (its `chosen`), with each
--set applied. With --split-k, only rows served with SPLITK above 1 are taken; with --kernel,
only rows served by that kernel (so that --set can name a parameter only it has). A shape that
several rows share is written once, from its first row. Where --set makes a configuration that
the template's constraints refuse (`gemmtune space --check`), the row is left out and counted. A
name or value that the kernel does not have at all is an error. The device block comes from
DATABASE, by default the first database the first suite file names. Then

    gemmtune [--templates DIR] bench OUTPUT -o MEASURED.json

measures and verifies each served configuration at its shape. Written twice (with and without a
--set), or used under two template sets, scripts/ab-bench.py compares the two row by row.

Usage: served-entries.py OUTPUT SUITE [SUITE ...] [--database DB] [--set NAME=V ...] [--split-k]
                         [--kernel NAME]
  GEMMTUNE (default build/gemmtune) from the environment.
"""
import argparse
import os
import sys

from space_file import (assigned, bench_entry, name_value, read_database, read_json_with,
                        write_entries)

SCRIPT = "served-entries.py"


def served_rows(suites, split_k, kernel):
    """(shape key, precision, kernel, parameters) of each one-GEMM row without an epilogue, once
    a shape."""
    seen = set()
    for suite in suites:
        for row in suite["rows"]:
            chosen = row.get("chosen") or {}
            params = chosen.get("parameters")
            if row.get("batch", 1) != 1 or row.get("epilogue") or not params or not chosen.get(
                    "kernel"):
                continue
            if split_k and params.get("SPLITK", 1) <= 1:
                continue
            if kernel and chosen["kernel"] != kernel:
                continue
            s = row["shape"]
            key = (s["m"], s["n"], s["k"], row["precision"])
            if key in seen:
                continue
            seen.add(key)
            yield key, chosen["kernel"], dict(params)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output")
    ap.add_argument("suites", nargs="+")
    ap.add_argument("--database", help="the database whose device block the output takes")
    ap.add_argument("--set", type=name_value, action="append", default=[], dest="sets",
                    help="NAME=V set in every configuration (repeatable)")
    ap.add_argument("--split-k", action="store_true", help="only rows served with SPLITK > 1")
    ap.add_argument("--kernel", help="only rows served by this kernel")
    args = ap.parse_args()
    gemmtune = os.environ.get("GEMMTUNE", "build/gemmtune")
    suites = [read_json_with(p, SCRIPT, "a bench-suite result", "rows") for p in args.suites]
    database = args.database or next(iter(suites[0].get("databases") or []), None)
    if not database:
        sys.exit(f"{SCRIPT}: '{args.suites[0]}' names no database: give --database")
    db = read_database(database, SCRIPT)
    entries, left_out = [], 0
    for (m, n, k, precision), kernel, params in served_rows(suites, args.split_k, args.kernel):
        params = assigned(gemmtune, kernel, params, args.sets, SCRIPT, "--set")
        if params is None:
            left_out += 1
            continue
        entries.append(bench_entry(kernel, precision, m, n, k, params))
    if not entries:
        sys.exit(f"{SCRIPT}: no served row to write ({left_out} refused by the template)")
    write_entries(args.output, db, entries)
    print(f"{args.output}: {len(entries)} entries, {left_out} left out by the template's "
          "constraints")


if __name__ == "__main__":
    main()
