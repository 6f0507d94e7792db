#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs an xgemm_fast binary that NVIDIA's OpenCL driver built through the CUDA driver API, and
cuBLAS at the same FP32 row-major shape, in one process: for profilers that do not see the
OpenCL driver's launches (Nsight Compute reports no kernel of an OpenCL process).

NVIDIA's OpenCL binary is PTX. gemmtune's binary cache (`--cache-dir DIR`: DIR/kernels/*.bin)
stores it behind a JSON header naming the build options, from which the launch is sized as
gemmtune sizes it: the kernel view of a row-major C = A B is the column-major C^T = B^T A^T
(M' = N, N' = M), one work-group of MDIMC x NDIMC per MWG x NWG tile and SPLITK along z. OpenCL's
launch values that the PTX reads from environment registers are rewritten: the global offset to
zero (gemmtune launches without one), the number of groups to CUDA's grid size. The
first launch is checked against a float64 product, so that a profile is of a kernel that
computes the GEMM. Split-K's reduction kernel is not launched (the main kernel is profiled), so
a two-launch split-K configuration is launched unchecked.

Usage: scripts/ptx-launch.py --binary DIR/kernels/X.bin -m M -n N -k K [--calls 5] [--groupm G]
           [--write-ptx FILE]
       scripts/ptx-launch.py --binary DIR/kernels/X.bin --write-ptx FILE  (the PTX alone: ptxas)
Prints the kernel's and cuBLAS's times by CUDA events. Without PyTorch or without a CUDA device
it only writes --write-ptx, says why, and exits 0.
"""
import argparse
import ctypes
import json
import re
import sys

import sibling


CACHE_MAGIC = "gemmtune-binary-cache 1"


def read_binary(path):
    """(PTX text, {define: value}) of a gemmtune binary cache file."""
    try:
        data = open(path, "rb").read()
        eol = data.index(b"\n")  # a header line, the build log, then the binary
        header = json.loads(data[:eol])
        start = eol + 1 + header["log_bytes"]
        if header.get("magic") != CACHE_MAGIC or len(data) != start + header["binary_bytes"]:
            raise ValueError("not one")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"ptx-launch: {path} is no gemmtune binary cache file ({e})")
    ptx = data[start : start + header["binary_bytes"]].rstrip(b"\0")
    # OpenCL's launch reaches the kernel in environment registers, which a CUDA launch leaves
    # undefined: the global offset (%envreg0-2 added to the group ids, %envreg3-5 to the global
    # ids; gemmtune launches without one, so zero) and the number of groups (%envreg6-8).
    ptx = re.sub(rb"%envreg[0-5]\b", b"0", ptx)
    for i, axis in enumerate((b"x", b"y", b"z")):
        ptx = re.sub(rb"%%envreg%d\b" % (6 + i), b"%nctaid." + axis, ptx)
    left = sorted(set(re.findall(rb"%envreg\d+", ptx)))
    if left:
        raise SystemExit(f"ptx-launch: the PTX reads environment registers it cannot set: {left}")
    options = dict(re.findall(r"-D(\w+)=(\S+)", header["identity"]))
    return ptx, options


def check(status, what):
    if status != 0:
        raise SystemExit(f"ptx-launch: {what} failed with CUDA error {status}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True)
    ap.add_argument("-m", type=int)
    ap.add_argument("-n", type=int)
    ap.add_argument("-k", type=int)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--write-ptx", help="also write the PTX text to this file")
    ap.add_argument("--groupm", type=int, default=1,
                    help="the groupm argument (rasterization rows) where GROUPM was not built in")
    a = ap.parse_args()
    shape = [a.m, a.n, a.k]
    if any(x is None for x in shape) and not (a.write_ptx and shape == [None] * 3):
        ap.error("give -m, -n and -k (a launch), or none of them and --write-ptx (the PTX alone)")
    if any(x is not None and x < 1 for x in shape) or a.calls < 1:
        ap.error("-m, -n, -k and --calls must be at least 1")
    ptx, d = read_binary(a.binary)
    if a.write_ptx:
        with open(a.write_ptx, "wb") as f:
            f.write(ptx)
    if a.m is None:
        return 0
    if d.get("PRECISION") != "32" or d.get("TRANSA") != "0" or d.get("TRANSB") != "0":
        raise SystemExit("ptx-launch: FP32 NN builds only (PRECISION=32, TRANSA=0, TRANSB=0)")
    p = {k: int(v) for k, v in d.items() if v.lstrip("-").isdigit()}
    bc = sibling.load("bench-cublas")
    torch = bc.cuda_torch("ptx-launch", "launched")
    if torch is None:
        return 0
    m, n, k = a.m, a.n, a.k
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    A = torch.rand((m, k), device="cuda", generator=gen) + 0.5
    B = torch.rand((k, n), device="cuda", generator=gen) + 0.5
    C = torch.zeros((m, n), device="cuda")
    # Kernel view: M' = n, N' = m; A' = B (lda n), B' = A (ldb k), C' = C (ldc n).
    km, kn = n, m
    grid = (-(-km // p["MWG"]), -(-kn // p["NWG"]), p.get("SPLITK", 1))
    block = (p["MDIMC"], p["NDIMC"], 1)
    split = grid[2]
    work = torch.zeros((split * m * n if split > 1 else 1,), device="cuda")
    counters = torch.zeros((grid[0] * grid[1],), device="cuda", dtype=torch.int32)  # one a tile
    torch.cuda.synchronize()

    cuda = ctypes.CDLL("libcuda.so.1")
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(ptx + b"\0")),
          "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(fn), module, b"XgemmFast"),
          "cuModuleGetFunction")
    args = [ctypes.c_int(km), ctypes.c_int(kn), ctypes.c_int(k), ctypes.c_float(1.0),
            ctypes.c_float(0.0), ctypes.c_void_p(B.data_ptr()), ctypes.c_int(0), ctypes.c_int(n),
            ctypes.c_void_p(A.data_ptr()), ctypes.c_int(0), ctypes.c_int(k),
            ctypes.c_void_p(C.data_ptr()), ctypes.c_int(0), ctypes.c_int(n), ctypes.c_void_p(0),
            ctypes.c_void_p(work.data_ptr()), ctypes.c_void_p(counters.data_ptr()),
            ctypes.c_int(a.groupm)]
    params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(x) for x in args])
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    def launch():
        check(cuda.cuLaunchKernel(fn, *grid, *block, 0, stream, params, None), "cuLaunchKernel")

    launch()
    torch.cuda.synchronize()
    if split == 1 or p.get("KREDUCE", 0):  # two-launch split-K leaves C to the reduce kernel
        # bench-cublas.py's rule; the inputs are positive, so |A||B| is the product itself.
        ref = A.double() @ B.double()
        err = ((C.double() - ref).abs() / ref).max().item()
        tolerance = bc.TOLERANCE_FACTOR * bc.UNIT_ROUNDOFF_FP32 * k ** 0.5
        if err > tolerance:
            raise SystemExit(f"ptx-launch: the launch computed a wrong product (relative error "
                             f"{err:.2e}, tolerance {tolerance:.2e})")
    times = {}
    for name, call in (("ptx", launch), ("cublas", lambda: torch.mm(A, B, out=C))):
        call()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(a.calls):
            call()
        stop.record()
        torch.cuda.synchronize()
        times[name] = start.elapsed_time(stop) * 1000 / a.calls
    print(f"{m}x{n}x{k} grid {grid} block {block}: kernel {times['ptx']:.1f} us, "
          f"cuBLAS {times['cublas']:.1f} us a call ({a.calls} calls back to back)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
