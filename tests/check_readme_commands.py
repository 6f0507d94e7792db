#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The README's command table against `gemmtune --help`.

Every subcommand of `gemmtune --help` has a row in README.md's "Commands" table, every command
a row names exists, and every `--option` a row shows is listed by that command's `--help`
(a subcommand's subcommands, such as `db show`, included), with every value of a list it shows
(`--format a/b/c`) named there too.
Usage: check_readme_commands.py GEMMTUNE README.md
"""
import re
import subprocess
import sys

gemmtune, readme = sys.argv[1], sys.argv[2]


def help_text(*words):
    run = subprocess.run([gemmtune, *words, "--help"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"check_readme_commands: `gemmtune {' '.join(words)} --help` failed: {run.stderr}")
    return run.stdout


def subcommands(text):
    if "Subcommands:" not in text:
        return []
    block = text.split("Subcommands:", 1)[1]
    return re.findall(r"^  (\S+)\s", block, re.M)


top = subcommands(help_text())
text = open(readme, encoding="utf-8").read()
table = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
rows = [line for line in table.splitlines() if line.startswith("| `gemmtune")]
faults = []
documented = set()
for row in rows:
    cell = row.split("|")[1]
    for usage in re.findall(r"`gemmtune ([^`]*)`", cell):
        words = usage.split()
        command = words[0]
        documented.add(command)
        if command not in top:
            faults.append(f"README names `gemmtune {command}`, which --help does not list")
            continue
        path = [command]
        nested = subcommands(help_text(command))
        # "db show/merge/lookup": each named subcommand must exist.
        if len(words) > 1 and nested:
            for name in words[1].split("/"):
                if name not in nested:
                    faults.append(f"README names `gemmtune {command} {name}`, which does not exist")
            path.append(words[1].split("/")[0])
        listed = help_text(*path)
        for option in re.findall(r"(--[a-z][a-z0-9-]*)", usage):
            if not re.search(rf"(^|[\s,]){re.escape(option)}\b", listed, re.M):
                faults.append(f"README shows `{option}` for `gemmtune {' '.join(path)}`, "
                              "which its --help does not list")
        for option, values in re.findall(r"(--[a-z][a-z0-9-]*)[ =]([\w.-]+(?:/[\w.-]+)+)", usage):
            for value in values.split("/"):
                if not re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", listed):
                    faults.append(f"README shows `{option} {value}` for `gemmtune "
                                  f"{' '.join(path)}`, which its --help does not name")
for command in top:
    if command not in documented and command != "worker":
        faults.append(f"`gemmtune {command}` has no row in README.md's command table")
for fault in faults:
    print(fault)
sys.exit(1 if faults else 0)
