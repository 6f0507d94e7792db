#!/usr/bin/env python3
# Writes variants-3.json: cuBLAS's decomposition of 1000³ and its mirror (64x128 and 128x64
# tiles, 128 work-items, no split) with a K tile of 8 or 16, over the 30 variants of the served
# configuration in variants-1.json (written by scripts/entry-variants.py with --vary ASYNC=0,1
# --vary STAGES=1,2,3,4 --vary GLV=1,2,4 --vary BKM=0,1); the template's refusals left out.
# Usage: make-variants.py GEMMTUNE DATABASE VARIANTS-1.json OUT.json
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "scripts"))
from space_file import refusal, write_space  # noqa: E402

gemmtune, database, base_file, out = sys.argv[1:5]
base = [e["parameters"] for e in json.load(open(base_file))["entries"]]
kept, seen = [], set()
for p in base:
    for mwg, nwg, mdimc, ndimc in ((64, 128, 8, 16), (128, 64, 16, 8)):
        for kwg in (8, 16):
            q = dict(p, MWG=mwg, NWG=nwg, MDIMC=mdimc, NDIMC=ndimc, SPLITK=1, KWG=kwg, KWI=kwg)
            key = tuple(sorted(q.items()))
            if key in seen or refusal(gemmtune, "xgemm_fast", q):
                continue
            seen.add(key)
            kept.append(q)
write_space(out, json.load(open(database)), "xgemm_fast", kept, "variants")
print(f"{len(kept)} configurations")
