#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times pyclblast's single-precision GEMM as a pyclblast user calls it, or compares two runs.

Timing (the default): for each shape MxNxK, row-major FP32 matrices A (MxK), B (KxN) and C (MxN)
as pyopencl arrays on one queue (no profiling), called as
    event = pyclblast.gemm(queue, m, n, k, a, b, c, a_ld=k, b_ld=n, c_ld=n)
    event.wait(); queue.finish()
Each call is timed alone on the host clock (time.perf_counter, from before the call to the
return of queue.finish()), and the shape's time is the median of --runs calls after --warmup
untimed ones; the first call's result is checked once against numpy's float64 product (the whole
product up to 2^30 multiply-adds, else 128 whole rows and 128 whole columns of it): each entry's
error, divided by the same product of |A| and |B|, must stay within 16 sqrt(K) float32 epsilons.
Writes a JSON file (--json) and one line per shape (--text, and stdout):
    bench MxNxK T ms G GFLOPS check KIND ERR
Run it once plain and once with LD_PRELOAD=libgemmtune_clblast.so (scripts/bench-pyclblast-preload.sh
does both): the two runs differ only in what serves CLBlastSgemm.

    bench-pyclblast.py [--shapes MxNxK,...|FILE] [--runs N] [--warmup N] [--device P:D]
                       [--label NAME] [--json FILE] [--text FILE]

Comparing (--compare PLAIN.json PRELOADED.json [--log LOG]): per shape the ratio plain /
preloaded time (above 1: the preloaded run is faster), their geometric mean and range, and from
the preloaded run's stderr (GEMMTUNE_CLBLAST=log) how many CLBlastSgemm calls, and of which
shapes, name gemmtune as the server.

