#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Chooses each AMD profile's starting configurations offline and writes them into devices/.

For every devices/gfx*.json it runs `gemmtune space --target ISA --json` on xgemm_fast's gpu
space at 2048^3 (FP32, and 16acc32 where the ISA has v_dot2_f32_f16, with DOT2=1 among the
candidates): the space pruned by real resources from the LLVM AMDGPU backend (no spill, at least
MIN_WAVES waves per SIMD), ranked by the static prior. From that list it keeps the best
configuration of each of the first few work-group tiles (so that a search starts from different
shapes, not from near-copies of one), and records how they were chosen. Nothing is measured: the
profile says so, and `db lookup --explain` / Explain() repeat it.
Usage: scripts/amd-starting-configs.py [GEMMTUNE]   (then review `git diff devices/`)
"""
import glob
import json
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
gemmtune = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "gemmtune")
SHAPE = "2048x2048x2048"
MIN_WAVES = 2          # at least two waves per SIMD: one hides the other's memory latency
# One configuration per work-group tile, so that a search starts from different shapes, not from
# near-copies of one: the common square and oblong tiles of GEMM kernels.
TILES = {"32": [(64, 64), (128, 64), (128, 128)], "16acc32": [(64, 64), (128, 128)]}
CALIBRATION_BUILDS = 6
MAX_BUILDS = 12
SEED = 1


def best(isa, precision, fix):
    args = [gemmtune, "space", "--kernel", "xgemm_fast", "--space", "gpu", "--target", isa,
            "--precision", precision, "-s", SHAPE, "--min-waves", str(MIN_WAVES), "--shortlist",
            "1", "--calibration-builds", str(CALIBRATION_BUILDS), "--max-builds", str(MAX_BUILDS),
            "--seed", str(SEED), "--fix", fix, "--json"]
    run = subprocess.run(args, capture_output=True, text=True, check=True)
    found = json.loads(run.stdout)["shortlist"]
    return (found[0] if found else None), " ".join(["gemmtune"] + args[1:-1])


def entry(e, precision):
    facts = (f'{e["vgprs"]} VGPRs, {e["waves_per_simd"]} waves per SIMD, no spill, '
             f'LDS {e["lds_bytes"]} B, predicted {e["predicted_gflops"]:.0f} GFLOPS at {SHAPE}')
    if e["instructions"]["dot2_f32_f16"]:
        facts += ", v_dot2_f32_f16"
    return {"kernel": "xgemm_fast", "precision": precision, "parameters": e["config"],
            "vgprs": e["vgprs"], "lds_bytes": e["lds_bytes"], "facts": facts}


for path in sorted(glob.glob(os.path.join(root, "devices", "gfx*.json"))):
    isa = os.path.basename(path)[:-5]
    entries, commands = [], []
    for precision, tiles in TILES.items():
        for mwg, nwg in tiles:
            tile = f"MWG={mwg},NWG={nwg}"
            e, command = (None, "")
            if precision == "16acc32":
                # dot2 where the ISA turns it into v_dot2_f32_f16; elsewhere the plain half path.
                e, command = best(isa, precision, tile + ",DOT2=1")
                if e and e["instructions"]["dot2_f32_f16"] == 0:
                    e = None
            if not e:
                e, command = best(isa, precision, tile + ",DOT2=0")
            if e:
                entries.append(entry(e, precision))
                commands.append(command)
    profile = json.load(open(path))
    profile["starting_configurations"] = {
        "source": "chosen offline, not measured (LLVM AMDGPU backend: real VGPRs and LDS, no "
                  "spill; ranked by the static prior): " + "; ".join(commands),
        "entries": entries,
    }
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(profile, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    print(f"{isa}: {len(entries)} starting configurations")
