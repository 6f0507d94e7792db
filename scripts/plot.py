#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pictures of gemmtune results (PNG, matplotlib).

Inputs are recognised by content:
  journal      JSON lines (optionally .gz): header lines {"type": "header", ...} start a run;
               result lines hold a Result ({"config", "status", "gflops"}) either at the top
               level or under "result"; the evaluation index is the line's "evaluation" (or
               "index") field, else its position in the run.
  database     a gemmtune database ("format": "gemmtune-database").
  search-eval  a JSON object with "runs": [{"strategy", "seed", and either "best_gflops" (best so
               far per evaluation) or "gflops"/"results" (each evaluation)}].

Commands:
  convergence FILE... -o OUT.png           best GFLOPS against evaluations, a line per run
  heatmap JOURNAL --x P --y Q -o OUT.png   best GFLOPS over two parameters
  bars DB... -o OUT.png                    GFLOPS per shape, a bar per kernel (CLBlast included)
  all FILE... -d DIR                       every picture the inputs allow
"""

import argparse
import gzip
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


class InputError(Exception):
    pass


def open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, "r", encoding="utf-8")


def load(path):
    """Returns (kind, data): ("journal", runs), ("database", db) or ("search-eval", runs)."""
    try:
        with open_text(path) as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}")
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{path}: empty file")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        if whole.get("format") == "gemmtune-database":
            return "database", whole
        if isinstance(whole.get("runs"), list):
            return "search-eval", search_eval_runs(whole, path)
        if "config" in whole or "result" in whole:
            return "journal", journal_runs([whole], path)
        raise InputError(f"{path}: neither a journal, a gemmtune database nor a search-eval file")
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            # A writer killed mid-line leaves a partial last line; anything else is an error.
            if number == len(text.splitlines()):
                continue
            raise InputError(f"{path}: line {number} is not JSON")
    return "journal", journal_runs(lines, path)


def journal_runs(lines, path):
    runs = []
    current = None
    for obj in lines:
        if not isinstance(obj, dict):
            continue
        if obj.get("type") == "header":
            label = obj.get("strategy") or obj.get("kernel") or "run"
            if "seed" in obj:
                label += f" seed {obj['seed']}"
            current = {"label": label, "points": []}
            runs.append(current)
            continue
        result = obj.get("result", obj)
        if not isinstance(result, dict) or "gflops" not in result:
            continue
        if current is None:
            current = {"label": os.path.basename(path), "points": []}
            runs.append(current)
        index = obj.get("evaluation", obj.get("index", result.get("evaluation")))
        if index is None:
            index = len(current["points"]) + 1
        ok = result.get("status", "ok") == "ok"
        current["points"].append(
            {
                "index": int(index),
                "gflops": float(result.get("gflops", 0)) if ok else 0.0,
                "config": result.get("config", {}),
            }
        )
    runs = [r for r in runs if r["points"]]
    if not runs:
        raise InputError(f"{path}: no result lines")
    return runs


def search_eval_runs(doc, path):
    runs = []
    for i, run in enumerate(doc["runs"]):
        if not isinstance(run, dict):
            raise InputError(f"{path}: runs[{i}] is not an object")
        label = str(run.get("strategy", f"run {i}"))
        if "seed" in run:
            label += f" seed {run['seed']}"
        if isinstance(run.get("best_gflops"), list):
            values = [float(v) for v in run["best_gflops"]]
        elif isinstance(run.get("gflops"), list):
            values = [float(v) for v in run["gflops"]]
        elif isinstance(run.get("results"), list):
            values = [float(r.get("gflops", 0)) if r.get("status", "ok") == "ok" else 0.0
                      for r in run["results"]]
        else:
            raise InputError(f"{path}: runs[{i}] has no best_gflops, gflops or results list")
        points = [{"index": n + 1, "gflops": v, "config": {}} for n, v in enumerate(values)]
        runs.append({"label": label, "points": points, "strategy": run.get("strategy")})
    if not runs:
        raise InputError(f"{path}: no runs")
    return runs


def best_so_far(points):
    xs, ys, best = [], [], 0.0
    for p in sorted(points, key=lambda p: p["index"]):
        best = max(best, p["gflops"])
        xs.append(p["index"])
        ys.append(best)
    return xs, ys


def plot_convergence(sources, out):
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, runs in sources:
        for run in runs:
            xs, ys = best_so_far(run["points"])
            label = run["label"] if len(sources) == 1 else f"{name}: {run['label']}"
            ax.step(xs, ys, where="post", label=label)
    ax.set_xlabel("evaluations")
    ax.set_ylabel("best GFLOPS so far")
    ax.set_title("Search convergence")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def varying_parameters(points):
    values = {}
    for p in points:
        for k, v in p["config"].items():
            values.setdefault(k, set()).add(v)
    return sorted(k for k, v in values.items() if len(v) > 1)


def plot_heatmap(runs, x, y, out, title=""):
    points = [p for r in runs for p in r["points"]]
    cells = {}
    for p in points:
        if x not in p["config"] or y not in p["config"]:
            continue
        key = (p["config"][x], p["config"][y])
        cells[key] = max(cells.get(key, 0.0), p["gflops"])
    if not cells:
        raise InputError(f"no result sets both {x} and {y}")
    xs = sorted({k[0] for k in cells})
    ys = sorted({k[1] for k in cells})
    grid = [[cells.get((xv, yv), math.nan) for xv in xs] for yv in ys]
    fig, ax = plt.subplots(figsize=(1.2 * len(xs) + 3, 0.9 * len(ys) + 2.5))
    image = ax.imshow(grid, origin="lower", cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_yticks(range(len(ys)), [str(v) for v in ys])
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    for i, yv in enumerate(ys):
        for j, xv in enumerate(xs):
            v = cells.get((xv, yv))
            if v is not None:
                ax.text(j, i, f"{v:.0f}", ha="center", va="center", color="white", fontsize=8)
    fig.colorbar(image, ax=ax, label="best GFLOPS")
    ax.set_title(title or f"Best GFLOPS over {x} and {y}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def entry_group(key):
    return f"fp{key['precision']} {key.get('layout', 'NN')} {key['m']}x{key['n']}x{key['k']}"


def plot_bars(sources, out):
    """GFLOPS per problem, one bar per (database, kernel); CLBlast's kernels are hatched."""
    groups, series = [], []
    values = {}
    for name, db in sources:
        for e in db.get("entries", []):
            key = e["key"]
            group = entry_group(key)
            label = key["kernel"] if len(sources) == 1 else f"{name}: {key['kernel']}"
            if group not in groups:
                groups.append(group)
            if label not in series:
                series.append(label)
            ok = e.get("status", "ok") == "ok"
            values[(group, label)] = float(e.get("gflops", 0)) if ok else 0.0
    if not values:
        raise InputError("the databases hold no entries")
    width = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(groups) * max(1, len(series) / 2)), 5))
    for i, label in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        hs = [values.get((group, label), 0.0) for group in groups]
        ax.bar(xs, hs, width, label=label, hatch="//" if "clblast" in label else None)
    ax.set_xticks(range(len(groups)), groups, rotation=20, ha="right")
    ax.set_ylabel("GFLOPS")
    ax.set_title("Tuned kernels" + (" against CLBlast" if any("clblast" in s for s in series)
                                     else ""))
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def stem(path):
    base = os.path.basename(path)
    for suffix in (".gz", ".jsonl", ".json"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base


def cmd_all(files, outdir):
    os.makedirs(outdir, exist_ok=True)
    loaded = [(f, *load(f)) for f in files]
    written = []
    curves = [(stem(f), data) for f, kind, data in loaded if kind in ("journal", "search-eval")]
    if curves:
        out = os.path.join(outdir, "convergence.png")
        plot_convergence(curves, out)
        written.append(out)
    for f, kind, data in loaded:
        if kind != "journal":
            continue
        params = varying_parameters([p for r in data for p in r["points"]])
        if len(params) >= 2:
            out = os.path.join(outdir, f"heatmap-{stem(f)}-{params[0]}-{params[1]}.png")
            plot_heatmap(data, params[0], params[1], out)
            written.append(out)
    dbs = [(stem(f), data) for f, kind, data in loaded if kind == "database"]
    if dbs:
        out = os.path.join(outdir, "bars.png")
        plot_bars(dbs, out)
        written.append(out)
    return written


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("convergence", help="best GFLOPS against evaluations")
    p.add_argument("files", nargs="+")
    p.add_argument("-o", "--output", required=True)
    p = sub.add_parser("heatmap", help="best GFLOPS over two parameters of a journal")
    p.add_argument("journal")
    p.add_argument("--x", required=True)
    p.add_argument("--y", required=True)
    p.add_argument("-o", "--output", required=True)
    p = sub.add_parser("bars", help="GFLOPS per shape and kernel from databases")
    p.add_argument("files", nargs="+")
    p.add_argument("-o", "--output", required=True)
    p = sub.add_parser("all", help="every picture the inputs allow")
    p.add_argument("files", nargs="+")
    p.add_argument("-d", "--directory", required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "convergence":
            sources = []
            for f in args.files:
                kind, data = load(f)
                if kind == "database":
                    raise InputError(f"{f}: a database has no evaluation history")
                sources.append((stem(f), data))
            plot_convergence(sources, args.output)
            written = [args.output]
        elif args.command == "heatmap":
            kind, data = load(args.journal)
            if kind != "journal":
                raise InputError(f"{args.journal}: a heat map needs a journal")
            plot_heatmap(data, args.x, args.y, args.output)
            written = [args.output]
        elif args.command == "bars":
            sources = []
            for f in args.files:
                kind, data = load(f)
                if kind != "database":
                    raise InputError(f"{f}: bars need gemmtune databases")
                sources.append((stem(f), data))
            plot_bars(sources, args.output)
            written = [args.output]
        else:
            written = cmd_all(args.files, args.directory)
            if not written:
                raise InputError("nothing to plot in the inputs")
    except InputError as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    for w in written:
        print(w)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
