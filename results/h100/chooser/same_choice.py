#!/usr/bin/env python3
"""For each bench-suite JSON: does the gemmtune (direct) column run what the library column ran?
Prints one line per row and a total; exits 1 when any row differs."""
import json
import sys

differ = rows = 0
for path in sys.argv[1:]:
    report = json.load(open(path))
    for r in report["rows"]:
        chosen, lib = r.get("chosen"), r.get("library_choice")
        if not chosen or not lib:
            print(f"{path}: {r.get('shape')}: a column has no choice (chosen={bool(chosen)}, library={bool(lib)})")
            differ += 1
            rows += 1
            continue
        direct = ",".join(f"{k}={v}" for k, v in sorted(chosen["parameters"].items()))
        library = ",".join(sorted(lib["parameters"].split(",")))
        same = chosen["kernel"] == lib["kernel"] and direct == library
        rows += 1
        differ += not same
        print(f"{path}: {r.get('shape')} {'same' if same else 'DIFFERENT'}: {chosen['kernel']} "
              f"{direct}" + ("" if same else f" | library {lib['kernel']} {library}"))
print(f"{rows - differ} of {rows} rows ran the same configuration in both columns")
sys.exit(1 if differ else 0)
