#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The GPU-time targets of a scripts/bench-vs-peers.sh folder, as one Markdown table.

Reads each suite's bench-suite JSON (NAME.json, or NAME.json.gz as the results pages store it)
and prints per suite: gemmtune and the library against cuBLAS on the GPU clock (geometric mean
and the worst row), gemmtune against CLBlast on the GPU clock, and the whole call against
CLBlast (its worst row), after a warning for each suite that passed database entries over as
stale (the tool's templates no longer accept them: the run measured less than the database);
then the host cost a call where the host sets the pace (rows under
HOST_BOUND_US of gemmtune's GPU time): one launch against split-K with the reduce kernel,
and cuBLAS; then each target and whether it is met.

Usage: vs-peers-summary.py FOLDER [--host-bound-us 20]
"""
import argparse
import gzip
import json
import os
import statistics
import sys

SUITES = ["standard", "memory", "random-seed1", "random-seed2", "random-seed3"]
RANDOM_MEAN_TARGET = 1.05  # random sets: geometric mean against cuBLAS at least this
RANDOM_WORST_TARGET = 0.9  # and no row below this
STANDARD_TARGET = 1.0  # the standard suite, and 4096^3 and 8192^3 each
WHOLE_CALL_WORST_KEPT = 1.3  # the whole call's worst row against CLBlast
LARGE_SQUARES = ["4096x4096x4096", "8192x8192x8192"]


def load(folder, name):
    for path, opener in ((f"{folder}/{name}.json", open), (f"{folder}/{name}.json.gz", gzip.open)):
        if os.path.exists(path):
            with opener(path, "rt") as f:
                return json.load(f)
    return None


def shape(row):
    s = row["shape"]
    return f"{s['m']}x{s['n']}x{s['k']}"


def geomean(values):
    return statistics.geometric_mean(values) if values else float("nan")


def worst(rows, field):
    scored = [r for r in rows if r.get(field)]
    if not scored:
        return None
    r = min(scored, key=lambda r: r[field])
    return r[field], shape(r)


def split_k_two_launches(row):
    p = row["chosen"]["parameters"]
    return p.get("SPLITK", 1) > 1 and p.get("KREDUCE", 0) == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("--host-bound-us", type=float, default=20.0)
    args = ap.parse_args()
    suites = {name: load(args.folder, name) for name in SUITES}
    suites = {name: d for name, d in suites.items() if d is not None}
    if not suites:
        sys.exit(f"vs-peers-summary: no suite's JSON in {args.folder}")
    stale = [(name, s) for name, d in suites.items() for s in d.get("stale_entries", [])]
    for name, s in stale:
        print(f"**{name} passed over stale database entries**, which the tool's templates no "
              f"longer accept, so it measured less than the database holds: {s}")
    if stale:
        print()
    print("| suite | gemmtune / cuBLAS | worst | library / cuBLAS | gemmtune / CLBlast, GPU | "
          "whole call / CLBlast, worst |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    figures = {}
    one, split, cublas = [], [], []
    for name, d in suites.items():
        rows = d["rows"]
        ratio = [r["cublas_device_ratio"] for r in rows if r.get("cublas_device_ratio")]
        library = [r["library_cublas_device_ratio"] for r in rows
                   if r.get("library_cublas_device_ratio")]
        clblast = [r["gpu_ratio"] for r in rows if r.get("gpu_ratio")]
        low, low_shape = worst(rows, "cublas_device_ratio") or (float("nan"), "-")
        call_low = worst(rows, "ratio")
        figures[name] = {"mean": geomean(ratio), "worst": low,
                         "call_worst": call_low[0] if call_low else float("nan"),
                         "rows": {shape(r): r.get("cublas_device_ratio") for r in rows}}
        print(f"| {name} ({len(rows)}) | {figures[name]['mean']:.3f} | {low:.3f}, {low_shape} | "
              f"{geomean(library):.3f} | "
              f"{geomean(clblast):.3f} | "
              f"{figures[name]['call_worst']:.2f} |")
        for r in rows:
            if r["gemmtune"]["gpu"]["median_ms"] * 1000 >= args.host_bound_us:
                continue
            (split if split_k_two_launches(r) else one).append(r["gemmtune"]["host_ms"] * 1000)
            if r.get("cublas_host_ms"):
                cublas.append(r["cublas_host_ms"] * 1000)

    def median_of(values):
        return f"{statistics.median(values):.1f} µs ({len(values)} rows)" if values else "no rows"

    print()
    print(f"Host cost a call, rows under {args.host_bound_us:g} µs of GPU time: one launch "
          f"{median_of(one)}, split-K with the reduce kernel {median_of(split)}, cuBLAS "
          f"{median_of(cublas)}.")
    print()
    randoms = [n for n in figures if n.startswith("random")]
    checks = []
    for n in randoms:
        checks.append((f"{n} mean >= {RANDOM_MEAN_TARGET}", figures[n]["mean"] >= RANDOM_MEAN_TARGET,
                       f"{figures[n]['mean']:.3f}"))
    if randoms:
        low = min(figures[n]["worst"] for n in randoms)
        checks.append((f"worst random row >= {RANDOM_WORST_TARGET}", low >= RANDOM_WORST_TARGET,
                       f"{low:.3f}"))
    if "standard" in figures:
        std = figures["standard"]
        checks.append((f"standard >= {STANDARD_TARGET}", std["mean"] >= STANDARD_TARGET,
                       f"{std['mean']:.3f}"))
        for s in LARGE_SQUARES:
            v = std["rows"].get(s)
            if v:
                checks.append((f"{s} >= {STANDARD_TARGET}", v >= STANDARD_TARGET, f"{v:.3f}"))
    call = min(f["call_worst"] for f in figures.values())
    checks.append(("whole call never below CLBlast", call >= 1.0, f"worst {call:.2f}"))
    checks.append((f"whole call worst >= {WHOLE_CALL_WORST_KEPT}", call >= WHOLE_CALL_WORST_KEPT,
                   f"{call:.2f}"))
    if one and split:
        a, b = statistics.median(one), statistics.median(split)
        checks.append(("split-K host cost equal to one launch's", b <= a * 1.05,
                       f"{b:.1f} against {a:.1f} µs"))
    for what, met, value in checks:
        print(f"- {what}: {'met' if met else 'not met'} ({value})")


if __name__ == "__main__":
    main()
