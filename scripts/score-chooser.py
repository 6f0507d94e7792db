#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How well the chooser serves shapes it holds no entry for, scored on measurements.

A journal that measured many configurations at each of many shapes (a `gemmtune search
--space-from DB --strategy exhaustive --workload GRID` run) says how fast each of them is there.
For every such shape, the database's entry at that shape is held out, `gemmtune db lookup` picks a
configuration from the rest, and the pick's measured time at the shape is compared with the best
measured there. Run once per selection setting (`--setting NAME=VALUE` sets the device profile's
`selection.model` constants, e.g. distance_penalty=0.5, or the measured step's rule, e.g.
measured.neighbours=4; several comma-separated in one setting; `current` is the profile as it is).

Usage: scripts/score-chooser.py --gemmtune build/gemmtune --db DB --journal J.jsonl[.gz] [--journal ...]
           [--profile sm_90] [--setting current] [--setting distance_penalty=0.5] ...
Prints per setting: the geometric mean of best/pick time, the worst, the share of shapes within
10% of the best, and the shapes no pick was measured at (a configuration outside the journal).
"""
import argparse
import gzip
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

WITHIN = 0.9  # a pick within 10% of the best measured


def read_journal(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            e = json.loads(line)
            if e.get("type") == "header" or "result" not in e:
                continue
            yield e


def shape_key(s):
    return (s["m"], s["n"], s["k"])


def config_key(params):
    return json.dumps(params, sort_keys=True)


def measured_times(journals, kernel, defaults):
    """{shape: {config: ms}} of the ok results of every journal (the fastest per configuration),
    each configuration completed with the template's defaults: a journal written before a
    parameter existed measured it at its default."""
    out = {}
    for e in itertools.chain.from_iterable(read_journal(j) for j in journals):
        r = e["result"]
        if e["problem"].get("kernel", kernel) != kernel or r.get("status") != "ok":
            continue
        # A result stopped early holds few samples; before the stop rule read the fastest of
        # them, one slow sample could stop it with its median inflated (up to 5x), so its fastest
        # sample stands for it.
        t = r["time"]
        ms = t["min_ms"] if t.get("stopped_above") else t["median_ms"]
        per = out.setdefault(shape_key(e["problem"]["shape"]), {})
        c = config_key(complete(r["config"], defaults))
        per[c] = min(ms, per.get(c, ms))
    return out


def complete(params, defaults):
    full = dict(defaults)
    full.update(params)
    return full


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gemmtune", default="build/gemmtune")
    ap.add_argument("--db", required=True)
    ap.add_argument("--journal", required=True, action="append",
                    help="a cross-measurement journal (repeatable: their shapes and figures join)")
    ap.add_argument("--kernel", default="xgemm_fast")
    ap.add_argument("--profile", default="sm_90", help="the device profile the settings change")
    ap.add_argument("--devices", default="devices")
    ap.add_argument("--templates", default="kernel_templates")
    ap.add_argument("--min-configs", type=int, default=20,
                    help="shapes with fewer measured configurations are left out")
    ap.add_argument("--setting", action="append", default=[])
    a = ap.parse_args()
    settings = a.setting or ["current"]
    spec = json.load(open(os.path.join(a.templates, a.kernel + ".json")))
    defaults = {p["name"]: p["default"] for p in spec["parameters"]}
    times = {s: t for s, t in measured_times(a.journal, a.kernel, defaults).items()
             if len(t) >= a.min_configs}
    if not times:
        sys.exit(f"score-chooser: no shape of {', '.join(a.journal)} has {a.min_configs} "
                 "measured configurations")
    db = json.load(open(a.db))
    work = tempfile.mkdtemp()
    try:
        # One database per held-out shape: every entry and measurement but those of that shape.
        held = {}
        for s in times:
            d = dict(db)
            d["entries"] = [e for e in db["entries"]
                            if (e["key"]["m"], e["key"]["n"], e["key"]["k"]) != s]
            if "measurements" in db:
                d["measurements"] = [dict(m, gflops=[g for g in m["gflops"] if tuple(g[:3]) != s])
                                     for m in db["measurements"]]
            path = os.path.join(work, "db-%dx%dx%d.json" % s)
            json.dump(d, open(path, "w"))
            held[s] = path
        print(f"{'setting':<40} {'shapes':>6} {'geomean':>8} {'worst':>7} {'within 10%':>10} "
              f"{'unmeasured':>10}  worst shape")
        for setting in settings:
            devices = os.path.join(work, "devices")
            shutil.rmtree(devices, ignore_errors=True)
            shutil.copytree(a.devices, devices)
            prof_path = os.path.join(devices, a.profile + ".json")
            prof = json.load(open(prof_path))
            if setting != "current":
                sel = prof.setdefault("selection", {})
                sel.setdefault("source", "score-chooser trial")
                for kv in setting.split(","):
                    k, v = kv.split("=")
                    # measured.NAME: the measured step's rule; NAME: a model constant.
                    group, name = k.split(".", 1) if "." in k else ("model", k)
                    sel.setdefault(group, {})[name] = float(v) if "." in v else int(v)
                json.dump(prof, open(prof_path, "w"))
            ratios, unmeasured = [], 0
            worst = (2.0, None)
            for s, t in sorted(times.items()):
                out = subprocess.run(
                    [a.gemmtune, "--devices", devices, "--templates", a.templates, "db", "lookup",
                     held[s], "--kernel", a.kernel, "-m", str(s[0]), "-n", str(s[1]),
                     "-k", str(s[2]), "--json"], capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"score-chooser: db lookup failed at {s}: {out.stderr.strip()}")
                pick = json.loads(out.stdout)
                ms = t.get(config_key(complete(pick["parameters"], defaults)))
                if ms is None:
                    unmeasured += 1
                    continue
                r = min(t.values()) / ms
                ratios.append(r)
                if r < worst[0]:
                    worst = (r, s)
            g = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else 0
            within = sum(r >= WITHIN for r in ratios) / max(1, len(ratios))
            ws = "%dx%dx%d" % worst[1] if worst[1] else "-"
            print(f"{setting:<40} {len(ratios):>6} {g:>8.3f} {worst[0]:>7.3f} {within:>10.0%} "
                  f"{unmeasured:>10}  {ws}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
