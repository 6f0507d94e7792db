// The pieces of `gemmtune search`, shared by its files: the options (search_options.cpp), the
// evaluator and device it measures on (search_target.cpp), the outputs it writes
// (search_outputs.cpp) and the per-shape loop that ties them together (cmd_search.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "search/ab/refine.hpp"
#include "search/tuning/compile_pool.hpp"
#include "search/tuning/tuner.hpp"
#include "src/core/problem.hpp"
#include "src/core/workload.hpp"
#include "src/db/database.hpp"
#include "src/db/evaluation_cache.hpp"
#include "src/eval/evaluator.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tools/common_options.hpp"

namespace gemmtune::cli {

struct SearchArgs {
  std::string kernel;  // "" = the device profile's default template, else "auto"; "auto" = all
  std::string space;   // "" = cpu on a CPU device, gpu otherwise
  std::string strategy = "bayes";
  std::vector<std::string> strategy_options;
  int64_t max_evals = 0;
  double time_budget_s = 0;
  double space_fraction = 0;
  uint64_t seed = 1;  // the strategy's
  ProblemOptions problem;
  std::string device;
  EvaluatorOptions eval;       // --cache-dir, --compile-threads, timing; templates from the globals
  int compile_processes = -1;  // -1 = the device's default (open_device_target)
  int lookahead = 0;
  std::string journal;
  std::string resume;
  std::string replay;
  double replay_delay_ms = 0;
  std::string output;
  std::string workload;  // shapes with weights, one budget spread over them (workload.hpp)
  std::vector<WorkloadShape> workload_shapes;  // `workload` as read, once, by the command
  std::string out_dir;  // where the results file and the journal go ("" = a new folder)
  bool fresh = false;   // measure again what the evaluation cache holds
  double eval_timeout_s = 120;
  bool in_process = false;
  bool json = false;
  std::string db;  // "" = results/<device id>.json for a device, none for a replay
  bool no_db = false;
  bool replace = false;
  bool plots = false;
  bool refine = false;
  int64_t refine_evals = 60;
  bool new_problems = false;  // --resume may add problems the journal does not hold
  std::string shard = "0/1";  // I/N: this machine's part of the job (see shard.hpp)
};

// The options given on the command line, by name: a resumed search takes from its journal the
// settings that were not given again.
using GivenOptions = std::map<std::string, CLI::Option*>;

// ---- search_options.cpp ----
void add_search_options(CLI::App& cmd, SearchArgs& a, GivenOptions& given);
// The settings a journal header records, so that --resume can take them back.
nlohmann::json settings_json(const SearchArgs& a, const std::vector<Shape>& shapes);
// Fills the options not given on this command line from the settings of the journal's first run.
void apply_journal_settings(SearchArgs& a, const nlohmann::json& settings,
                            const GivenOptions& given);
// The problem every shape shares (layout, precision, batch, epilogue, scaling).
Problem base_problem(SearchArgs& a);

// ---- search_target.cpp ----
// Where the tuned database and its report go, and what the search put there.
struct DatabaseTarget {
  std::string path;  // "" = none
  DatabaseDevice device;
  std::string profile_name;
};

// What measures the configurations, and what it says about the device.
struct SearchTarget {
  std::unique_ptr<Evaluator> evaluator;
  ReplayEvaluator* replay = nullptr;  // set when the evaluator answers from a recording
  CompilePool* pool = nullptr;        // set when compile processes build ahead of it
  nlohmann::json device_json;
  std::string device_id;
  std::optional<KernelSpec> spec;
  DeviceLimits limits;
  DatabaseTarget db;
  std::optional<EvaluationCache> cache;  // results of earlier searches (a device, not a replay)
};

// A recorded space (--replay); takes the kernel and space from the recording when not given.
SearchTarget open_replay_target(SearchArgs& a, Problem& base, const GivenOptions& given);
// A device, measured in a worker process (or in this one with --in-process).
SearchTarget open_device_target(const GlobalOptions& global, SearchArgs& a);
// The problems to tune: the given shapes (or a replay's recorded ones) on the base problem.
std::vector<Problem> search_problems(const SearchArgs& a, Problem base, ReplayEvaluator* replay);
std::string spec_path(const GlobalOptions& global, const std::string& kernel);

// The template a search without --kernel runs on the selected device, and why.
struct KernelChoice {
  std::string kernel;  // a template, or "auto"
  std::string reason;
};
KernelChoice default_kernel(const GlobalOptions& global, const std::string& device_selector);
// The templates `--kernel auto` shares the budget over: gemmtune's own (not CLBlast's kernels)
// that have the space and implement the problem's epilogue.
std::vector<std::string> auto_kernels(const GlobalOptions& global, const std::string& space,
                                      const Problem& problem);

// ---- search_outputs.cpp ----
struct ShapeOutcome {
  Problem problem;
  TuneOutcome outcome;
  size_t space_size = 0;
  std::optional<RefineResult> refined;
};

std::string shell_quote(const std::string& s);
// Writes the results file, the report beside the database, and prints the summary.
void write_search_outputs(const GlobalOptions& global, const SearchArgs& a,
                          const SearchTarget& target, const std::vector<ShapeOutcome>& outcomes,
                          bool interrupted);

}  // namespace gemmtune::cli
