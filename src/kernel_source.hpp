// The OpenCL source of a kernel template and the options it is built with. Templates are data:
// the host expands `#include "file"` lines itself (so that the binary cache key covers every
// line that is compiled) and adds only -D defines and the device profile's options.
#pragma once

#include <string>

#include "src/configuration.hpp"
#include "src/problem.hpp"

namespace gemmtune {

// Reads `file` from `dir` and replaces each line `#include "name"` by the named file, looked up
// beside the including file; each file is included once. Throws Error naming the file (and the
// including line) when something is missing.
std::string load_kernel_source(const std::string& dir, const std::string& file);

// The OpenCL C define of a precision: 16, 32 or 64 (16acc32 compiles as 16 for now).
int precision_define(Precision precision);

// "-DNAME=VALUE ..." for every parameter (sorted by name), then PRECISION, TRANSA, TRANSB and any
// `extra` options (the device profile's build_options, vendor flags).
std::string build_options(const Configuration& config, Precision precision, bool trans_a,
                          bool trans_b, const std::string& extra);

// The build log trimmed for a Result message: blank lines dropped, at most `max_lines` lines and
// `max_chars` characters, with a note of what was cut.
std::string trim_build_log(const std::string& log, size_t max_lines = 30, size_t max_chars = 3000);

}  // namespace gemmtune
