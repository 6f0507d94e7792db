#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Refuses a test file that does not mirror what it tests.

Tests mirror the tree: tests/<folder>/test_<name>.<ext> tests the file <name> of <folder> (src/<layer>,
search/<layer>, tools, tools/python, scripts), or one topic of it as test_<name>_<topic>.<ext>.
A script's '-' reads as '_' (scripts/slurm-shards.sh: tests/scripts/test_slurm_shards.cpp). The
one exception is tests/tools/test_cli[_<topic>].cpp: the command line as a whole (error paths,
exit codes, outputs) across commands. Files not named test_* are helpers and are not checked.
The C++ test files of the gemmtune_tests executable compile in unity batches, so each keeps what it
declares in a namespace named after its path: tests/src/db/test_journal.cpp opens
`namespace gemmtune_tests::src_db_test_journal {`.
Usage: check_test_layout.py [<source root>].
"""
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[1])
tests = root / "tests"
TEST_SUFFIXES = {".cpp", ".c", ".py"}
CROSS_COMMAND = "cli"


def source_stems(folder):
    """The names a test in the mirror of `folder` may take: its files' stems, '-' as '_'."""
    stems = set()
    for path in folder.rglob("*"):
        if path.is_file():
            stems.add(path.name.split(".")[0].replace("-", "_"))
    return stems


faults = []
for test in sorted(tests.rglob("test_*")):
    if test.suffix not in TEST_SUFFIXES or test.parent == tests:
        continue  # tests/test_main.cpp is the test binary's entry point
    mirrored = root / test.parent.relative_to(tests)
    rel = test.relative_to(root)
    if not mirrored.is_dir():
        faults.append(f"{rel}: mirrors {mirrored.relative_to(root)}, which is no folder of the tree")
        continue
    name = test.stem[len("test_"):]
    if mirrored == root / "tools" and (name == CROSS_COMMAND or name.startswith(CROSS_COMMAND + "_")):
        continue
    stems = source_stems(mirrored)
    if not any(name == s or name.startswith(s + "_") for s in stems):
        faults.append(f"{rel}: names no file of {mirrored.relative_to(root)} (test_<file>.cpp or "
                      f"test_<file>_<topic>.cpp)")
# tests/src/api builds executables of its own, one file at a time.
for test in sorted(tests.rglob("test_*.cpp")):
    rel = test.relative_to(tests)
    if test.parent == tests or rel.parts[:2] == ("src", "api"):
        continue
    namespace = "gemmtune_tests::" + "_".join(rel.with_suffix("").parts)
    if f"namespace {namespace} {{" not in test.read_text():
        faults.append(f"tests/{rel}: declares nothing in `namespace {namespace} {{` (its unity batch "
                      f"would share its names with other files)")
for fault in faults:
    print(fault)
sys.exit(1 if faults else 0)
