// SPDX-License-Identifier: Apache-2.0
#include "tools/common_options.hpp"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "search/tuning/search_checks.hpp"
#include "src/core/data_paths.hpp"
#include "src/core/error.hpp"
#include "src/core/logging.hpp"
#include "src/eval/queued_clock.hpp"

namespace gemmtune::cli {

void add_global_options(CLI::App& app, GlobalOptions& options) {
  app.add_flag("-v,--verbose", options.verbose, "Log debug detail (binary cache hits, timings)");
  app.add_flag("-q,--quiet", options.quiet, "Log only errors");
  app.add_option("--log-level", options.log_level, "trace, debug, info, warn, error or off");
  app.add_option("--templates", options.templates_dir, "Folder of kernel templates");
  app.add_option("--devices", options.devices_dir, "Folder of device profiles");
}

void apply_logging(const GlobalOptions& options) {
  std::string level = "info";
  if (options.verbose) level = "debug";
  if (options.quiet) level = "error";
  if (!options.log_level.empty()) level = options.log_level;
  setup_logging(level);
}

std::vector<std::string> global_arguments(const GlobalOptions& options) {
  std::vector<std::string> args;
  if (!options.templates_dir.empty())
    args.insert(args.end(), {"--templates", options.templates_dir});
  if (!options.devices_dir.empty()) args.insert(args.end(), {"--devices", options.devices_dir});
  if (!options.log_level.empty()) args.insert(args.end(), {"--log-level", options.log_level});
  if (options.verbose) args.push_back("-v");
  if (options.quiet) args.push_back("-q");
  return args;
}

std::string templates_dir(const GlobalOptions& options) {
  return find_data_dir("kernel_templates", options.templates_dir);
}

std::string devices_dir(const GlobalOptions& options) {
  return find_data_dir("devices", options.devices_dir);
}

ProfileSet load_profiles(const GlobalOptions& options) {
  return ProfileSet::load_dir(devices_dir(options));
}

void add_device_option(CLI::App& cmd, std::string& selector) {
  cmd.add_option("-d,--device", selector,
                 "Device: profile name (gfx1012), name substring (H200, pthread) or P:D indices; "
                 "default: first GPU, else first CPU");
}

// ---- numbers ----

namespace {

template <typename T>
std::string range_words(T min, T max, bool min_open = false) {
  if (max == std::numeric_limits<T>::max()) {
    return fmt::format("{} {}", min_open ? "above" : "at least", min);
  }
  if (min == std::numeric_limits<T>::lowest()) return fmt::format("at most {}", max);
  return fmt::format("from {}{} to {}", min, min_open ? " (excluded)" : "", max);
}

// Digits with an optional leading sign, nothing else (strto* would skip spaces and stop early).
bool integer_text(const std::string& text, bool allow_sign) {
  size_t start = allow_sign && !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > start && text.find_first_not_of("0123456789", start) == std::string::npos;
}

}  // namespace

CLI::Validator whole_number(int64_t min, int64_t max) {
  const std::string words = range_words(min, max);
  return CLI::Validator(
      [min, max, words](std::string& text) -> std::string {
        if (!integer_text(text, true)) return "'" + text + "' is not a whole number";
        errno = 0;
        const long long v = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE || v < min || v > max) {
          return "'" + text + "' is out of range: a whole number " + words;
        }
        return "";
      },
      "whole number " + words, "WHOLE");
}

CLI::Validator finite_number(double min, double max, bool min_open) {
  const std::string words = range_words(min, max, min_open);
  return CLI::Validator(
      [min, max, min_open, words](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])) || *end != '\0') {
          return "'" + text + "' is not a number";
        }
        if (!std::isfinite(v) || errno == ERANGE) return "'" + text + "' is not a finite number";
        if (v < min || v > max || (min_open && v == min)) {
          return "'" + text + "' is out of range: a number " + words;
        }
        return "";
      },
      "finite number " + words, "FINITE");
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!integer_text(text, false)) return "'" + text + "' is not a whole number from 0";
        errno = 0;
        std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE) return "'" + text + "' is beyond 64 bits";
        return "";
      },
      "seed (64-bit unsigned)", "SEED");
}

