#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times cuBLAS FP32 GEMM for the bench-suite shapes.

Row-major FP32 GEMMs with TF32 disabled, called as a C application calls cuBLAS: cublasSgemm_v2
through ctypes on PyTorch's cuBLAS handle and tensors (PyTorch only allocates, and its per-call
dispatch, some 20 microseconds on a busy host, is not timed). The --epilogue rows are
torch.addmm(bias) followed by torch.relu_, PyTorch's calls. Each result is timed two ways, each
the median of --reps after --warmup untimed calls:
- whole call: host clock from before the call to the return of the device synchronization, as
  gemmtune's whole-call time is taken;
- device (the GPU clock): N calls queued back to back behind a busy-wait kernel (so that the
  host's launch cost is not in the GPU's timeline), from the end of the busy kernel to the end of
  the last call, divided by N; N is at least 20 and large enough for a batch of 1 ms, the rule
  gemmtune's queued clock follows (src/eval/queued_clock.hpp);
- host cost per call: the same N calls queued with no busy GPU, host clock to the end of the
  device synchronization, divided by N.
Each result is checked once against a float64 product on the GPU (this also proves TF32 was off:
TF32 errors are far beyond the FP32 tolerance).

The --json output can be merged into the suite as a cuBLAS column:
    gemmtune bench-suite ... --cublas cublas.json

Without PyTorch or without a CUDA device it prints why and exits 0.
"""

import argparse
import ctypes
import datetime
import json
import math
import os
import statistics
import sys
import tempfile
import time

FORMAT = "gemmtune-cublas-bench"
SCHEMA_VERSION = 3
DEFAULT_SHAPES = ("256x256x256,1000x1000x1000,1024x1024x1024,2048x2048x2048,4096x4096x4096,"
                  "4097x4097x4097,8192x8192x8192,128x4096x1024,64x4096x4096,8192x64x8192")
# The tolerance rule of gemmtune's reference: |C - Cref| <= 8 * u * sqrt(K) * (|A||B| + |bias|).
TOLERANCE_FACTOR = 8.0
UNIT_ROUNDOFF_FP32 = 2.0 ** -24


def parse_shapes(text, tool="bench-cublas"):
    shapes = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        parts = item.lower().split("x")
        try:
            dims = [int(p) for p in parts]
        except ValueError:
            raise SystemExit(f"{tool}: bad shape '{item}' (expected MxNxK or N)")
        if len(dims) == 1:
            dims = dims * 3
        if len(dims) != 3 or min(dims) <= 0:
            raise SystemExit(f"{tool}: bad shape '{item}' (expected MxNxK or N, positive)")
        shapes.append(tuple(dims))
    if not shapes:
        raise SystemExit(f"{tool}: --shapes names no shape")
    return shapes


# The N rule of the GPU clock (as gemmtune's): at least MIN_QUEUED_CALLS calls per sample, and
# enough for MIN_BATCH_MS of GPU time, at most MAX_QUEUED_CALLS.
MIN_QUEUED_CALLS = 20
MIN_BATCH_MS = 1.0
MAX_QUEUED_CALLS = 4096
# The busy wait outlasts the host's queueing of the batch: this many GPU clock cycles per call
# queued (about 25 microseconds at 1.6 GHz, more than a call's launch costs the host), and at
# least MIN_BUSY_WAIT_CYCLES (about a millisecond).
BUSY_WAIT_CYCLES_PER_CALL = 40_000
MIN_BUSY_WAIT_CYCLES = 2_000_000


def queued_calls(call_ms):
    """N for a call that takes call_ms alone."""
    wanted = math.ceil(MIN_BATCH_MS / call_ms) if call_ms > 0 else MAX_QUEUED_CALLS
    return max(MIN_QUEUED_CALLS, min(MAX_QUEUED_CALLS, wanted))
CUBLAS_OP_N = 0
CUBLAS_POINTER_MODE_HOST = 0


def loaded_library(prefix):
    """The shared library of this process whose file name starts with `prefix` (PyTorch loads
    cuBLAS and the CUDA runtime itself; their paths vary between wheels)."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith(prefix):
                return ctypes.CDLL(path)
    return None


class Cublas:
    """cublasSgemm_v2 and the device synchronization, called directly."""

    def __init__(self, torch):
        torch.ones((1, 1), device="cuda") @ torch.ones((1, 1), device="cuda")  # loads cuBLAS
        self.lib = loaded_library("libcublas.so")
        if self.lib is None:
            raise SystemExit("bench-cublas: cuBLAS is not among the libraries PyTorch loaded")
        self.handle = ctypes.c_void_p(torch.cuda.current_blas_handle())
        self.lib.cublasSgemm_v2.restype = ctypes.c_int
        self.lib.cublasSgemm_v2.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
            ctypes.c_int, ctypes.POINTER(ctypes.c_float), ctypes.c_void_p, ctypes.c_int]
        if self.lib.cublasSetPointerMode_v2(self.handle, CUBLAS_POINTER_MODE_HOST) != 0:
            raise SystemExit("bench-cublas: cublasSetPointerMode_v2 failed")
        self.alpha = ctypes.c_float(1.0)
        self.beta = ctypes.c_float(0.0)
        runtime = loaded_library("libcudart.so")
        self.synchronize = runtime.cudaDeviceSynchronize if runtime else torch.cuda.synchronize

    def gemm(self, a, b, out):
        """Row-major out (m x n) = a (m x k) b (k x n): column-major out^T = b^T a^T."""
        m, k = a.shape
        n = b.shape[1]
        status = self.lib.cublasSgemm_v2(self.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k,
                                         ctypes.byref(self.alpha), b.data_ptr(), n, a.data_ptr(),
                                         k, ctypes.byref(self.beta), out.data_ptr(), n)
        if status != 0:
            raise SystemExit(f"bench-cublas: cublasSgemm_v2 returned {status}")


