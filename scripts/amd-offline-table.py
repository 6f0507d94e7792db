#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Markdown tables of what gemmtune's kernels take on each AMD ISA, built offline.

For every AMD profile in devices/ it runs `gemmtune compile --target ISA --json` on: each
template's defaults, the H100's fastest FP32 and 16acc32 xgemm_fast configurations (from the
checked-in H100 database) and the profile's own starting configurations, and prints one table per
configuration set (VGPRs / waves per SIMD, 'spN' for N bytes of scratch per lane, LDS bytes).
Usage: scripts/amd-offline-table.py [GEMMTUNE] > table.md
"""
import glob
import json
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
gemmtune = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "gemmtune")
targets = sorted(
    (os.path.basename(p)[:-5] for p in glob.glob(os.path.join(root, "devices", "gfx*.json"))),
    key=lambda t: int(t[3:], 16),
)


def params_of(d):
    return ",".join(f"{k}={v}" for k, v in sorted(d.items()))


def h100_entries():
    db = json.load(open(os.path.join(root, "results", "databases", "nvidia-h100-80gb-hbm3.json")))
    out = []
    for precision, shape in (("32", 8192), ("16acc32", 2048)):
        for e in db["entries"]:
            k = e["key"]
            if (k["kernel"] == "xgemm_fast" and k["precision"] == precision and k["batch"] == 1
                    and k["m"] == k["n"] == k["k"] == shape):
                out.append((f"xgemm_fast, the H100's {precision} {shape}^3 entry", "xgemm_fast",
                            precision, params_of(e["parameters"])))
    return out


def build(target, kernel, precision, params):
    args = [gemmtune, "compile", "--kernel", kernel, "--target", target, "--precision", precision,
            "--json"]
    if params:
        args += ["--params", params]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        return "fails: " + run.stderr.strip().splitlines()[-1][:60], None
    b = json.loads(run.stdout)[0]
    cell = f'{b["vgprs"]}/{b["waves_per_simd"]}'
    if b["spills"]:
        cell += f' sp{b["scratch_bytes"]}'
    return cell, b


rows = [(f"{k} defaults", k, "32", "") for k in ("xgemm_fast", "xgemm", "xgemm_direct", "xgemm_skinny")]
rows += h100_entries()
print("| configuration | " + " | ".join(targets) + " | LDS bytes |")
print("|---|" + "---|" * len(targets) + "---|")
for label, kernel, precision, params in rows:
    cells, lds = [], ""
    for t in targets:
        cell, b = build(t, kernel, precision, params)
        cells.append(cell)
        if b:
            lds = str(b["lds_bytes"])
    print(f"| {label} | " + " | ".join(cells) + f" | {lds} |")

print()
print("Starting configurations of each profile (devices/ISA.json, chosen offline, not measured):")
print()
print("| profile | kernel | precision | VGPRs | waves/SIMD | spill | LDS bytes | v_dot2 | parameters |")
print("|---|---|---|---|---|---|---|---|---|")
for t in targets:
    profile = json.load(open(os.path.join(root, "devices", t + ".json")))
    for e in profile.get("starting_configurations", {}).get("entries", []):
        precision = e.get("precision", "32")
        cell, b = build(t, e["kernel"], precision, params_of(e["parameters"]))
        if not b:
            print(f"| {t} | {e['kernel']} | {precision} | {cell} | | | | | |")
            continue
        print(f"| {t} | {e['kernel']} | {precision} | {b['vgprs']} | {b['waves_per_simd']} | "
              f"{'yes' if b['spills'] else 'no'} | {b['lds_bytes']} | "
              f"{b['instructions']['dot2_f32_f16']} | {params_of(e['parameters'])} |")
