#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the split-K entries of a database as a database of their own, in one launch form.

Takes the entries of DATABASE that split K (xgemm_fast, FP32, SPLITK > 1) in the launch form
--from (0: two launches, the reduce kernel; 1: one launch, the in-kernel reduction), every EVERY-th
of them in the database's order, sets KREDUCE to --to in each, and writes them to OUTPUT with the
database's device and no measurements, for

    gemmtune bench OUTPUT -o MEASURED.json

which measures and verifies every entry in one process on the GPU clock. Written for both forms,
the two outputs compare the launch forms configuration by configuration (the faster of two rounds
of each; scripts/compare-splitk-launches.sh does the same through `gemmtune run`, one process a
configuration).

Usage: splitk-entries.py DATABASE OUTPUT [--from 0] [--to 1] [--every 1]
"""
import argparse
import sys

from space_file import read_database, write_entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("database")
    ap.add_argument("output")
    ap.add_argument("--from", dest="source", type=int, choices=[0, 1], default=0,
                    help="the launch form of the entries taken (KREDUCE)")
    ap.add_argument("--to", type=int, choices=[0, 1], default=1,
                    help="the launch form written (KREDUCE)")
    ap.add_argument("--every", type=int, default=1, help="take every EVERY-th entry")
    args = ap.parse_args()
    if args.every < 1:
        sys.exit(f"splitk-entries.py: --every must be at least 1, got {args.every}")
    db = read_database(args.database, "splitk-entries.py")
    entries = db["entries"]
    taken = []
    for e in entries:
        k, p = e["key"], e["parameters"]
        if (k["kernel"] == "xgemm_fast" and k["precision"] == "32" and p.get("SPLITK", 1) > 1
                and p.get("KREDUCE", 0) == args.source and e.get("status") == "ok"):
            taken.append(e)
    taken = taken[::args.every]
    if not taken:
        sys.exit(f"splitk-entries.py: '{args.database}' has no FP32 xgemm_fast split-K entry "
                 f"with KREDUCE={args.source}")
    for e in taken:
        e["parameters"]["KREDUCE"] = args.to
    write_entries(args.output, db, taken)
    print(f"{args.output}: {len(taken)} entries, KREDUCE={args.to}")


if __name__ == "__main__":
    main()
