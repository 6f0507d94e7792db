// SPDX-License-Identifier: Apache-2.0
// The pieces of the search job, shared by its files: the settings a journal records and gives
// back (job_settings.cpp), the budget and shard split (job_budget.cpp), what it measures on
// (job_target.cpp), the search of one shape (shape_search.cpp) and the files it writes
// (job_outputs.cpp); search_job.cpp ties them together.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/job/search_job.hpp"
#include "search/strategies/shard.hpp"
#include "search/strategies/space.hpp"
#include "search/strategies/strategies.hpp"
#include "search/tuning/compile_pool.hpp"
#include "src/core/workload.hpp"
#include "src/db/database.hpp"
#include "src/db/evaluation_cache.hpp"
#include "src/db/journal.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/evaluator.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

// ---- job_settings.cpp ----
// The settings a journal header records, so that --resume can take them back.
nlohmann::json settings_json(const SearchJobOptions& a, const std::vector<Shape>& shapes);
// Fills the settings not given (`a.given`) from the settings of a journal's first run.
void apply_journal_settings(SearchJobOptions& a, const JsonReader& settings);
// The problem every shape shares, checked (a journal's settings come this way too); the epilogue
// is made canonical in `a` too, as the journal records it.
Problem base_problem(SearchJobOptions& a);
// The device profiles of `a.devices_dir`.
ProfileSet job_profiles(const SearchJobOptions& a);

// ---- job_budget.cpp ----
// Exhaustive and random searches split every shape's space over the shards; the model-based
// strategies split the shapes.
bool shards_split_space(const std::string& strategy);
// Shard I of N tunes the shapes whose position in the list is I modulo N.
std::vector<Problem> shard_problems(const std::vector<Problem>& problems, const Shard& shard);
// The budget per shape; with none given a search stops after 100 evaluations (exhaustive: all).
StopCondition stop_condition(SearchJobOptions& a);
// The budget of each problem: the same for every shape, or with a workload the whole workload's
// budget spread by weight (heaviest shapes first: `problems` is reordered so).
std::vector<StopCondition> shape_budgets(SearchJobOptions& a,
                                         const std::vector<WorkloadShape>& workload_shapes,
                                         std::vector<Problem>& problems);

// ---- job_target.cpp ----
// Where the tuned database and its report go, and what the search put there.
struct DatabaseTarget {
  std::string path;  // "" = none
  DatabaseDevice device;
  std::string profile_name;
};

// What measures the configurations, and what it says about the device.
struct SearchTarget {
  std::unique_ptr<Evaluator> evaluator;  // the first device's (it builds ahead for all)
  // The other devices of a search over several (one model): each measures beside the first.
  // Declared after `evaluator`, so that they end before the compile pool they share.
  std::vector<std::unique_ptr<Evaluator>> other_devices;
  std::vector<std::string> device_selectors;  // every device measured on, "P:D"
  ReplayEvaluator* replay = nullptr;          // set when the evaluator answers from a recording
  CompilePool* pool = nullptr;                // set when compile processes build ahead of it
  nlohmann::json device_json;
  std::string device_id;
  std::optional<KernelSpec> spec;
  DeviceLimits limits;
  DatabaseTarget db;
  std::optional<EvaluationCache> cache;  // results of earlier searches (a device, not a replay)
  // The spaces built so far, by element size: a device's space depends on the template, the
  // space's name, the device's limits and the precision, not on the shape, and enumerating a
  // GPU space of a million configurations takes seconds, so a workload's shapes share one.
  std::map<int64_t, SearchSpace> spaces;
};

// A recorded space (--replay); takes the kernel and space from the recording when not given.
SearchTarget open_replay_target(SearchJobOptions& a);
// The devices, measured in a worker process each (or in this one with `in_process`).
SearchTarget open_device_target(SearchJobOptions& a);
// The problems to tune: the given shapes (or a workload's, or a replay's recorded ones) on the
// base problem.
std::vector<Problem> search_problems(const SearchJobOptions& a,
                                     const std::vector<WorkloadShape>& workload_shapes,
                                     Problem base, ReplayEvaluator* replay);
std::string spec_path(const std::string& templates_dir, const std::string& kernel);

// The template a search without a kernel runs on the selected device, and why.
struct KernelChoice {
  std::string kernel;  // a template, or "auto"
  std::string reason;
};
KernelChoice default_kernel(const SearchJobOptions& a);
// The templates `--kernel auto` shares the budget over: gemmtune's own (not CLBlast's kernels)
// that have the space and implement the problem's epilogue.
std::vector<std::string> auto_kernels(const std::string& templates_dir, const std::string& space,
                                      const Problem& problem);

// Every evaluator of `t`, the first device's first.
std::vector<Evaluator*> device_lanes(const SearchTarget& t);

// ---- shape_search.cpp ----
// Everything the per-shape loop shares.
struct SearchRun {
  const SearchJobOptions& a;
  SearchTarget& target;
  const OptionValues& strategy_options;
  const std::optional<Journal>& resumed;
  JournalWriter& journal;
  bool terminal = false;
  Shard shard;
};

// What one shape of the job gets: its budget, and configurations to measure first.
struct ShapePlan {
  StopCondition stop;
  std::vector<Configuration> warm_start;
};

// The configurations to measure first: the database's entries of `problem`'s family, then the
// device profile's starting configurations of the template and precision.
std::vector<Configuration> database_starts(const SearchRun& run, const Problem& problem);
// Searches one problem's space, refines its best when asked, and updates the database.
ShapeOutcome tune_shape(const SearchRun& run, const Problem& problem, const ShapePlan& plan);

// ---- job_outputs.cpp ----
std::string shell_quote(const std::string& s);
// Writes the results file and the report beside the database, then tells `reports`.
void write_search_outputs(const SearchJobOptions& a, const SearchTarget& target,
                          const std::vector<ShapeOutcome>& outcomes, bool interrupted,
                          const SearchJobReports& reports);

}  // namespace gemmtune