def measure(torch, cublas, m, n, k, epilogue, reps, warmup, seed):
    device = torch.device("cuda")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    # Inputs in [0.5, 1.5) as in gemmtune, so that no output cancels to zero.
    a = torch.rand((m, k), generator=gen, device=device, dtype=torch.float32) + 0.5
    b = torch.rand((k, n), generator=gen, device=device, dtype=torch.float32) + 0.5
    out = torch.empty((m, n), device=device, dtype=torch.float32)
    bias = None
    if epilogue:
        # About half of the outputs are clipped by the ReLU.
        bias = -float(k) * (torch.rand((n,), generator=gen, device=device,
                                       dtype=torch.float32) + 0.5)

        def call():
            torch.addmm(bias, a, b, out=out)
            torch.relu_(out)
    else:
        def call():
            cublas.gemm(a, b, out)

    call()
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    scale = ref.clone()  # inputs are positive: |A||B| = AB
    if epilogue:
        ref = torch.relu(ref + bias.double())
        scale = scale + bias.double().abs()
    tolerance = TOLERANCE_FACTOR * UNIT_ROUNDOFF_FP32 * math.sqrt(k)
    rel = ((out.double() - ref).abs() / scale).max().item()
    del ref, scale

    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    walls = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        cublas.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
    calls = queued_calls(statistics.median(walls))
    busy_cycles = max(MIN_BUSY_WAIT_CYCLES, BUSY_WAIT_CYCLES_PER_CALL * calls)
    times = []
    hosts = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(busy_cycles)
        start.record()
        for _ in range(calls):
            call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / calls)
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        cublas.synchronize()
        hosts.append((time.perf_counter() - t0) * 1e3 / calls)
    median = statistics.median(times)
    wall = statistics.median(walls)
    flops = 2.0 * m * n * k
    return {
        "m": m, "n": n, "k": k, "epilogue": epilogue,
        "median_ms": median, "min_ms": min(times), "runs": reps,
        "gflops": flops / (median * 1e6) if median > 0 else 0.0,
        "wall_median_ms": wall,
        "queued_calls": calls,
        "host_per_call_ms": statistics.median(hosts),
        "wall_gflops": flops / (wall * 1e6) if wall > 0 else 0.0,
        "max_error": rel, "tolerance": tolerance, "verified": bool(rel <= tolerance),
    }


def cuda_torch(tool, nothing):
    """PyTorch with a CUDA device and TF32 off, or None after saying why there is nothing
    `nothing` ("to measure"): the scripts that call cuBLAS exit 0 without one."""
    try:
        import torch
    except ImportError:
        print(f"{tool}: PyTorch is not installed; nothing {nothing}")
        return None
    if not torch.cuda.is_available():
        print(f"{tool}: PyTorch has no CUDA device here; nothing {nothing}")
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


def write_atomic(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".bench-cublas-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma-separated MxNxK shapes")
    ap.add_argument("--reps", type=int, default=20, help="timed calls per shape (median)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed calls per shape first")
    ap.add_argument("--epilogue", action="store_true",
                    help="also time addmm(bias) + relu per shape")
    ap.add_argument("--seed", type=int, default=42, help="seed of the input data")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("-o", "--output", help="also write the JSON to this file")
    args = ap.parse_args()
    if args.reps < 1 or args.warmup < 0:
        raise SystemExit("bench-cublas: --reps must be at least 1, --warmup at least 0")
    shapes = parse_shapes(args.shapes)

    torch = cuda_torch("bench-cublas", "to measure")
    if torch is None:
        return 0
    cublas = Cublas(torch)

    results = []
    for (m, n, k) in shapes:
        for epilogue in ([False, True] if args.epilogue else [False]):
            r = measure(torch, cublas, m, n, k, epilogue, args.reps, args.warmup, args.seed)
            results.append(r)
            print(f"{m}x{n}x{k}{' +bias+relu' if epilogue else ''}: {r['gflops']:.1f} GFLOPS",
                  file=sys.stderr)
            torch.cuda.empty_cache()

    doc = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "call": "cublasSgemm_v2 (ctypes); epilogue rows: torch.addmm + torch.relu_",
        "device_time": (f"CUDA events around N calls queued behind a busy wait, per call (N at least "
                        f"{MIN_QUEUED_CALLS}, enough for {MIN_BATCH_MS:g} ms)"),
        "reps": args.reps,
        "warmup": args.warmup,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join(["bench-cublas.py"] + sys.argv[1:]),
        "results": results,
    }
    text = json.dumps(doc, indent=2) + "\n"
    if args.output:
        write_atomic(args.output, text)
    if args.json:
        sys.stdout.write(text)
    else:
        print(f"{doc['device']} (torch {doc['torch']}, CUDA {doc['cuda']}, TF32 off)")
        print(f"{'shape':<16} {'epilogue':<9} {'device ms':>10} {'GFLOPS':>10} "
              f"{'call ms':>10} {'GFLOPS':>10} {'verified':>9}")
        for r in results:
            shape = f"{r['m']}x{r['n']}x{r['k']}"
            print(f"{shape:<16} {'bias+ReLU' if r['epilogue'] else '-':<9} "
                  f"{r['median_ms']:>10.4f} {r['gflops']:>10.1f} "
                  f"{r['wall_median_ms']:>10.4f} {r['wall_gflops']:>10.1f} "
                  f"{'ok' if r['verified'] else 'WRONG':>9}")
    return 0 if all(r["verified"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
