// SPDX-License-Identifier: Apache-2.0
// Options shared by several subcommands, defined once: the global options, the problem group
// (what is computed) and the measurement group (how it is timed), and the number checks that
// refuse bad values while the command line is parsed.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/core/problem.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/evaluator_factory.hpp"

namespace gemmtune::cli {

struct GlobalOptions {
  bool verbose = false;
  bool quiet = false;
  std::string log_level;
  std::string templates_dir;  // --templates
  std::string devices_dir;    // --devices
};

// The global options; main lets them through to every subcommand, so that they may stand
// before or after it.
void add_global_options(CLI::App& app, GlobalOptions& options);
// Applies -v/--quiet/--log-level; called once, after parsing, before any subcommand runs.
void apply_logging(const GlobalOptions& options);
// The global options as arguments, for a child process of this binary (the search worker).
std::vector<std::string> global_arguments(const GlobalOptions& options);

// Resolves the data folders (honouring the overrides).
std::string templates_dir(const GlobalOptions& options);
std::string devices_dir(const GlobalOptions& options);
ProfileSet load_profiles(const GlobalOptions& options);

// --device SELECTOR on a subcommand.
void add_device_option(CLI::App& cmd, std::string& selector);

// ---- numbers, checked at parse time ----
// CLI11 takes "nan", "inf" and out-of-range integers (clamped) without complaint; these checks
// refuse them, so that a bad value is a one-line parse error (exit 2) naming the option.
// A whole number in [min, max], its text within the range of the type.
CLI::Validator whole_number(int64_t min, int64_t max = std::numeric_limits<int64_t>::max());
// A finite number in [min, max] (min_open: min itself excluded).
CLI::Validator finite_number(double min = -std::numeric_limits<double>::max(),
                             double max = std::numeric_limits<double>::max(),
                             bool min_open = false);
// An unsigned 64-bit seed, its text within range.
CLI::Validator seed_number();
// Any text but the empty one, for options whose empty value would silently mean "not given".
CLI::Validator non_empty_text();

// ---- the problem group: what a command computes ----
// Which options of the group a command takes.
enum ProblemFields : unsigned {
  kPrecision = 1u << 0,    // --precision
  kLayoutOrder = 1u << 1,  // --layout, --order
  kScaling = 1u << 2,      // --alpha, --beta
  kBatch = 1u << 3,        // --batch, --batch-layout
  kEpilogue = 1u << 4,     // --epilogue
  kShapeList = 1u << 5,    // -s/--shapes LIST, --shapes-file
  kOneShape = 1u << 6,     // -s/--shape MxNxK, or -m/-n/-k
  kMnk = 1u << 7,          // -m/-n/-k only (defaults as set before adding)
  kWholeProblem = kPrecision | kLayoutOrder | kScaling | kBatch | kEpilogue,
};

struct ProblemOptions {
  std::string precision = "32";
  std::string layout = "NN";
  std::string order = "row";
  double alpha = 1.0, beta = 0.0;
  int64_t batch = 1;
  std::string batch_layout = "strided";
  std::string epilogue;
  std::string shapes;  // -s: a list (kShapeList) or one shape (kOneShape)
  std::string shapes_file;
  int64_t m = 0, n = 0, k = 0;  // 0 = not given (kOneShape)

  // The options added, by long name without dashes ("precision", "shapes", ...): a resumed
  // search takes from its journal what was not given again.
  std::map<std::string, CLI::Option*> added;

  // The problem without its shape, each value checked (throws Error naming it).
  Problem problem() const;
  // The shapes of -s/--shapes and --shapes-file, in that order (kShapeList); empty when none.
  std::vector<Shape> shape_list() const;
  // The one shape of -s/--shape or -m/-n/-k (kOneShape, kMnk); nullopt when none was given.
  std::optional<Shape> one_shape() const;
  // Both refuse a shape whose matrices (with --batch) exceed the kernels' 32-bit indices.
};

void add_problem_options(CLI::App& cmd, ProblemOptions& o, unsigned fields);

// ---- the measurement group: how a command times and builds ----
enum MeasureFields : unsigned {
  kWarmup = 1u << 0,          // --warmup
  kRuns = 1u << 1,            // --min-runs, --min-time-ms, --max-runs
  kDataSeed = 1u << 2,        // --seed (the input data's)
  kCacheDir = 1u << 3,        // --cache-dir
  kCompileThreads = 1u << 4,  // --compile-threads
  kTiming = kWarmup | kRuns,
};

// Other spellings that commands accepted before the group existed (bench: --cache, --data-seed).
struct MeasureSpelling {
  std::string cache_dir = "--cache-dir";
  std::string seed = "--seed";
};

// Adds the options to `o` (its current values are the defaults shown in --help).
void add_measure_options(CLI::App& cmd, EvaluatorOptions& o, unsigned fields,
                         const MeasureSpelling& spelling = {});
// `o` with the templates folder of these global options.
EvaluatorOptions evaluator_options(const GlobalOptions& global, EvaluatorOptions o);

}  // namespace gemmtune::cli
