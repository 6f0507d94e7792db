#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What one configuration costs to build and to measure on a GPU, in about three minutes:
#   a) builds a minute of one compile process (`gemmtune compile-worker`, as a search runs it) over
#      a fixed sample of xgemm_fast's gpu space at 2048^3, empty caches (gemmtune's and the
#      driver's: CUDA_CACHE_PATH is a fresh folder for every step);
#   b) the same with 4 and 15 processes (do builds scale with processes, or contend?);
#   c) making a program of what the compile process left, as the measuring process does: from the
#      cached binary (PTX on NVIDIA) with the driver's cache warm and cold, and from source again
#      with the driver's cache warm;
#   d) the driver's build under options that keep the kernel's semantics, straight through
#      libOpenCL (Python ctypes, the driver's cache off, the same configurations for each):
#      gemmtune's options, without -cl-nv-verbose, with -cl-nv-opt-level=2, the source without
#      the split-K reduce kernel where the configuration does not launch it, and the PTX alone;
#   e) a default search of PROBE_SEARCH_S seconds: where the measuring process's time went per
#      evaluation (steps_ms of the journal) and the compile pool's (the results file).
# Prints a table on stdout; raw outputs go to OUTDIR (at most 8 files).
#
# Usage: scripts/probe-build-cost.sh OUTDIR [DEVICE]   (from the repository root)
#   GEMMTUNE (default build/gemmtune), PROBE_CONFIGS (sample size, default 30), PROBE_SEARCH_S
#   (default 30; 0 skips e), PROBE_SEARCH_ARGS (more options of that search), PROBE_OPTION_CONFIGS
#   (configurations in d, default 8).
set -euo pipefail
out="${1:?usage: scripts/probe-build-cost.sh OUTDIR [DEVICE]}"
dev="${2:-}"
G="${GEMMTUNE:-build/gemmtune}"
[[ -x "$G" ]] || { echo "no gemmtune at $G (set GEMMTUNE)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
py="$work/probe.py"
cat >"$py" <<'PY'
import ctypes, json, os, random, re, shutil, subprocess, sys, threading, time

G, OUT, WORK, DEV = sys.argv[2:6]
ROOT = os.getcwd()
N = int(os.environ.get("PROBE_CONFIGS", "30"))
NOPT = int(os.environ.get("PROBE_OPTION_CONFIGS", "8"))
SEARCH_S = float(os.environ.get("PROBE_SEARCH_S", "30"))
PROBLEM = {"alpha": 1.0, "batch": 1, "beta": 0.0, "epilogue": "", "kernel": "xgemm_fast",
           "layout": "NN", "order": "row", "precision": "32",
           "shape": {"m": 2048, "n": 2048, "k": 2048}}
devarg = ["--device", DEV] if DEV else []
table = []


def say(line=""):
    print(line, flush=True)
    table.append(line)


def config_dict(text):
    return {k: int(v) for k, v in (p.split("=") for p in text.split(","))}


def env_with(**kw):
    e = dict(os.environ)
    e.pop("CUDA_CACHE_DISABLE", None)
    e.update({k: str(v) for k, v in kw.items()})
    return e


def sample_configs():
    listing = subprocess.run([G, "space"] + (["-d", DEV] if DEV else []) +
                             ["--kernel", "xgemm_fast", "--space", "gpu", "-s", "2048x2048x2048",
                              "--list"], check=True, capture_output=True, text=True).stdout
    rows = [l.strip() for l in listing.splitlines() if "=" in l]
    # What a search builds: kernels of more than 256 work-items are passed over on NVIDIA.
    rows = [r for r in rows if config_dict(r)["MDIMC"] * config_dict(r)["NDIMC"] <= 256]
    random.Random(7).shuffle(rows)
    return rows[:4 * N]


def drive(step, nproc, configs, cache, env, log):
    """configs over nproc compile workers; the clock starts once every worker is ready."""
    answers, lock = [], threading.Lock()
    ready = threading.Barrier(nproc + 1)
    procs = []
    for i in range(nproc):
        procs.append(subprocess.Popen([G, "compile-worker"] + devarg + ["--cache-dir", cache],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                      text=True, env=env))

    def run(i):
        p = procs[i]
        first = p.stdout.readline()
        ready.wait()
        if "ready" not in first:
            with lock:
                answers.append({"step": step, "fatal": first.strip()})
            return
        for c in configs[i::nproc]:
            p.stdin.write(json.dumps({"problem": PROBLEM, "config": config_dict(c)}) + "\n")
            p.stdin.flush()
            line = p.stdout.readline()
            if not line:  # the worker died: stderr.log says why
                with lock:
                    answers.append({"step": step, "fatal": "ended", "config": c})
                break
            a = json.loads(line)
            a.update(step=step, proc=i, config=c, t=time.time())
            with lock:
                answers.append(a)
        p.stdin.close()
        p.wait()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(nproc)]
    for t in threads:
        t.start()
    ready.wait()
    t0 = time.time()
    for t in threads:
        t.join()
    wall = time.time() - t0
    return answers, wall


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def report_drive(label, nproc, answers, wall):
    ok = [a for a in answers if "ms" in a]
    kinds = {}
    for a in ok:
        kinds[a["outcome"]] = kinds.get(a["outcome"], 0) + 1
    rate = 60 * len(ok) / wall if wall > 0 else 0
    say(f"{label:<44} {nproc:>5} {len(ok):>6} {wall:>7.1f} {rate:>9.1f} {rate / nproc:>8.1f} "
        f"{mean(a['ms'] for a in ok):>8.0f} {mean(a.get('driver_ms', 0) for a in ok):>8.0f} "
        f"{mean(a.get('cache_ms', 0) for a in ok):>6.1f}  {kinds}")


