#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Refuses a Catch2 test case name that ctest cannot run.

catch_discover_tests splits the listed names at ';': a test case named "a; b" becomes two ctest
tests whose filters "a" and " b" match nothing, and Catch2 passes a run that matched nothing, so
the test case never runs and nothing fails. A name that starts with '-' is taken by the test
binary for an option when ctest passes it as the filter, so that test case fails without running.
Usage: check_test_names.py <test binary>.
"""
import subprocess
import sys

listed = subprocess.run([sys.argv[1], "--list-test-names-only"], capture_output=True, text=True,
                        check=False)
names = [n for n in listed.stdout.splitlines() if n.strip()]
if not names:
    sys.exit("check_test_names: the test binary listed no test cases:\n" + listed.stderr)
split = [n for n in names if ";" in n]
for n in split:
    print(f"test case name with ';' (ctest splits it and runs nothing): {n}")
dashed = [n for n in names if n.startswith("-")]
for n in dashed:
    print(f"test case name starting with '-' (the test binary reads it as an option): {n}")
sys.exit(1 if split or dashed else 0)
