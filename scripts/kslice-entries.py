#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a database's FP32 xgemm_fast entries with K slices, as a database of their own.

Takes the entries of DATABASE that K slices can apply to (xgemm_fast, FP32, one GEMM a call,
measured ok, through local memory, no in-kernel split-K reduction), optionally only those whose
work-group tile has at most --max-tile outputs, sets KSL (and KWG, KWI where given; KWI is lowered
to KWG/KSL where larger, so that each slice keeps a whole unrolled share of the K tile), and writes
them to OUTPUT with the database's device and no measurements, for

    gemmtune bench OUTPUT -o MEASURED.json

which measures and verifies every entry in one process on the GPU clock. Written for --ksl 1 too,
the outputs compare each configuration with and without slices. A configuration the template's
constraints refuse (`gemmtune space --check`), or whose work-group would exceed --max-work-group
work-items, is left out and counted.

Usage: kslice-entries.py DATABASE OUTPUT [--ksl 2] [--kwg 16] [--kwi 8] [--max-tile 4096]
           [--max-work-group 512]    GEMMTUNE (default build/gemmtune) from the environment.
"""
import argparse
import json
import os
import sys

from space_file import read_database, refusal, write_entries

KERNEL = "xgemm_fast"


def refused(gemmtune, params):
    return refusal(gemmtune, KERNEL, params) is not None


def template_defaults():
    """The template's parameter defaults: what an entry that omits a parameter runs with."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "kernel_templates", KERNEL + ".json")) as f:
        return {p["name"]: p["default"] for p in json.load(f)["parameters"]}


def applies(entry, full, max_tile):
    """Whether slices can apply to `entry`, whose parameters completed with the defaults are
    `full`."""
    k = entry["key"]
    return (k["kernel"] == KERNEL and k["precision"] == "32" and k.get("batch", 1) == 1
            and entry.get("status") == "ok" and full["LDS"] == 1 and full["DOT2"] == 0
            and full["KREDUCE"] == 0
            and (max_tile is None or full["MWG"] * full["NWG"] <= max_tile))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("database")
    ap.add_argument("output")
    ap.add_argument("--ksl", type=int, choices=[1, 2, 4], default=2, help="the K slices written")
    ap.add_argument("--kwg", type=int, help="the K tile written (default: each entry's)")
    ap.add_argument("--kwi", type=int, help="the unroll written (default: each entry's)")
    ap.add_argument("--max-tile", type=int, help="only entries of at most this many outputs a tile")
    ap.add_argument("--max-work-group", type=int, default=512,
                    help="leave out configurations of more work-items a work-group")
    a = ap.parse_args()
    gemmtune = os.environ.get("GEMMTUNE", "build/gemmtune")
    db = read_database(a.database, "kslice-entries.py")
    entries = db["entries"]
    defaults = template_defaults()
    taken, left_out = [], 0
    for e in entries:
        full = dict(defaults, **e["parameters"])
        if not applies(e, full, a.max_tile):
            continue
        p = dict(e["parameters"])
        p["KSL"] = a.ksl
        if a.kwg:
            p["KWG"] = a.kwg
        kwg = p.get("KWG", full["KWG"])
        p["KWI"] = min(a.kwi or full["KWI"], max(1, kwg // a.ksl))
        threads = full["MDIMC"] * full["NDIMC"] * a.ksl
        if threads > a.max_work_group or refused(gemmtune, p):
            left_out += 1
            continue
        taken.append(dict(e, parameters=p))
    if not taken:
        sys.exit(f"kslice-entries.py: no entry of '{a.database}' takes KSL={a.ksl} "
                 f"({left_out} left out)")
    write_entries(a.output, db, taken)
    print(f"{a.output}: {len(taken)} entries with KSL={a.ksl}, {left_out} left out")


if __name__ == "__main__":
    main()