def du(path):
    total = 0
    for d, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(d, f))
    return total


# ---- d: the driver's build straight through libOpenCL ----
def harness(cache_dir):
    cl = ctypes.CDLL("libOpenCL.so.1")
    P, U, S, I = ctypes.c_void_p, ctypes.c_uint, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)
    for fn, res, args in [("clGetPlatformIDs", ctypes.c_int, [U, P, P]),
                          ("clGetDeviceIDs", ctypes.c_int, [P, ctypes.c_uint64, U, P, P]),
                          ("clGetDeviceInfo", ctypes.c_int, [P, U, S, P, P]),
                          ("clCreateContext", P, [P, U, P, P, P, I]),
                          ("clCreateProgramWithSource", P, [P, U, P, P, I]),
                          ("clCreateProgramWithBinary", P, [P, U, P, P, P, P, I]),
                          ("clBuildProgram", ctypes.c_int, [P, U, P, ctypes.c_char_p, P, P]),
                          ("clGetProgramBuildInfo", ctypes.c_int, [P, P, U, S, P, P]),
                          ("clGetProgramInfo", ctypes.c_int, [P, U, S, P, P]),
                          ("clReleaseProgram", ctypes.c_int, [P])]:
        getattr(cl, fn).restype = res
        getattr(cl, fn).argtypes = args
    num = ctypes.c_uint()
    cl.clGetPlatformIDs(0, None, ctypes.byref(num))
    plats = (P * num.value)()
    cl.clGetPlatformIDs(num.value, plats, None)

    def info(fn, obj, key):
        size = ctypes.c_size_t()
        fn(P(obj), key, 0, None, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        fn(P(obj), key, size, buf, None)
        return buf.value.decode(errors="replace")

    devices = []
    for p in plats:
        num.value = 0
        if cl.clGetDeviceIDs(P(p), 0xFFFFFFFF, 0, None, ctypes.byref(num)) != 0:
            continue
        ids = (P * num.value)()
        cl.clGetDeviceIDs(P(p), 0xFFFFFFFF, num.value, ids, None)
        for d in ids:
            kind = ctypes.c_ulong()
            cl.clGetDeviceInfo(P(d), 0x1000, 8, ctypes.byref(kind), None)
            devices.append((d, info(cl.clGetDeviceInfo, d, 0x102B), kind.value))
    pick = [d for d in devices if DEV and not re.fullmatch(r"[\d:]+", DEV) and DEV in d[1]]
    pick = pick or [d for d in devices if d[2] & 4] or devices
    dev, name = pick[0][0], pick[0][1]
    err = ctypes.c_int()
    ctx = cl.clCreateContext(None, 1, ctypes.byref(P(dev)), None, None, ctypes.byref(err))

    def build(source=None, binary=None, options=""):
        t0 = time.time()
        if binary is None:
            src = ctypes.c_char_p(source.encode())
            prog = cl.clCreateProgramWithSource(P(ctx), 1, ctypes.byref(src), None,
                                                ctypes.byref(err))
        else:
            size = ctypes.c_size_t(len(binary))
            data = ctypes.c_char_p(binary)
            status = ctypes.c_int()
            prog = cl.clCreateProgramWithBinary(P(ctx), 1, ctypes.byref(P(dev)),
                                                ctypes.byref(size), ctypes.byref(data),
                                                ctypes.byref(status), ctypes.byref(err))
        rc = cl.clBuildProgram(P(prog), 1, ctypes.byref(P(dev)), options.encode(), None, None)
        ms = (time.time() - t0) * 1e3
        size = ctypes.c_size_t()
        cl.clGetProgramBuildInfo(P(prog), P(dev), 0x1183, 0, None, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        cl.clGetProgramBuildInfo(P(prog), P(dev), 0x1183, size, log, None)
        out = b""
        if rc == 0 and binary is None:
            bsize = ctypes.c_size_t()
            cl.clGetProgramInfo(P(prog), 0x1165, ctypes.sizeof(bsize), ctypes.byref(bsize), None)
            buf = ctypes.create_string_buffer(bsize.value)
            cl.clGetProgramInfo(P(prog), 0x1166, ctypes.sizeof(P), ctypes.byref(
                ctypes.cast(buf, P)), None)
            out = buf.raw
        cl.clReleaseProgram(P(prog))
        text = log.value.decode(errors="replace")
        regs = [int(r) for r in re.findall(r"Used (\d+) registers", text)]
        return {"rc": rc, "ms": ms, "registers": regs}, out

    # gemmtune's source: the template with its #include lines expanded once each.
    def expand(path, seen):
        if path in seen:
            return ""
        seen.add(path)
        text = []
        for line in open(path).read().splitlines():
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            text.append(expand(os.path.join(os.path.dirname(path), m.group(1)), seen)
                        if m else line + "\n")
        return "".join(text)

    source = expand(os.path.join(ROOT, "kernel_templates", "xgemm_fast.cl"), set())
    cut = source.find("#undef GT_BATCH_GROUPS_Z\n#define GT_BATCH_GROUPS_Z 1\n__kernel void "
                      "XgemmFastReduce")
    no_reduce = source[:cut] if cut > 0 else None
    # gemmtune's options per configuration: the identity line of each binary cache entry, which
    # also names the source by gemmtune's hash (src/device/binary_cache.cpp).
    def hash128(text):
        m64 = (1 << 64) - 1
        h = 0xcbf29ce484222325
        for c in text:
            h = ((h ^ c) * 0x100000001b3) & m64
        g = 0x9e3779b97f4a7c15 ^ len(text)
        for c in text:
            g = ((g ^ c) * 0xff51afd7ed558ccd) & m64
            g = ((g << 31) | (g >> 33)) & m64
        for shift, mul in [(30, 0xbf58476d1ce4e5b9), (27, 0x94d049bb133111eb)]:
            g = ((g ^ (g >> shift)) * mul) & m64
        g ^= g >> 31
        return f"{h:016x}{g:016x}"

    same_source = None
    options = []
    kdir = os.path.join(cache_dir, "kernels")
    for f in sorted(os.listdir(kdir)):
        header = json.loads(open(os.path.join(kdir, f), "rb").readline())
        opts = re.search(r"^options=(.*)$", header["identity"], re.M).group(1)
        if same_source is None:
            same_source = re.search(r"^source=(.*)$", header["identity"], re.M).group(1) == \
                hash128(source.encode())
        unused = "-DSPLITK=1 " in opts + " " or "-DKREDUCE=1 " in opts + " "
        if unused or no_reduce is None:
            options.append(opts)
    options = options[:NOPT]
    build(source="__kernel void warm(__global int* x) { x[0] = 1; }")  # the compiler's start
    rows = []
    nv = "nvidia" in name.lower() or "-cl-nv-verbose" in " ".join(options)
    for i, opts in enumerate(options):
        plain = " ".join(o for o in opts.split() if o != "-cl-nv-verbose")
        variants = [("gemmtune", source, opts)]
        if nv:
            variants += [("no-verbose", source, plain),
                         ("opt-level-2", source, opts + " -cl-nv-opt-level=2")]
        if no_reduce:
            variants.append(("no-reduce", no_reduce, opts))
        # A different order per configuration, so that no variant always comes first.
        k = i % len(variants)
        variants = variants[k:] + variants[:k]
        binary = b""
        for label, src, o in variants:
            r, b = build(source=src, options=o)
            if label == "gemmtune":
                binary = b
            rows.append(dict(r, variant=label, config=i, options=o))
        if binary:
            r, _ = build(binary=binary, options=opts)
            rows.append(dict(r, variant="from-binary", config=i, options=opts))
    print(json.dumps({"device": name, "configs": len(options), "same_source": same_source}))
    for r in rows:
        print(json.dumps(r))


def options_table(lines):
    head = json.loads(lines[0])
    rows = [json.loads(l) for l in lines[1:]]
    base = mean(r["ms"] for r in rows if r["variant"] == "gemmtune" and r["rc"] == 0)
    say(f"d) {head['device']}, {head['configs']} configurations, driver cache off, one process"
        f"{'' if head['same_source'] else ' (NOT gemmtune source text: check the expansion)'}:")
    for v in ["gemmtune", "no-verbose", "opt-level-2", "no-reduce", "from-binary"]:
        vs = [r for r in rows if r["variant"] == v]
        if not vs:
            continue
        ok = [r for r in vs if r["rc"] == 0]
        ms = mean(r["ms"] for r in ok)
        regs = mean(max(r["registers"] or [0]) for r in ok)
        note = {"gemmtune": "gemmtune's options (source -> program)",
                "no-verbose": "without -cl-nv-verbose",
                "opt-level-2": "with -cl-nv-opt-level=2 (ptxas -O2)",
                "no-reduce": "source without XgemmFastReduce",
                "from-binary": "from the PTX/binary (ptxas alone on NVIDIA)"}[v]
        say(f"   {note:<44} {ms:>7.0f} ms a build ({ms / base if base else 0:.2f}x)"
            f"{'' if len(ok) == len(vs) else f', {len(vs) - len(ok)} failed'}"
            f"{f', main kernel {regs:.0f} registers' if regs else ''}")


def search_table(log):
    env = env_with(XDG_CACHE_HOME=f"{WORK}/xdg-search", CUDA_CACHE_PATH=f"{WORK}/nv-search",
                   POCL_CACHE_DIR=f"{WORK}/nv-search-pocl")
    sdir = f"{WORK}/search"
    with open(f"{OUT}/search.log", "w") as f:
        subprocess.run([G, "search"] + (["-d", DEV] if DEV else []) +
                       ["-s", "2048x2048x2048", "--time-budget", str(SEARCH_S), "--seed", "7",
                        "--out", sdir, "--no-db"] + os.environ.get("PROBE_SEARCH_ARGS", "").split(),
                       stdout=f, stderr=subprocess.STDOUT, env=env)
    journal = [json.loads(l) for l in open(f"{sdir}/search-xgemm_fast.journal.jsonl")]
    results = json.load(open(f"{sdir}/search-xgemm_fast.json"))
    for src, dst in [(f"{sdir}/search-xgemm_fast.journal.jsonl", "search-journal.jsonl"),
                     (f"{sdir}/search-xgemm_fast.json", "search-results.json")]:
        open(f"{OUT}/{dst}", "w").write(open(src).read())
    rs = [e["result"] for e in journal if e.get("type") != "header" and "result" in e]
    steps = [r.get("steps_ms", {}) for r in rs]
    ok = [r for r in rs if r["status"] == "ok"]
    m = results["metadata"]
    elapsed = results["results"][0]["elapsed_s"]
    pool = m.get("compile_pool") or {}
    say(f"e) default search, {SEARCH_S:g} s: {len(rs)} evaluations, "
        f"{m['evaluations_per_minute']:.1f} a minute ({elapsed / max(1, len(rs)) * 1e3:.1f} ms "
        f"each); bounded by {m['bounded_by']} (summary: {m['device_time_s']})")
    step_ms = {k: mean(s.get(k, 0) for s in steps) for k in ["program", "verify", "timing"]}
    t = {k: mean(r["time"].get(k, 0) for r in ok) for k in ["runs", "calls", "mean_ms"]}
    recorded = mean(r["time"]["runs"] * r["time"]["mean_ms"] for r in ok)
    say(f"   the measuring process, ms an evaluation: program {step_ms['program']:.1f}, verify "
        f"{step_ms['verify']:.1f}, timing {step_ms['timing']:.1f} ({t['runs']:.1f} samples of "
        f"{t['calls']:.1f} calls at {t['mean_ms']:.3f} ms; the summary counts {recorded:.1f})")
    if pool:
        n, procs = pool.get("built", 0), pool.get("starts", 0)
        busy = pool.get("build_s", 0) / max(1e-9, elapsed * max(1, procs))
        say(f"   compile pool: {n} built by {procs} processes, "
            f"{pool.get('build_s', 0) / max(1, n) * 1e3:.0f} ms a build "
            f"({pool.get('driver_s', 0) / max(1, n) * 1e3:.0f} in the driver), busy {busy:.0%} "
            f"of their time; the measurement waited {pool.get('wait_s', 0):.1f} s for builds "
            f"({pool.get('waited', 0)} times) and took {pool.get('load_s', 0):.1f} s to load them")


def main():
    if sys.argv[1] == "harness":
        return harness(sys.argv[6])
    log = open(f"{OUT}/stderr.log", "w")
    configs = sample_configs()
    with open(f"{OUT}/env.txt", "a") as f:
        f.write("configurations (seed 7 sample of the gpu space, 2048^3):\n" +
                "\n".join(configs) + "\n")
    base = configs[:N]
    say(f"{'step':<44} {'procs':>5} {'builds':>6} {'wall s':>7} {'a minute':>9} "
        f"{'/proc':>8} {'ms each':>8} {'driver':>8} {'cache':>6}  outcomes")
    allrows = []

    def step(label, key, nproc, cfgs, cache, nvcache, **env):
        # PoCL (a machine without a GPU) gets a cache of its own per step as well.
        rows, wall = drive(key, nproc, cfgs, cache,
                           env_with(CUDA_CACHE_PATH=nvcache, POCL_CACHE_DIR=nvcache + "-pocl",
                                    **env), log)
        report_drive(label, nproc, rows, wall)
        allrows.extend(rows)

    step("a) source -> program, empty caches", "a", 1, base, f"{WORK}/bc-a", f"{WORK}/nv-a")
    nv_bytes = du(f"{WORK}/nv-a")
    step("b) the same, 4 processes", "b4", 4, configs[:4 * N], f"{WORK}/bc-b4", f"{WORK}/nv-b4")
    step("b) the same, 15 processes", "b15", 15, configs[:4 * N], f"{WORK}/bc-b15",
         f"{WORK}/nv-b15")
    # What a measuring process does with a compile process's build: a program from the binary.
    for key in ["c1", "c2"]:
        shutil.copytree(f"{WORK}/bc-a", f"{WORK}/bc-{key}")
    step("c) binary -> program, driver cache warm", "c1", 1, base, f"{WORK}/bc-c1", f"{WORK}/nv-a")
    step("c) binary -> program, driver cache cold", "c2", 1, base, f"{WORK}/bc-c2",
         f"{WORK}/nv-c2")
    step("c) source -> program again, driver cache warm", "c3", 1, base, f"{WORK}/bc-c3",
         f"{WORK}/nv-a")
    say(f"   the driver's cache after a): {nv_bytes / 1024:.0f} KiB for {len(base)} builds")
    with open(f"{OUT}/builds.jsonl", "w") as f:
        for r in allrows:
            f.write(json.dumps(r) + "\n")
    harness_out = subprocess.run(
        [sys.executable, __file__, "harness", G, OUT, WORK, DEV, f"{WORK}/bc-a"],
        capture_output=True, text=True,
        env=env_with(CUDA_CACHE_DISABLE=1, POCL_CACHE_DIR=f"{WORK}/pocl-harness"))
    open(f"{OUT}/options.jsonl", "w").write(harness_out.stdout)
    log.write(harness_out.stderr)
    lines = harness_out.stdout.splitlines()
    if harness_out.returncode == 0 and lines:
        options_table(lines)
    else:
        say(f"d) the libOpenCL harness failed (exit {harness_out.returncode}): stderr.log")
    if SEARCH_S > 0:
        search_table(log)
    open(f"{OUT}/summary.txt", "w").write("\n".join(table) + "\n")


main()
PY
{
  date -u
  nproc
  nvidia-smi -L 2>/dev/null || true
  "$G" devices 2>&1 || true
} >"$out/env.txt"
python3 "$py" run "$G" "$out" "$work" "$dev"
