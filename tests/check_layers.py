#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Refuses an #include that points from a layer to one above it.

The layers and what each may use are read from the top-level CMakeLists.txt (the
GEMMTUNE_LAYER_DEPS_<layer> lines), so the build and this check cannot disagree. tools/ may use
every layer; a layer may use itself and everything it links, directly or through another layer.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
cmake = (root / "CMakeLists.txt").read_text()
deps = {}
for layer, value in re.findall(r'set\(GEMMTUNE_LAYER_DEPS_(\S+)\s+("[^"]*"|\S+)\)', cmake):
    deps[layer] = [d for d in value.strip('"').split(";") if d]
if not deps:
    sys.exit("check_layers: no GEMMTUNE_LAYER_DEPS_ lines in CMakeLists.txt")


def reachable(layer, seen=None):
    seen = set() if seen is None else seen
    for dep in deps[layer]:
        if dep not in seen:
            seen.add(dep)
            reachable(dep, seen)
    return seen | {layer}


include = re.compile(r'^\s*#\s*include\s+"((?:src|search)/[^"]+)"', re.M)
faults = []
for layer in deps:
    allowed = reachable(layer)
    for path in sorted((root / layer).glob("*.[ch]pp")):
        for target in include.findall(path.read_text()):
            target_layer = str(pathlib.PurePosixPath(target).parent)
            if target_layer not in deps:
                faults.append(f"{path.relative_to(root)}: includes {target}, which is in no layer")
            elif target_layer not in allowed:
                faults.append(f"{path.relative_to(root)}: includes {target} from {target_layer}, "
                              f"which {layer} does not link")
for stray in sorted(list((root / "src").glob("*.[ch]pp")) + list((root / "search").glob("*.[ch]pp"))):
    faults.append(f"{stray.relative_to(root)}: a source outside every layer folder")
for fault in faults:
    print(fault)
sys.exit(1 if faults else 0)
