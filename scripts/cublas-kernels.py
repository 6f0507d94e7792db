#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Which kernels cuBLAS runs for each FP32 row-major shape, with their grids and blocks.

The call is that of scripts/bench-cublas.py (cublasSgemm_v2 through ctypes, TF32 off), recorded
with PyTorch's profiler: a kernel's name carries cuBLAS's tile, stage count and warp layout
(e.g. `..._tilesize128x64x8_stage3_warpsize2x2x1_ffma_...`), and a split-K call shows its
reduction as a second kernel. What the peer does at a shape says what a kernel would need there.

Usage: scripts/cublas-kernels.py --shapes 929x895x187,4096 [-o OUT.json]
Without PyTorch or without a CUDA device it prints why and exits 0.
"""
import argparse
import json
import os
import sys
import tempfile

import sibling

CALLS = 3  # profiled calls per shape, after one untimed call (cuBLAS's heuristic settles)


def kernels_of(torch, cublas, m, n, k):
    a = torch.rand((m, k), device="cuda")
    b = torch.rand((k, n), device="cuda")
    out = torch.empty((m, n), device="cuda")
    cublas.gemm(a, b, out)
    cublas.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(CALLS):
            cublas.gemm(a, b, out)
        cublas.synchronize()
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "trace.json")
        prof.export_chrome_trace(trace)
        events = json.load(open(trace))["traceEvents"]
    seen = {}
    for e in events:
        if e.get("cat") != "kernel":
            continue
        args = e.get("args", {})
        key = (e["name"], str(args.get("grid")), str(args.get("block")))
        s = seen.setdefault(key, {"name": e["name"], "grid": args.get("grid"),
                                  "block": args.get("block"),
                                  "registers": args.get("registers per thread"),
                                  "shared_bytes": args.get("shared memory"),
                                  "calls": 0, "us": []})
        s["calls"] += 1
        s["us"].append(e.get("dur"))
    return list(seen.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", required=True, help="MxNxK or N, comma-separated")
    ap.add_argument("-o", "--output", help="JSON file (default: standard output)")
    a = ap.parse_args()
    bc = sibling.load("bench-cublas")
    shapes = bc.parse_shapes(a.shapes, "cublas-kernels")
    torch = bc.cuda_torch("cublas-kernels", "profiled")
    if torch is None:
        return 0
    cublas = bc.Cublas(torch)
    rows = []
    for m, n, k in shapes:
        rows.append({"m": m, "n": n, "k": k, "kernels": kernels_of(torch, cublas, m, n, k)})
        for kern in rows[-1]["kernels"]:
            print(f"{m}x{n}x{k}: {kern['name']} grid {kern['grid']} block {kern['block']} "
                  f"regs {kern['registers']} smem {kern['shared_bytes']} us {kern['us']}")
    doc = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "shapes": rows}
    text = json.dumps(doc, indent=1) + "\n"
    if a.output:
        bc.write_atomic(a.output, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
