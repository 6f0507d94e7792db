# SPDX-License-Identifier: Apache-2.0
"""A file of configurations to measure, in the database format that `gemmtune search
--space-from` reads (scripts/cover-configs.py, scripts/entry-variants.py), and a database's
entries rewritten as a database of their own for `gemmtune bench` (scripts/splitk-entries.py,
scripts/kslice-entries.py).

A database holds one entry per shape, so configuration J stands at the placeholder shape 1x1xJ
with 1 GFLOPS (the format wants a positive rate) and the space SPACE: no measurement.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
from datetime import datetime, timezone


# gemmtune's words for a name or value the kernel does not have at all, as against a combination
# its constraints refuse: the former is the user's mistake, not a configuration to leave out.
NOT_IN_KERNEL = ("is not an allowed value", "has no parameter")


def refusal(gemmtune, kernel, params):
    """None where the kernel's template allows the configuration `params`, else gemmtune's reason
    (`gemmtune space --check`)."""
    text = ",".join(f"{name}={value}" for name, value in sorted(params.items()))
    out = subprocess.run([gemmtune, "space", "--kernel", kernel, "--space", "full", "--check", text],
                         capture_output=True, text=True)
    if out.returncode == 0:
        return None
    lines = out.stderr.strip().splitlines()
    return lines[-1] if lines else f"gemmtune space --check exited {out.returncode}"


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def write_space(path, source, kernel, configurations, space):
    """Writes `configurations` (parameter dicts) of `kernel` to `path` under the device, format
    and metadata of the database `source` (parsed JSON)."""
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    entries = [{
        "key": {"kernel": kernel, "precision": "32", "layout": "NN", "order": "row", "batch": 1,
                "m": 1, "n": 1, "k": j + 1},
        "parameters": params, "gflops": 1.0, "max_error": 0.0, "alpha": 1.0, "beta": 0.0,
        "found": {"space": space, "strategy": space, "evaluations": 0, "seed": 0, "date": date,
                  "gemmtune_version": "0.1.0"}} for j, params in enumerate(configurations)]
    db = {key: source[key] for key in ("format", "schema_version", "device", "metadata")}
    db["entries"] = entries
    write_atomically(path, json.dumps(db, indent=1))


def read_json_with(path, script, what, key):
    """The JSON object at `path` (gzipped where it ends in .gz) that holds `key`, or the script's
    one-line exit naming `what` it should have been."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt") as f:
            data = json.load(f)
        data[key]
        return data
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"{script}: cannot read {what} from '{path}': {e}")


def name_value(text):
    """NAME=V with V an integer, as (NAME, V): an argparse type for options that set parameters."""
    name, _, value = text.partition("=")
    try:
        return name, int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants NAME=INTEGER, got '{text}'")


def assigned(gemmtune, kernel, params, values, script, option):
    """`params` with `values` (NAME, V pairs) set, or None where the template's constraints refuse
    the result (a configuration to leave out and count). A name or value the kernel does not have
    at all is the user's mistake: the script's one-line exit, naming `option`."""
    params = dict(params, **dict(values))
    reason = refusal(gemmtune, kernel, params) if values else None
    if reason is None:
        return params
    if any(words in reason for words in NOT_IN_KERNEL):
        sys.exit(f"{script}: {option}: {reason.split(': ')[-1]}")
    return None


def bench_entry(kernel, precision, m, n, k, params):
    """A row-major NN entry of one GEMM at m x n x k for `gemmtune bench` to measure (its rate a
    placeholder: bench writes the measured one)."""
    return {"key": {"kernel": kernel, "precision": precision, "layout": "NN", "order": "row",
                    "batch": 1, "m": m, "n": n, "k": k},
            "parameters": params, "status": "ok", "gflops": 1.0, "alpha": 1.0, "beta": 0.0}


def read_database(path, script):
    """The database at `path` (parsed JSON with entries), or the script's one-line exit."""
    return read_json_with(path, script, "a database", "entries")


def write_entries(path, db, entries):
    """Writes `entries` to `path` under the device, format and metadata of the database `db`, with
    no cross-measurements: a database that `gemmtune bench` measures entry by entry."""
    out = dict(db, entries=entries, measurements=[])
    write_atomically(path, json.dumps(out, indent=1) + "\n")