Exit status: 0; 1 where a call failed or a check failed (the files are still written); 2 for bad
arguments or a missing module.
"""

import argparse
import datetime
import json
import math
import os
import re
import statistics
import sys
import time

FORMAT = "gemmtune-pyclblast-bench"
SCHEMA_VERSION = 1
DEFAULT_SHAPES = "256x256x256,1000x1000x1000,1024x1024x1024,2048x2048x2048"
FULL_CHECK_LIMIT = 1 << 30  # multiply-adds of a product checked whole
SAMPLED = 128  # rows and columns checked of a larger one
EPS32 = 2.0 ** -23


def parse_shapes(text):
    """'MxNxK,...' or the name of a file holding such a list (commas or white space)."""
    if os.path.isfile(text):
        with open(text, encoding="utf-8") as f:
            text = f.read()
    shapes = []
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", item)
        if not match or 0 in tuple(int(g) for g in match.groups()):
            raise ValueError(f"shape '{item}' is not MxNxK")
        shapes.append(tuple(int(g) for g in match.groups()))
    if not shapes:
        raise ValueError("no shapes")
    return shapes


def shape_name(shape):
    return "x".join(str(v) for v in shape)


def pick_device(cl, spec):
    platforms = cl.get_platforms()
    if spec:
        p, d = (int(v) for v in spec.split(":"))
        return platforms[p].get_devices()[d]
    for platform in platforms:
        gpus = platform.get_devices(device_type=cl.device_type.GPU)
        if gpus:
            return gpus[0]
    for platform in platforms:
        devices = platform.get_devices()
        if devices:
            return devices[0]
    raise RuntimeError("no OpenCL device")


def check(np, a, b, c):
    """Largest |C - A B| / (|A| |B|) over the checked entries, in float64."""
    m, k = a.shape
    n = b.shape[1]

    def relative(got, exact, scale):
        err = np.abs(got.astype(np.float64) - exact)
        return float(np.max(err / np.maximum(scale, np.finfo(np.float64).tiny)))

    if m * n * k <= FULL_CHECK_LIMIT:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        return "full", relative(c, a64 @ b64, np.abs(a64) @ np.abs(b64))
    rng = np.random.default_rng(12345)
    rows = np.sort(rng.choice(m, size=min(m, SAMPLED), replace=False))
    cols = np.sort(rng.choice(n, size=min(n, SAMPLED), replace=False))
    b64 = b.astype(np.float64)
    a_rows = a[rows].astype(np.float64)
    worst = relative(c[rows], a_rows @ b64, np.abs(a_rows) @ np.abs(b64))
    del b64
    a64 = a.astype(np.float64)
    b_cols = b[:, cols].astype(np.float64)
    worst = max(worst, relative(c[:, cols], a64 @ b_cols, np.abs(a64) @ np.abs(b_cols)))
    return f"{len(rows)}rows+{len(cols)}cols", worst


def bench(args):
    try:
        import numpy as np
        import pyopencl as cl
        import pyopencl.array as cl_array
        import pyclblast
    except ImportError as e:
        print(f"bench-pyclblast: {e} (PYTHONPATH must hold pyopencl and pyclblast)",
              file=sys.stderr)
        return 2
    shapes = parse_shapes(args.shapes)
    device = pick_device(cl, args.device)
    context = cl.Context([device])
    queue = cl.CommandQueue(context)
    environment = {name: os.environ.get(name, "") for name in
                   ("LD_PRELOAD", "LD_LIBRARY_PATH", "GEMMTUNE_CLBLAST", "GEMMTUNE_DB",
                    "GEMMTUNE_SYSTEM_DATABASES")}
    report = {
        "format": FORMAT, "schema_version": SCHEMA_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "label": args.label,
        "device": {"name": device.name.strip(), "platform": device.platform.name.strip(),
                   "driver_version": device.driver_version.strip()},
        "python": sys.version.split()[0], "numpy": np.__version__,
        "pyopencl": ".".join(str(v) for v in cl.VERSION), "pyclblast": pyclblast.__file__,
        "environment": environment,
        "precision": "single", "layout": "row", "runs": args.runs, "warmup": args.warmup,
        "timing": "host clock around each call to the return of event.wait() and "
                  "queue.finish(); the median of the runs",
        "check_tolerance": "16 sqrt(K) float32 epsilons of |A| |B|",
        "shapes": [],
    }
    header = (f"bench-pyclblast ({args.label}): single precision on {report['device']['name']} "
              f"({report['device']['platform']}), row-major, median of {args.runs} runs after "
              f"{args.warmup} untimed")
    lines = [header]
    print(header, flush=True)
    failed = False
    rng = np.random.default_rng(1)
    for shape in shapes:
        m, n, k = shape
        entry = {"shape": shape_name(shape), "m": m, "n": n, "k": k}
        a = rng.random((m, k), dtype=np.float32) * 2 - 1
        b = rng.random((k, n), dtype=np.float32) * 2 - 1
        a_dev = cl_array.to_device(queue, a)
        b_dev = cl_array.to_device(queue, b)
        c_dev = cl_array.to_device(queue, np.zeros((m, n), dtype=np.float32))
        queue.finish()
        times = []
        try:
            for call in range(args.warmup + args.runs):
                start = time.perf_counter()
                event = pyclblast.gemm(queue, m, n, k, a_dev, b_dev, c_dev, a_ld=k, b_ld=n,
                                       c_ld=n)
                event.wait()
                queue.finish()
                seconds = time.perf_counter() - start
                if call >= args.warmup:
                    times.append(seconds)
                if call == 0 and not args.no_check:
                    kind, error = check(np, a, b, c_dev.get(queue))
                    tolerance = 16 * math.sqrt(k) * EPS32
                    entry["check"] = {"kind": kind, "max_relative_error": error,
                                      "tolerance": tolerance, "passed": error <= tolerance}
                    failed |= error > tolerance
        except RuntimeError as e:
            entry["error"] = str(e)
            failed = True
        if times:
            median = statistics.median(times)
            entry.update({"ms": median * 1e3, "ms_min": min(times) * 1e3,
                          "ms_max": max(times) * 1e3,
                          "gflops": 2.0 * m * n * k / median * 1e-9,
                          "runs_ms": [t * 1e3 for t in times]})
            line = f"bench {entry['shape']} {entry['ms']:.6f} ms {entry['gflops']:.2f} GFLOPS"
        else:
            line = f"bench {entry['shape']} error {entry.get('error', 'no timed call')}"
        if "check" in entry:
            verdict = "" if entry["check"]["passed"] else " FAILED"
            line += (f" check {entry['check']['kind']} "
                     f"{entry['check']['max_relative_error']:.2e}{verdict}")
        print(line, flush=True)
        lines.append(line)
        report["shapes"].append(entry)
        del a_dev, b_dev, c_dev, a, b
    write(args, report, lines)
    return 1 if failed else 0


LOG_LINE = re.compile(r"gemmtune_clblast: CLBlastSgemm \S+ \S+ (\d+x\d+x\d+): (\S+):")


def compare(args):
    with open(args.compare[0], encoding="utf-8") as f:
        plain = json.load(f)
    with open(args.compare[1], encoding="utf-8") as f:
        preloaded = json.load(f)
    times = {e["shape"]: e.get("ms") for e in preloaded["shapes"]}
    calls, served = {}, {}
    if args.log:
        with open(args.log, encoding="utf-8", errors="replace") as f:
            for text in f:
                # Not anchored: a log line may follow other output on the same line.
                for match in LOG_LINE.finditer(text):
                    shape = match.group(1)
                    calls[shape] = calls.get(shape, 0) + 1
                    if match.group(2) == "gemmtune":
                        served[shape] = served.get(shape, 0) + 1
    rows, ratios = [], []
    lines = [f"{'shape':<18} {'plain ms':>12} {'preloaded ms':>12} {'ratio':>8}"
             + ("  gemmtune calls" if args.log else "")]
    for entry in plain["shapes"]:
        shape = entry["shape"]
        p, q = entry.get("ms"), times.get(shape)
        ratio = p / q if p and q else None
        if ratio:
            ratios.append(ratio)
        row = {"shape": shape, "plain_ms": p, "preloaded_ms": q, "ratio": ratio}
        text = (f"{shape:<18} {p if p else float('nan'):>12.4f} {q if q else float('nan'):>12.4f} "
                f"{ratio if ratio else float('nan'):>8.3f}")
        if args.log:
            row["calls_logged"] = calls.get(shape, 0)
            row["calls_served_by_gemmtune"] = served.get(shape, 0)
            text += f"  {served.get(shape, 0)} of {calls.get(shape, 0)}"
        rows.append(row)
        lines.append(text)
    summary = {"format": FORMAT + "-comparison", "schema_version": SCHEMA_VERSION,
               "plain": args.compare[0], "preloaded": args.compare[1], "log": args.log,
               "device": plain.get("device"), "shapes": rows, "rated": len(ratios)}
    if ratios:
        summary["geometric_mean"] = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        summary["min"], summary["max"] = min(ratios), max(ratios)
        lines.append(f"plain / preloaded, geometric mean of {len(ratios)} ratios: "
                     f"{summary['geometric_mean']:.3f} (range {summary['min']:.3f} to "
                     f"{summary['max']:.3f})")
    if args.log:
        shapes = [e["shape"] for e in plain["shapes"]]
        summary["shapes_served_by_gemmtune"] = sum(
            1 for s in shapes if calls.get(s) and served.get(s) == calls.get(s))
        summary["calls_logged"] = sum(calls.values())
        summary["calls_served_by_gemmtune"] = sum(served.values())
        lines.append(f"log: {summary['calls_served_by_gemmtune']} of "
                     f"{summary['calls_logged']} CLBlastSgemm calls served by gemmtune; every "
                     f"call of {summary['shapes_served_by_gemmtune']} of {len(shapes)} shapes")
    for line in lines:
        print(line)
    write(args, summary, lines)
    return 0


def write(args, report, lines):
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    if args.text:
        with open(args.text, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default=DEFAULT_SHAPES, help="MxNxK,... or a file of them")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--device", default="", help="P:D, platform and device index "
                        "(default: the first GPU, else the first device)")
    parser.add_argument("--label", default="run")
    parser.add_argument("--no-check", action="store_true", help="skip the check against numpy")
    parser.add_argument("--compare", nargs=2, metavar=("PLAIN", "PRELOADED"),
                        help="compare two --json files instead of timing")
    parser.add_argument("--log", help="with --compare: the preloaded run's stderr")
    parser.add_argument("--json")
    parser.add_argument("--text")
    args = parser.parse_args()
    if args.runs < 1 or args.warmup < 1:
        parser.error("--runs and --warmup must be at least 1 (the first untimed call is checked)")
    try:
        return compare(args) if args.compare else bench(args)
    except ValueError as e:
        print(f"bench-pyclblast: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
