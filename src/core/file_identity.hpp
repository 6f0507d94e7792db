// SPDX-License-Identifier: Apache-2.0
// Whether two paths name one file, and the check every command makes before it writes: an output
// must never replace one of the files the command reads (a database lost to `-o`).
#pragma once

#include <string>
#include <vector>

namespace gemmtune {

// True when `a` and `b` both exist and are the same file (device and inode): "D.json",
// "./D.json" and a link to it are one file. False when either does not exist.
bool same_file(const std::string& a, const std::string& b);

// One input of a command: its path and the option (or argument) that named it.
struct NamedInput {
  std::string path;  // "" = not given (skipped)
  std::string option;
};

// Throws Error(kInvalidArgument) naming both options when `output` (written by `option`) is the
// same file as one of `inputs`. An empty `output` is never refused.
void check_output_not_input(const std::string& output, const std::vector<NamedInput>& inputs,
                            const std::string& option);

// True when `path` is a readable JSON object whose "format" field is `format`; false for a
// missing, unreadable or other file (its faults are named where it is read, not here).
bool file_has_format(const std::string& path, const std::string& format);

// Throws Error(kInvalidArgument) when `output` (written by `option`) is a file whose "format" is
// `format` (described as `what`, "a tuned database"): a command replaces such a file only with
// --force, which the caller checks.
void check_not_replacing(const std::string& output, const std::string& option,
                         const std::string& format, const std::string& what);

}  // namespace gemmtune