namespace {

// `shape` in a batch of `batch`, refused where the kernels' 32-bit indices cannot reach it.
Shape indexable(const Shape& shape, int64_t batch) {
  Problem p;
  p.shape = shape;
  p.batch = batch;
  check_index_range(p);
  return shape;
}

}  // namespace

CLI::Validator non_empty_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "is empty" : ""; }, "TEXT",
      "TEXT");
}

// ---- the problem group ----

void add_problem_options(CLI::App& cmd, ProblemOptions& o, unsigned fields) {
  const std::string group = "Problem";
  auto add = [&](const std::string& names, const char* key, auto& field, const std::string& help) {
    CLI::Option* opt = cmd.add_option(names, field, help)->group(group);
    o.added[key] = opt;
    return opt;
  };
  if (fields & kPrecision) {
    add("--precision", "precision", o.precision,
        "32, 64 (needs cl_khr_fp64), 16 (half arithmetic, needs cl_khr_fp16) or 16acc32 (half "
        "storage, float arithmetic)")
        ->capture_default_str();
  }
  if (fields & kLayoutOrder) {
    add("--layout", "layout", o.layout, "NN, NT, TN or TT (op(A), op(B))")->capture_default_str();
    add("--order", "order", o.order, "row or col (storage order)")->capture_default_str();
  }
  if (fields & kScaling) {
    add("--alpha", "alpha", o.alpha, "Scale of A*B")->capture_default_str()->check(finite_number());
    add("--beta", "beta", o.beta, "Scale of C (0: C is not read)")
        ->capture_default_str()
        ->check(finite_number());
  }
  if (fields & kBatch) {
    add("--batch", "batch", o.batch, "Independent GEMMs of each shape, computed by one launch")
        ->capture_default_str()
        ->check(whole_number(1));
    add("--batch-layout", "batch-layout", o.batch_layout,
        "strided (matrices a fixed stride apart) or offsets (an array of per-matrix offsets)")
        ->capture_default_str();
  }
  if (fields & kEpilogue) {
    add("--epilogue", "epilogue", o.epilogue,
        "Fused epilogue C = act(alpha*A*B + beta*C + bias): \"\" (none), bias, relu, gelu, "
        "bias,relu or bias,gelu (bias: one value per column of C)");
  }
  if (fields & kShapeList) {
    add("-s,--shapes", "shapes", o.shapes,
        "Shapes MxNxK, comma-separated (each gets its own best)");
    add("--shapes-file", "shapes-file", o.shapes_file, "File of shapes, one a line");
  }
  if (fields & kOneShape)
    add("-s,--shape", "shape", o.shapes, "Problem shape MxNxK (or N for NxNxN)");
  if (fields & (kOneShape | kMnk)) {
    const bool defaults = (fields & kMnk) != 0;
    auto dim = [&](const char* name, int64_t& field, const char* help) {
      auto* opt = add(std::string("-") + name, name, field, help)->check(whole_number(1));
      if (defaults) opt->capture_default_str();
    };
    dim("m", o.m, "Rows of C");
    dim("n", o.n, "Columns of C");
    dim("k", o.k, "Inner dimension");
  }
}

Problem ProblemOptions::problem() const {
  Problem p;
  p.precision = parse_precision(precision);
  p.order = parse_order(order);
  set_layout(p, layout);
  // The parse-time checks cover the command line; a journal's settings come this way too.
  if (!std::isfinite(alpha) || !std::isfinite(beta)) {
    throw invalid_argument(fmt::format("--alpha {} and --beta {} must be finite", alpha, beta));
  }
  p.alpha = alpha;
  p.beta = beta;
  // Every command that takes --alpha measures (run, search, ab).
  if (const std::string why = unmeasurable(p); !why.empty()) throw invalid_argument(why);
  if (batch < 1) throw invalid_argument("--batch must be at least 1");
  p.batch = batch;
  p.batch_layout = parse_batch_layout(batch_layout);
  p.epilogue = parse_epilogue(epilogue);
  return p;
}

