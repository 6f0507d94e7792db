#!/usr/bin/env python3
# Which picks of `gemmtune db lookup` the new entries change: at the five suites' shapes (read
# from the suites' Markdown) and at 150 log-uniform shapes from 256 to 8192 (seed 7).
# Usage: chooser-check.py GEMMTUNE DB_BEFORE DB_AFTER SUITE.md...
import json
import math
import random
import subprocess
import sys

gemmtune, before, after, suites = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]


def pick(db, shape):
    m, n, k = shape
    out = subprocess.run([gemmtune, "db", "lookup", db, "-m", str(m), "-n", str(n), "-k", str(k),
                          "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout).get("parameters")


shapes = []
for path in suites:
    for line in open(path):
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) > 20 and cells[1] == "fp32":
            shapes.append(tuple(int(x) for x in cells[0].split("x")))
rng = random.Random(7)
drawn = [tuple(int(math.exp(rng.uniform(math.log(256), math.log(8192)))) for _ in range(3))
         for _ in range(150)]
for name, group in (("suite shapes", shapes), ("log-uniform shapes", drawn)):
    changed = [s for s in group if pick(before, s) != pick(after, s)]
    print(f"{name}: {len(changed)} of {len(group)} picks changed",
          " ".join("x".join(map(str, s)) for s in changed))
