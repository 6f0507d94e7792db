#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A/B of two entry databases through `gemmtune bench`: alternating rounds, row by row.

A and B hold the same problems, for instance the same served configurations with and without a
parameter (scripts/served-entries.py --set), or the same file under two template sets
(--templates-a, --templates-b) or two folders of device profiles (--devices-a, --devices-b: a
profile's build options, say). Each round benches both with `gemmtune bench`, which measures
and verifies every entry in one process on the GPU clock. The order is A then B in odd rounds
and B then A in even ones. A row's time is its fastest ok round. OUTPUT/summary.md holds:
- each row's A and B times and A / B (above 1: B is faster);
- the geometric mean over the rows both measured, and the counts faster and slower;
- the rows either side failed;
- A's own spread between its first two rounds, the noise to read the ratios against.

Usage: ab-bench.py OUTPUT A.json B.json [--templates-a DIR] [--templates-b DIR] [--devices-a DIR]
                   [--devices-b DIR] [--rounds 2] [--min-time-ms 20] [--device D]
  GEMMTUNE (default build/gemmtune) from the environment.
"""
import argparse
import math
import os
import subprocess
import sys

from space_file import read_database, write_atomically

SCRIPT = "ab-bench.py"


def bench(gemmtune, templates, devices, database, output, args):
    cmd = [gemmtune] + (["--templates", templates] if templates else [])
    cmd += ["--devices", devices] if devices else []
    cmd += ["bench", database, "-o", output, "--min-time-ms", str(args.min_time_ms)]
    cmd += ["-d", args.device] if args.device else []
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        sys.exit(f"{SCRIPT}: gemmtune bench {database} failed: {last}")
    return " ".join(cmd)


def entry_key(e):
    k = e["key"]
    return (k["kernel"], k["precision"], k["layout"], k["order"], k.get("batch", 1), k["m"],
            k["n"], k["k"])


def times(path):
    """{key: median ms} of the ok entries of a bench output, and the keys that failed."""
    ok, failed = {}, set()
    for e in read_database(path, SCRIPT)["entries"]:
        if e.get("status") == "ok" and e.get("time", {}).get("median_ms", 0) > 0:
            ok[entry_key(e)] = e["time"]["median_ms"]
        else:
            failed.add(entry_key(e))
    return ok, failed


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--templates-a")
    ap.add_argument("--templates-b")
    ap.add_argument("--devices-a")
    ap.add_argument("--devices-b")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--min-time-ms", type=float, default=20)
    ap.add_argument("--device")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit(f"{SCRIPT}: --rounds must be at least 1, got {args.rounds}")
    keys_a = [entry_key(e) for e in read_database(args.a, SCRIPT)["entries"]]
    keys_b = {entry_key(e) for e in read_database(args.b, SCRIPT)["entries"]}
    if set(keys_a) != keys_b:
        sys.exit(f"{SCRIPT}: '{args.a}' and '{args.b}' hold different problems")
    gemmtune = os.environ.get("GEMMTUNE", "build/gemmtune")
    os.makedirs(args.output, exist_ok=True)
    sides = {"a": (args.templates_a, args.devices_a, args.a),
             "b": (args.templates_b, args.devices_b, args.b)}
    runs = {"a": [], "b": []}
    commands = []
    for r in range(1, args.rounds + 1):
        for side in ("a", "b") if r % 2 else ("b", "a"):
            out = os.path.join(args.output, f"{side}-r{r}.json")
            commands.append(bench(gemmtune, *sides[side], out, args))
            runs[side].append(times(out))

    def best(side, key):
        ts = [ok[key] for ok, _ in runs[side] if key in ok]
        return min(ts) if ts else None

    lines = [f"# A/B: {args.a} (A) against {args.b} (B), {args.rounds} round(s)", "", "```sh"]
    lines += commands + ["```", "", "| problem | A µs | B µs | A / B |", "| --- | ---: | ---: | ---: |"]
    ratios, failed = [], []
    for key in keys_a:
        a, b = best("a", key), best("b", key)
        name = f"{key[5]}x{key[6]}x{key[7]} {key[0]} fp{key[1]} {key[3]} {key[2]}"
        if a is None or b is None:
            failed.append(name)
            continue
        ratios.append(a / b)
        lines.append(f"| {name} | {a * 1e3:.2f} | {b * 1e3:.2f} | {a / b:.3f} |")
    lines.append("")
    summary = (f"A / B, geometric mean over {len(ratios)} problems: {geomean(ratios):.4f}; B faster "
               f"at {sum(x > 1 for x in ratios)}, slower at {sum(x < 1 for x in ratios)}")
    lines.append(summary)
    lines.append(f"Failed on either side: {len(failed)}" + (f" ({', '.join(failed)})" if failed else ""))
    if args.rounds > 1:
        (first, _), (second, _) = runs["a"][0], runs["a"][1]
        spread = [first[k] / second[k] for k in keys_a if k in first and k in second]
        if spread:
            lines.append(f"A's first round over its second: geometric mean {geomean(spread):.4f}, "
                         f"{min(spread):.3f} to {max(spread):.3f} a problem")
    write_atomically(os.path.join(args.output, "summary.md"), "\n".join(lines) + "\n")
    print(summary)


if __name__ == "__main__":
    main()