std::vector<Shape> ProblemOptions::shape_list() const {
  std::vector<Shape> out;
  if (!shapes_file.empty()) out = read_shapes_file(shapes_file);
  if (!shapes.empty()) {
    for (const auto& s : parse_shape_list(shapes)) out.push_back(s);
  }
  for (const auto& s : out) indexable(s, batch);
  return out;
}

std::optional<Shape> ProblemOptions::one_shape() const {
  const bool mnk = m != 0 || n != 0 || k != 0;
  if (mnk && !shapes.empty()) throw invalid_argument("give either --shape or -m/-n/-k, not both");
  if (mnk && (m <= 0 || n <= 0 || k <= 0)) {
    throw invalid_argument(
        fmt::format("-m, -n and -k must all be positive (got {}x{}x{})", m, n, k));
  }
  if (mnk) return indexable(Shape{m, n, k}, batch);
  if (!shapes.empty()) return indexable(parse_shape(shapes), batch);
  return std::nullopt;
}

// ---- the measurement group ----

void add_measure_options(CLI::App& cmd, EvaluatorOptions& o, unsigned fields,
                         const MeasureSpelling& spelling) {
  const std::string group = "Measurement";
  auto& m = o.measure;
  if (fields & kWarmup) {
    cmd.add_option("--warmup", m.warmup_runs, "Untimed runs before timing")
        ->group(group)
        ->capture_default_str()
        ->check(whole_number(0, INT_MAX));
  }
  if (fields & kRuns) {
    cmd.add_option("--min-runs", m.min_runs, "Timed runs at least")
        ->group(group)
        ->capture_default_str()
        ->check(whole_number(1, INT_MAX));
    cmd.add_option("--min-time-ms", m.min_time_ms, "Timed milliseconds at least")
        ->group(group)
        ->capture_default_str()
        ->check(finite_number(0));
    cmd.add_option("--max-runs", m.max_runs, "Timed runs at most")
        ->group(group)
        ->capture_default_str()
        ->check(whole_number(1, INT_MAX));
    cmd.add_option_function<std::string>(
           "--clock", [&m](const std::string& name) { m.clock = parse_timing_clock(name); },
           "What a time is: queued (default: calls queued behind a busy-wait kernel on a GPU, "
           "timed by the device's events, checked against the host clock; the host clock over "
           "the queued calls where the events fail the check), host-queued, or whole-call (the "
           "host clock around one call)")
        ->group(group)
        ->check(CLI::IsMember({"queued", "host-queued", "whole-call"}));
    cmd.add_option("--stable-cv", m.stable_cv,
                   "Stop timing before --min-time-ms once --min-runs samples vary by less than "
                   "this coefficient of variation (0 = never)")
        ->group(group)
        ->capture_default_str()
        ->check(finite_number(0));
    cmd.add_option("--queued-calls", m.queued_calls,
                   "Calls per timed sample (default 0: enough for 1 ms, at least 20 on a GPU)")
        ->group(group)
        ->capture_default_str()
        ->check(whole_number(0, kMaxQueuedCalls));
  }
  if (fields & kDataSeed) {
    cmd.add_option(spelling.seed, m.data_seed, "Seed of the input data")
        ->group(group)
        ->capture_default_str()
        ->check(seed_number());
  }
  if (fields & kCacheDir) {
    cmd.add_option(spelling.cache_dir, o.cache_dir,
                   "Kernel binary cache folder (default $XDG_CACHE_HOME/gemmtune; none disables)")
        ->group(group);
  }
  if (fields & kCompileThreads) {
    cmd.add_option("--compile-threads", o.compile_threads,
                   "Background compile threads (default: the cores available)")
        ->group(group)
        ->check(whole_number(1, INT_MAX));
  }
}

EvaluatorOptions evaluator_options(const GlobalOptions& global, EvaluatorOptions o) {
  o.templates_dir = templates_dir(global);
  return o;
}

}  // namespace gemmtune::cli
