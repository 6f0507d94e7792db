// SPDX-License-Identifier: Apache-2.0
// Running the external compiler tools of an offline target: one program with its arguments, its
// standard output and error captured together, no shell in between.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gemmtune {

struct ProcessResult {
  int exit_code = -1;  // the program's exit status; -1 when it could not start or was killed
  std::string output;  // standard output and standard error, interleaved as written
};

// Runs argv[0] (a path, or a name looked up on PATH) with the rest as arguments and waits.
ProcessResult run_process(const std::vector<std::string>& argv);

// The first of `names` that is an executable file on PATH (or, when a name holds a '/', that file),
// as a path; nullopt when none is.
std::optional<std::string> find_program(const std::vector<std::string>& names);

}  // namespace gemmtune
