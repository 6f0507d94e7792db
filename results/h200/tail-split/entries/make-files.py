#!/usr/bin/env python3
# Writes the files of this page's sections 2 and 3 from the H200 database as it was before them:
#   entries/: base.json (the 33 large FP32 row-major NN xgemm_fast entries whose tiles leave a
#             partly filled last round on 132 compute units, at least 100 us, no producer rows or
#             K slices) and tTsS.json (the same with TAIL T, SPLITK S, KREDUCE 1);
#   ab/:      A.json (11 of them as stored) and B.json (with TAIL 1 and the SPLITK of section 2).
# Usage: make-files.py DATABASE OUT_FOLDER
import copy
import json
import math
import os
import sys

UNITS = 132
AB = {(724, 5793, 724): 16, (724, 5793, 2048): 16, (3320, 2284, 2078): 16, (3354, 6866, 859): 16,
      (4097, 4097, 4097): 4, (5793, 724, 724): 16, (5793, 724, 2048): 16, (2048, 5793, 5793): 16,
      (5793, 2048, 5793): 16, (8192, 8192, 8192): 16, (5793, 5793, 2048): 16}

db = json.load(open(sys.argv[1]))
out = sys.argv[2]
os.makedirs(out, exist_ok=True)


def partial_last_round(e):
    k, p = e["key"], e["parameters"]
    if (k["kernel"], k["batch"], k["precision"], k["order"], k["layout"]) != \
            ("xgemm_fast", 1, "32", "row", "NN"):
        return False
    m, n = k["n"], k["m"]  # the kernel's column-major view of a row-major problem
    tiles = math.ceil(m / p["MWG"]) * math.ceil(n / p["NWG"])
    return (tiles >= 2 * UNITS and tiles % UNITS and e["time"]["median_ms"] * 1000 >= 100
            and p.get("WSP", 0) == 0 and p.get("KSL", 1) == 1)


def write(name, entries):
    d = {k: v for k, v in db.items() if k not in ("entries", "measurements")}
    d["entries"], d["measurements"] = entries, []
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(d, f)


def with_tail(e, tail, split):
    e = copy.deepcopy(e)
    e["parameters"].update(TAIL=tail, SPLITK=split, KREDUCE=1)
    return e


chosen = [e for e in db["entries"] if partial_last_round(e)]
write("base", chosen)
for tail in (1, 2):
    for split in (4, 8, 16):
        write(f"t{tail}s{split}", [with_tail(e, tail, split) for e in chosen])
shape = lambda e: (e["key"]["m"], e["key"]["n"], e["key"]["k"])
a = [e for e in chosen if shape(e) in AB]
write("A", a)
write("B", [with_tail(e, 1, AB[shape(e)]) for e in a])
print(f"{len(chosen)} entries, {len(a)} in the A/B")
