// SPDX-License-Identifier: Apache-2.0
// The OpenCL source of a kernel template and the options it is built with. Templates are data:
// the host expands `#include "file"` lines itself (so that the binary cache key covers every
// line that is compiled) and adds only -D defines and the device profile's options.
#pragma once

#include <map>
#include <string>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

// Reads `file` from `dir` and replaces each line `#include "name"` by the named file, looked up
// beside the including file; each file is included once. Throws Error naming the file (and the
// including line) when something is missing.
// `dir` may also name a folder registered with register_source_folder: its files are then read
// from memory.
std::string load_kernel_source(const std::string& dir, const std::string& file);

// The files of a template folder held in memory (a library carries its templates compiled in, so
// that nothing needs to be on disk at run time): file name -> text.
using SourceTable = std::map<std::string, std::string>;
// load_kernel_source on `files` instead of a folder on disk.
std::string expand_kernel_source(const SourceTable& files, const std::string& file);
// Makes load_kernel_source(dir, ...) read from `files` (which must outlive the registration);
// null removes the registration. `dir` should be a name no real folder has, e.g. "<memory>/x".
void register_source_folder(const std::string& dir, const SourceTable* files);

// The OpenCL C define of a precision: 16, 32, 64, or 1632 for 16acc32 (half in memory, float
// arithmetic; see kernel_templates/common.cl).
int precision_define(Precision precision);

// The padding helper (kernel_templates/pad.cl), which copies operands into padded or aligned
// scratch and results back: its file, its kernel, its work-group side (kLocal x kLocal) and the
// rows of a column each work-item copies (kRows, the PAD_ROWS define of its build). The host that
// launches it and the offline build read them here.
struct PadHelper {
  static constexpr const char* kSource = "pad.cl";
  static constexpr const char* kEntry = "pad_copy";
  static constexpr int64_t kLocal = 16;
  static constexpr int64_t kRows = 4;
};
// "-DPRECISION=p -DPAD_ROWS=r": the padding helper's defines for `precision`.
std::string pad_helper_options(Precision precision);

// The BATCH_LAYOUT define of a problem: 0 for a single GEMM (batch 1, whatever its layout),
// 1 for a strided batch, 2 for an offsets batch.
int batch_layout_define(const Problem& problem);

// "-DBIAS=b -DACTIVATION=a" for the problem's epilogue, "" for none. BIAS counts in the kernel's
// view: the user's bias per column of C is per view row (1) for a row-major problem, whose view
// swaps M and N, and per view column (2) for a column-major one.
std::string epilogue_defines(const Problem& problem);

// "-DNAME=VALUE ..." for every parameter (sorted by name), then PRECISION, TRANSA, TRANSB,
// BATCH_LAYOUT when not 0 (so single GEMMs build exactly as before batching existed) and any
// `extra` options (the device profile's build_options, vendor flags).
std::string build_options(const Configuration& config, Precision precision, bool trans_a,
                          bool trans_b, const std::string& extra, int batch_layout = 0);

// Every option `config` of `spec` is built with for `problem` on a device with `limits`: the
// defines of build_options but those of the template's runtime parameters (which are kernel
// arguments; in the kernel's view: transposes after the row-major swap), the
// problem's epilogue defines, `profile_build_options` (the device profile's build_options and any
// vendor flags the caller adds) and the register cap the way the device applies it. The one
// composition of a kernel's options: the evaluators and the binary cache key use it, and so can
// a compiler outside OpenCL.
std::string kernel_build_options(const KernelSpec& spec, const Problem& problem,
                                 const Configuration& config, const DeviceLimits& limits,
                                 const std::string& profile_build_options);

// The build log trimmed for a Result message: blank lines dropped, at most `max_lines` lines and
// `max_chars` characters, with a note of what was cut.
std::string trim_build_log(const std::string& log, size_t max_lines = 30, size_t max_chars = 3000);

}  // namespace gemmtune
