// SPDX-License-Identifier: Apache-2.0
// The options of `gemmtune search`, parsed into the search job's options.
#include <climits>
#include <limits>

#include <fmt/format.h>

#include "search/strategies/strategies.hpp"
#include "tools/search_command.hpp"

namespace gemmtune::cli {

namespace {
constexpr double kSearchStableCv = 0.02;
// Two samples of at least 20 queued calls each already show the spread --stable-cv asks about.
constexpr int kSearchMinRuns = 2;
}  // namespace

namespace {

// The problem and strategy options; the ones a journal records are kept in `given`.
void add_problem_and_strategy_options(CLI::App& cmd, SearchArgs& a, GivenOptions& g) {
  std::string strategies_help = "Search strategy:";
  for (const auto& s : strategies()) strategies_help += " " + s.name + " (" + s.description + ");";
  g["kernel"] = cmd.add_option("--kernel", a.job.kernel,
                               "Kernel template, or auto: every template with a share of the "
                               "budget (default: the device profile's template, else auto)");
  g["space"] = cmd.add_option("--space", a.job.space,
                              "Named space of the template: ci, cpu, gpu or full (default: cpu "
                              "on a CPU device, gpu otherwise)");
  g["space-from"] = cmd.add_option(
      "--space-from", a.job.space_from,
      "Search only the configurations of this database's entries of --kernel (completed with the "
      "template's defaults; those the device does not allow are left out): with --strategy "
      "exhaustive and --workload, a database's configurations measured at new shapes");
  g["strategy"] =
      cmd.add_option("--strategy", a.job.strategy, strategies_help)->capture_default_str();
  std::string option_help = "Strategy option STRATEGY.NAME=VALUE (repeatable):";
  for (const auto& s : strategies()) {
    for (const auto& o : s.options) {
      option_help +=
          fmt::format(" {}.{} ({}, default {});", s.name, o.name, o.help, o.default_value);
    }
  }
  g["strategy-option"] = cmd.add_option("--strategy-option", a.job.strategy_options, option_help);
  // A budget of 0 would read as "none given" (100 evaluations): each must be positive.
  g["max-evals"] = cmd.add_option("--max-evals", a.job.max_evals,
                                  "Evaluations per shape at most, journalled ones included "
                                  "(default 100 unless another budget is given; exhaustive: all). "
                                  "With compile processes, configurations that differ from a "
                                  "measured one only in a runtime parameter (xgemm_fast's GROUPM: "
                                  "no build of their own) are measured beside them while a build "
                                  "is under way, and not counted")
                       ->check(whole_number(1));
  g["time-budget"] = cmd.add_option("--time-budget", a.job.time_budget_s,
                                    "Seconds per shape at most (checked between evaluations)")
                         ->check(finite_number(0, std::numeric_limits<double>::max(), true));
  g["space-fraction"] = cmd.add_option("--space-fraction", a.job.space_fraction,
                                       "Fraction of the space per shape at most (0 to 1)")
                            ->check(finite_number(0, 1, true));
  g["seed"] = cmd.add_option("--seed", a.job.seed, "Seed of the strategy")
                  ->capture_default_str()
                  ->check(seed_number());
  add_problem_options(cmd, a.problem, kWholeProblem | kShapeList);
  g["workload"] = cmd.add_option("--workload", a.job.workload,
                                 "Workload file: a shape and a weight per line; the budget "
                                 "(--max-evals, --time-budget) is the whole workload's, spread "
                                 "by weight, and each shape starts from the others' best")
                      ->check(CLI::ExistingFile);
  for (const auto& [name, option] : a.problem.added) g[name] = option;
  g["shard"] = cmd.add_option("--shard", a.job.shard,
                              "I/N: this machine's part of a job split over N (exhaustive, random: "
                              "configurations whose index is I modulo N; bayes, anneal: every "
                              "N-th shape); files carry -shard-IofN")
                   ->capture_default_str();
}

// Where the search measures, what it writes, and how it finishes.
void add_run_options(CLI::App& cmd, SearchArgs& a, GivenOptions& g) {
  g["device"] = cmd.add_option(
      "-d,--device", a.job.device,
      "Device: profile name (gfx1012), name substring (H200, pthread) or P:D indices; default: "
      "first GPU, else first CPU. Several (comma-separated, or 'all': every GPU, else every CPU) "
      "measure one search at once, one worker per device: devices of one model only");
  // A search ranks configurations: samples that agree within 2% say all the ranking needs, and the
  // device's time goes to the next configuration (other commands time to --min-time-ms).
  a.job.eval.measure.stable_cv = kSearchStableCv;
  a.job.eval.measure.min_runs = kSearchMinRuns;
  add_measure_options(cmd, a.job.eval, kTiming | kCacheDir | kCompileThreads);
  cmd.add_option("--compile-processes", a.job.compile_processes,
                 "Compile worker processes building ahead of the measurement into the binary "
                 "cache (default on GPUs: every core but one per measuring device and one for the "
                 "strategy, at least min(16, cores) and at most 64; they build at a lower "
                 "priority than the search's own threads; 0 = off on a CPU device; 0 compiles in "
                 "threads)")
      ->check(whole_number(0, 1024));
  cmd.add_option("--lookahead", a.job.lookahead,
                 "Configurations in flight (default: compile threads + 1, capped by the strategy)")
      ->check(whole_number(1, INT_MAX));
  cmd.add_option("--stop-above-best", a.job.stop_above_best,
                 "A configuration is timed no further once even its fastest sample is slower than "
                 "this multiple of the best so far (at least one sample; 0 = every "
                 "configuration takes --min-runs samples)")
      ->capture_default_str()
      ->check(finite_number(0))
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            const double x = std::strtod(v.c_str(), nullptr);
            return x == 0 || x > 1 ? "" : "must be 0 or above 1, not " + v;
          },
          "0 or above 1"));
  cmd.add_option("--journal", a.job.journal,
                 "JSON-lines journal of every evaluation (default: beside the output)");
  cmd.add_option("--resume", a.job.resume,
                 "Continue the search of this journal (its settings apply unless given again)");
  cmd.add_flag("--new-problems", a.job.new_problems,
               "With --resume: also search kernels or shapes the journal does not hold");
  g["replay"] = cmd.add_option("--replay", a.job.replay,
                               "Answer from a recorded space (a journal of an exhaustive run, "
                               ".jsonl or .gz) instead of a device");
  cmd.add_option("--replay-delay-ms", a.job.replay_delay_ms,
                 "Replay: sleep per evaluation, imitating measurement time")
      ->check(finite_number(0));
  g["output"] = cmd.add_option("-o,--output", a.job.output,
                               "Best configuration per shape with metadata (JSON; default "
                               "search-<kernel>.json in the --out folder)");
  // Carried to the job among the options given (job.given), as it only relaxes a check there.
  g["force"] = cmd.add_flag("--force", "With -o/--output: replace a file that is a tuned database");
  cmd.add_option("--out", a.job.out_dir,
                 "Folder for the results file and the journal (default: a new folder "
                 "gemmtune-results/searches/<device>-<time>)");
  cmd.add_flag("--fresh", a.job.fresh,
               "Measure again what earlier searches of the same problem, template, device and "
               "driver left in the evaluation cache");
  g["eval-timeout"] = cmd.add_option("--eval-timeout", a.job.eval_timeout_s,
                                     "Seconds an evaluation may take before it counts as a hang")
                          ->capture_default_str()
                          ->check(finite_number(0, std::numeric_limits<double>::max(), true));
  cmd.add_flag("--in-process", a.job.in_process,
               "Evaluate in this process (no protection against driver crashes and hangs)");
  cmd.add_flag("--json", a.json, "Print the results as JSON");
  g["db"] = cmd.add_option(
      "--db", a.job.db,
      "Tuned database to update (default: gemmtune-results/<device id>.json; a replay "
      "writes one only when given)");
  g["no-db"] = cmd.add_flag("--no-db", a.job.no_db, "Write no tuned database or report");
  cmd.add_flag("--replace", a.job.replace,
               "Replace a database entry even when the new result is slower");
  cmd.add_flag("--plots", a.job.plots,
               "Draw PNG pictures beside the report (python3 with matplotlib)");
  g["refine"] =
      cmd.add_flag("--refine", a.job.refine,
                   "Finish each shape with the A/B refinement (single changes from the best)");
  cmd.add_option("--refine-evals", a.job.refine_evals, "Evaluations the refinement may use")
      ->capture_default_str()
      ->check(whole_number(1));
}

}  // namespace

void add_search_options(CLI::App& cmd, SearchArgs& a, GivenOptions& given) {
  add_problem_and_strategy_options(cmd, a, given);
  add_run_options(cmd, a, given);
}

}  // namespace gemmtune::cli
