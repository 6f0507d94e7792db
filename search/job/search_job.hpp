// SPDX-License-Identifier: Apache-2.0
// The search job: tunes the shapes of one problem on a device (or a recorded replay) and keeps the
// fastest verified configuration of each. It splits the budget over the shapes (by weight for a
// workload) and, with --kernel auto, over the templates; splits the job into shards; continues a
// journal (--resume) without measuring anything twice; starts each shape from the database's and
// the workload's best; refines the best when asked; and updates the tuned database, the results
// file and the report beside the database. `gemmtune search` parses its options into
// SearchJobOptions and prints what the job reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/ab/refine.hpp"
#include "search/tuning/tuner.hpp"
#include "src/core/problem.hpp"
#include "src/eval/evaluator_factory.hpp"

namespace gemmtune {

struct SearchJobOptions {
  // ---- what is tuned ----
  std::string kernel;  // "" = the device profile's default template, else "auto"; "auto" = all
  std::string space;   // "" = cpu on a CPU device, gpu otherwise
  // A database whose entries of `kernel` make the space instead (their configurations, completed
  // with the template's defaults, that the device allows): its configurations measured at new
  // shapes, e.g. with the exhaustive strategy. "" = the named space.
  std::string space_from;
  // The problem every shape shares (layout, order, precision, scaling, batch, epilogue); its
  // kernel and shape are set per search.
  Problem problem;
  std::vector<Shape> shapes;  // empty: the workload's, or a replay's recorded ones
  std::string workload;       // a workload file: shapes with weights, one budget spread over them

  // ---- how ----
  std::string strategy = "bayes";
  std::vector<std::string> strategy_options;  // STRATEGY.NAME=VALUE
  int64_t max_evals = 0;                      // per shape; 0 = none given
  double time_budget_s = 0;
  double space_fraction = 0;
  uint64_t seed = 1;          // the strategy's
  std::string shard = "0/1";  // I/N: this machine's part of the job (search/strategies/shard.hpp)
  bool refine = false;
  int64_t refine_evals = 60;

  // ---- where it measures ----
  std::string device;       // a device selector (device.hpp); "" = the default device
  std::string devices_dir;  // folder of device profiles; "" = found as usual (data_paths.hpp)
  // Timing, binary cache and compile threads; `eval.templates_dir` is the folder of templates
  // for everything the job reads ("" = found as usual).
  EvaluatorOptions eval;
  // How to start this program's helper commands (`worker`, `compile-worker`): the program and the
  // arguments that come before the command.
  std::vector<std::string> helper_command;
  int compile_processes = -1;  // -1 = the device's default
  int lookahead = 0;           // 0 = from the compile processes or threads
  // A measurement stops once even its fastest sample is slower than this multiple of the best so
  // far (0 = off). 1.5: such a configuration ranks far below the best whatever its later samples
  // say, and about two in five of a default search's proposals at 2048^3 on an H200 were that slow.
  double stop_above_best = 1.5;
  double eval_timeout_s = 120;
  bool in_process = false;  // measure in this process instead of a worker process
  std::string replay;       // answer from a recorded space instead of a device
  double replay_delay_ms = 0;

  // ---- what it writes ----
  std::string journal;        // "" = beside the results file
  std::string resume;         // a journal to continue
  bool new_problems = false;  // --resume may add problems the journal does not hold
  std::string output;         // the results file; "" = search-<kernel>.json in `out_dir`
  std::string out_dir;        // "" = a new folder results/searches/<device>-<time>
  bool fresh = false;         // measure again what the evaluation cache holds
  std::string db;             // "" = results/<device id>.json for a device, none for a replay
  bool no_db = false;
  bool replace = false;  // replace a database entry even when the new result is slower
  bool plots = false;    // draw pictures beside the report

  // The settings given explicitly, by their command-line names ("kernel", "shapes", "precision",
  // ...): a resumed search takes from its journal the recorded settings not among them.
  std::set<std::string> given;
};

// One shape's search.
struct ShapeOutcome {
  Problem problem;
  TuneOutcome outcome;
  size_t space_size = 0;
  std::optional<RefineResult> refined;
};

// Where the devices' time went, summed over them: timing samples, the rest of the evaluations
// (of it, waiting for a build of the compile pool, and the rest: loading the built program,
// verification, transfers), and
// waiting for a proposal; the strategy's own time; and what bounded the search.
struct SearchTimeSplit {
  double timing_s = 0, other_evaluation_s = 0, build_wait_s = 0, checking_s = 0,
         proposal_wait_s = 0, strategy_s = 0;
  std::string bound;
};
SearchTimeSplit split_search_time(double elapsed_s, double timing_s, double evaluating_s,
                                  double proposal_wait_s, double build_wait_s, double strategy_s);

// What one template's search wrote, once its files are written.
struct SearchWritten {
  std::string kernel;
  const nlohmann::json& results;  // the results file's contents
  const std::vector<ShapeOutcome>& outcomes;
  std::string output;  // the results file
  std::string journal;
  std::string database;  // the tuned database, "" when none was written
  std::string report;    // its Markdown report, "" when none
  size_t measured = 0;   // every result measured now
  size_t verified = 0;   // those that ran and matched the reference
  double elapsed_s = 0;
  double per_minute = 0;           // measured per minute
  double verified_per_minute = 0;  // verified per minute
  SearchTimeSplit time;
  // Of `measured`: runtime siblings of measured configurations, measured while a build was under
  // way (TuneOutcome::siblings).
  size_t siblings = 0;
};

// --kernel auto: the fastest template of one shape, and what each template reached.
struct FastestTemplate {
  Shape shape;
  std::string kernel;
  std::vector<std::pair<std::string, std::optional<double>>> gflops;  // per template, none: -
};

// What the job reports while it runs, for the caller to show (an empty member shows nothing).
struct SearchJobReports {
  // After each template's results file and report are written, also before a search stopped by
  // a signal ends with its error.
  std::function<void(const SearchWritten&)> written;
  // --kernel auto, after every template's search: each shape's fastest, in order.
  std::function<void(const FastestTemplate&)> fastest;
};

// Runs the job. Throws Error: bad input (kInvalidArgument, kInvalidFile), the device
// (kDevice, kUnsupported), a journal another search holds (kBusy), a shape without any valid
// configuration (kCheckFailed), a stop by SIGINT or SIGTERM (kInterrupted, after the outputs are
// written).
void run_search_job(SearchJobOptions options, const SearchJobReports& reports = {});

}  // namespace gemmtune
