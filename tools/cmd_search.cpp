// gemmtune search: explores a kernel's parameter space on a device (or a recorded replay) and keeps
// the fastest verified configuration for each requested shape. Every evaluation is journalled at
// once; --resume continues an interrupted search without measuring anything twice.
//
// This file holds the flow and the per-shape loop; the options, the evaluator setup and the
// outputs live in search_options.cpp, search_target.cpp and search_outputs.cpp.
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/strategies/shard.hpp"
#include "search/strategies/strategies.hpp"
#include "search/tuning/progress.hpp"
#include "search/tuning/search_checks.hpp"
#include "search/tuning/stop_signals.hpp"
#include "src/core/error.hpp"
#include "src/core/version.hpp"
#include "src/core/workload.hpp"
#include "src/db/journal.hpp"
#include "tools/commands.hpp"
#include "tools/search_command.hpp"

namespace gemmtune::cli {

namespace {

// A new folder for this search's files: results/searches/<device>-<UTC time>[-2 ...], so that
// searches started in one folder never collide.
std::string new_output_folder(const std::string& device_id) {
  const std::string base = "results/searches/" + device_id + "-" + utc_now("%Y%m%d-%H%M%S");
  std::string dir = base;
  for (int n = 2; std::filesystem::exists(dir); ++n) dir = base + "-" + std::to_string(n);
  return dir;
}

std::string output_in(const std::string& dir, const std::string& kernel) {
  return (std::filesystem::path(dir) / ("search-" + kernel + ".json")).string();
}

// A journal holds the measurements of one device; continuing it on another would mix them.
void check_same_device(const std::string& journal, const nlohmann::json& header,
                       const std::string& device_id) {
  const auto recorded = header.value("device", nlohmann::json::object());
  if (!recorded.is_object() || !recorded.contains("id"))
    return;  // an older header: nothing to check
  const auto recorded_id = recorded.at("id").get<std::string>();
  if (recorded_id != device_id) {
    throw invalid_argument("journal " + journal + " was recorded on " + recorded_id +
                           ", not on the selected device " + device_id +
                           " (select it with --device, or start a new journal)");
  }
}

std::string journal_beside(const std::string& output) {
  std::string base = output;
  if (base.size() > 5 && base.substr(base.size() - 5) == ".json") base.resize(base.size() - 5);
  return base + ".journal.jsonl";
}

// The strategy's own options (--strategy-option STRATEGY.NAME=VALUE), refusing another's.
OptionValues strategy_option_values(const SearchArgs& a) {
  const auto strategy_options = parse_strategy_options(a.strategy_options);
  for (const auto& [name, values] : strategy_options) {
    if (name != a.strategy) {
      throw invalid_argument("option " + name + "." + values.begin()->first + " is for strategy " +
                             name + ", not " + a.strategy);
    }
  }
  find_strategy(a.strategy);
  return strategy_options.count(a.strategy) ? strategy_options.at(a.strategy) : OptionValues{};
}

// The budget per shape; with none given a search stops after 100 evaluations (exhaustive: all).
StopCondition stop_condition(SearchArgs& a) {
  StopCondition stop;
  stop.max_evals = a.max_evals;
  stop.time_budget_s = a.time_budget_s;
  stop.space_fraction = a.space_fraction;
  if (stop.max_evals == 0 && stop.time_budget_s == 0 && stop.space_fraction == 0 &&
      a.strategy != "exhaustive") {
    stop.max_evals = 100;
    a.max_evals = 100;
    spdlog::info("no budget given: stopping after {} evaluations per shape", stop.max_evals);
  }
  return stop;
}

// Shard I of N tunes the shapes whose position in the list is I modulo N.
std::vector<Problem> shard_problems(const std::vector<Problem>& problems, const Shard& shard) {
  std::vector<Problem> mine;
  for (size_t i = 0; i < problems.size(); ++i) {
    if (shard.owns(i)) mine.push_back(problems[i]);
  }
  if (mine.empty()) {
    throw invalid_argument(
        fmt::format("--shard {}: {} shapes leave this shard none; strategies "
                    "other than exhaustive and random split the shapes, so use "
                    "at most {} shards",
                    shard.to_string(), problems.size(), problems.size()));
  }
  return mine;
}

// The budget of each problem: the same for every shape, or with --workload the whole workload's
// budget spread by weight (heaviest shapes first: `problems` is reordered so).
std::vector<StopCondition> shape_budgets(SearchArgs& a, std::vector<Problem>& problems) {
  if (a.workload.empty()) return std::vector<StopCondition>(problems.size(), stop_condition(a));
  auto workload = a.workload_shapes;
  std::stable_sort(
      workload.begin(), workload.end(),
      [](const WorkloadShape& x, const WorkloadShape& y) { return x.weight > y.weight; });
  std::vector<Problem> ordered;
  for (const auto& w : workload) {
    for (const auto& p : problems) {
      if (p.shape == w.shape) ordered.push_back(p);
    }
  }
  problems = ordered;  // a shard keeps only its own shapes
  workload.erase(std::remove_if(workload.begin(), workload.end(),
                                [&](const WorkloadShape& w) {
                                  return std::none_of(
                                      problems.begin(), problems.end(),
                                      [&](const Problem& p) { return p.shape == w.shape; });
                                }),
                 workload.end());
  if (a.max_evals == 0 && a.time_budget_s == 0 && a.space_fraction == 0 &&
      a.strategy != "exhaustive") {
    a.max_evals = 100 * int64_t(workload.size());
  }
  const auto evals = weighted_shares(workload, double(a.max_evals), 1);
  const auto seconds = weighted_shares(workload, a.time_budget_s, 0);
  std::vector<StopCondition> stops;
  for (size_t i = 0; i < workload.size(); ++i) {
    StopCondition s;
    s.max_evals = a.max_evals > 0 ? int64_t(std::llround(evals[i])) : 0;
    s.time_budget_s = seconds[i];
    s.space_fraction = a.space_fraction;
    spdlog::info("{}: weight {:g}, budget {}{}", workload[i].shape.to_string(), workload[i].weight,
                 s.max_evals > 0 ? fmt::format("{} evaluations", s.max_evals) : "",
                 s.time_budget_s > 0 ? fmt::format(" {:.0f} s", s.time_budget_s) : "");
    stops.push_back(s);
  }
  return stops;
}

// Everything the per-shape loop shares.
struct SearchRun {
  const GlobalOptions& global;
  const SearchArgs& a;
  SearchTarget& target;
  const OptionValues& strategy_options;
  const std::optional<Journal>& resumed;
  JournalWriter& journal;
  bool terminal = false;
  Shard shard;
};

// Exhaustive and random searches visit configurations independently of each other's results, so
// their shards split every shape's space; the model-based strategies learn from the whole space
// (a modulo slice would hide whole values of a parameter from them), so they split the shapes.
bool shards_split_space(const std::string& strategy) {
  return strategy == "exhaustive" || strategy == "random";
}

// The space of one problem: the recording's configurations, or the template's on this device.
SearchSpace shape_space(const SearchRun& run, const Problem& problem) {
  auto& t = run.target;
  const Context context{{"ELEM_BYTES", element_bytes(problem.precision)}};
  std::optional<SearchSpace> space;
  if (t.replay) {
    space.emplace(SearchSpace::from_configurations(t.replay->configurations(problem)));
  } else {
    space.emplace(
        SearchSpace::from_param_space(ParamSpace(*t.spec, run.a.space, t.limits, context)));
  }
  if (run.shard.split() && shards_split_space(run.a.strategy)) {
    const size_t whole = space->size();
    space.emplace(shard_space(*space, run.shard));
    if (space->size() == 0) {
      throw invalid_argument(
          fmt::format("--shard {}: space {} of kernel {} has only {} "
                      "configurations, none for this shard",
                      run.shard.to_string(), run.a.space, run.a.kernel, whole));
    }
    spdlog::info("{}: shard {} takes {} of the {} configurations", problem.shape.to_string(),
                 run.shard.to_string(), space->size(), whole);
  }
  // Derived quantities (tile sizes, local memory, registers) help the model-based searchers;
  // a replay of a kernel whose template is not here simply goes without them.
  const std::string path = spec_path(run.global, run.a.kernel);
  if (!t.spec && std::filesystem::exists(path)) t.spec = KernelSpec::load(path);
  if (t.spec) {
    space->add_spec_features(*t.spec, context);
    if (t.replay) t.replay->set_defaults(t.spec->defaults());
  }
  if (space->size() == 0) {
    throw invalid_argument("space " + run.a.space + " of kernel " + run.a.kernel +
                           " has no valid configuration on this device");
  }
  return std::move(*space);
}

// The A/B refinement after a search (--refine): single changes from the search's best, within
// the same space; the best is replaced only when a full, verified measurement is faster.
void refine_shape(const SearchRun& run, const Problem& problem, ShapeOutcome& so) {
  auto& t = run.target;
  if (!t.spec) t.spec = KernelSpec::load(spec_path(run.global, run.a.kernel));
  const ParamSpace space(*t.spec, run.a.space, t.limits,
                         Context{{"ELEM_BYTES", element_bytes(problem.precision)}});
  RefineOptions ro;
  ro.max_evals = run.a.refine_evals;
  ro.interrupt = stop_requested();
  ro.on_decision = [](const AbRecord& rec) {
    spdlog::info("refine: {} -> {} ({})", rec.change, to_string(rec.decision),
                 to_string(rec.reason));
  };
  so.refined = refine(*t.evaluator, problem, space, so.outcome.best->config, ro);
  const auto& r = *so.refined;
  spdlog::info("{}: refine {}: {} of {} changes kept", problem.shape.to_string(), r.stop_reason,
               r.kept, r.decisions.size());
  if (r.best != so.outcome.best->config) {
    // The database takes a full measurement, verified like any other.
    const Result again = t.evaluator->evaluate(problem, r.best);
    if (again.status == Status::kOk && again.gflops > so.outcome.best->gflops) {
      so.outcome.best = again;
    }
  }
}

void update_database(const SearchRun& run, const Problem& problem, const ShapeOutcome& so) {
  const auto& db = run.target.db;
  if (db.path.empty() || !so.outcome.best) return;
  Provenance found;
  found.strategy = run.a.strategy + (so.refined ? "+refine" : "");
  found.evaluations = int64_t(so.outcome.evaluations) + (so.refined ? so.refined->evaluations : 0);
  found.seed = run.a.seed;
  found.space = run.a.space;
  const auto put =
      Database::update(db.path, db.device,
                       DatabaseEntry::from_result(problem, *so.outcome.best, found), run.a.replace);
  spdlog::info("{}: database {}: {}", problem.shape.to_string(), db.path, to_string(put));
}

// How many of the database's entries of a problem's family a search measures first.
constexpr size_t kDatabaseStarts = 3;

// The configurations of `path`'s entries of `problem`'s family, the exact shape first and then
// by distance in log space, completed with the template's defaults (an entry older than a
// parameter lacks it): a search of a database starts from what the database knows, so that the
// best configuration of a neighbouring shape is never missed by a short search of this one.
std::vector<Configuration> database_starts(const SearchRun& run, const Problem& problem) {
  const auto& db = run.target.db;
  if (db.path.empty() || !run.target.spec || !std::filesystem::exists(db.path)) return {};
  const Database database = Database::load(db.path);
  std::vector<Configuration> out;
  for (const auto& match : database.ranked(EntryKey::of(problem))) {
    if (out.size() == kDatabaseStarts) break;
    const Configuration c = run.target.spec->complete(match.entry->parameters);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

// What one shape of the job gets: its budget, and configurations to measure first.
struct ShapePlan {
  StopCondition stop;
  std::vector<Configuration> warm_start;
};

// Searches one problem's space, refines its best when asked, and updates the database.
ShapeOutcome tune_shape(const SearchRun& run, const Problem& problem, const ShapePlan& plan) {
  const auto& a = run.a;
  const SearchSpace space = shape_space(run, problem);
  spdlog::info("{}: searching {} configurations of {}/{} with {} (seed {})",
               problem.shape.to_string(), space.size(), a.kernel, a.space, a.strategy, a.seed);
  auto searcher = make_searcher(a.strategy, space, a.seed, run.strategy_options);

  TuneSettings settings;
  settings.stop = plan.stop;
  settings.warm_start = plan.warm_start;
  // A compile pool is kept busy only with configurations announced ahead: one in flight and one
  // waiting per process while the device measures.
  settings.lookahead = a.lookahead > 0           ? size_t(a.lookahead)
                       : run.target.replay       ? 1
                       : a.compile_processes > 0 ? 2 * size_t(a.compile_processes) + 1
                                                 : size_t(a.eval.compile_threads) + 1;
  settings.interrupt = stop_requested();
  settings.journal = &run.journal;
  if (run.resumed) {
    const std::string key = problem_key(problem);
    for (const auto& e : run.resumed->entries) {
      if (problem_key(e.problem) == key) settings.known.push_back(e.result);
    }
  }
  std::unique_ptr<JournalWriter> cache_writer;
  if (run.target.cache && run.target.cache->enabled()) {
    if (!a.fresh) {
      settings.cached = run.target.cache->load(problem);
      if (!settings.cached.empty()) {
        spdlog::info(
            "{}: {} results of earlier searches in the evaluation cache (--fresh measures "
            "them again)",
            problem.shape.to_string(), settings.cached.size());
      }
    }
    cache_writer = run.target.cache->writer(problem);
    if (cache_writer) {
      settings.on_measured = [&cache_writer, &problem](const Result& r) {
        cache_writer->append(problem, r, 0);
      };
    }
  }
  ProgressReporter progress(run.terminal, problem.shape.to_string(), problem.flops());
  settings.on_progress = [&progress](const TuneProgress& p) { progress.update(p); };
  ShapeOutcome so{problem, run_search(*run.target.evaluator, problem, space, *searcher, settings),
                  space.size(), std::nullopt};
  progress.finish();
  spdlog::info("{}: {} ({} evaluations, {} from the cache, {} measured now at {:.1f} per minute)",
               problem.shape.to_string(), so.outcome.stop_reason, so.outcome.evaluations,
               so.outcome.cached, so.outcome.measured, so.outcome.evaluations_per_minute());
  if (a.refine && so.outcome.best && !so.outcome.interrupted) refine_shape(run, problem, so);
  update_database(run, problem, so);
  return so;
}

// What one template's search found, for the caller's checks (and --kernel auto's comparison).
struct KernelSearch {
  std::string kernel;
  std::string journal;
  std::vector<ShapeOutcome> outcomes;
};

// The search of one template: everything from the journal to the outputs. `reason` says why this
// template (and is logged with the space in the first line).
KernelSearch search_kernel(const GlobalOptions& global, SearchArgs a, const GivenOptions& given,
                           const std::string& reason) {
  // ---- resume: the journal's settings fill what this command line leaves out ----
  std::optional<Journal> resumed;
  std::optional<JournalWriter> resumed_writer;
  if (!a.resume.empty()) {
    // Locked before it is read: a second search on this journal is refused (busy) instead of
    // measuring the same configurations again.
    if (a.journal.empty() || a.journal == a.resume) {
      resumed_writer.emplace(a.resume, JournalOpen::kResume);
    }
    resumed = read_journal(a.resume);
    if (resumed->headers.empty()) throw invalid_file(a.resume, "has no header record to resume");
    apply_journal_settings(a, resumed->headers.front().value("settings", nlohmann::json::object()),
                           given);
    if (a.journal.empty()) a.journal = a.resume;
    spdlog::info("resuming {}: {} evaluations journalled", a.resume, resumed->entries.size());
  }

  const OptionValues strategy_options = strategy_option_values(a);
  const Shard shard = Shard::parse(a.shard);
  if (a.refine && a.refine_evals < 2 * AbSettings{}.min_pairs) {
    throw invalid_argument(
        fmt::format("--refine-evals {} is less than one A/B comparison needs "
                    "({} evaluations)",
                    a.refine_evals, 2 * AbSettings{}.min_pairs));
  }

  Problem base = base_problem(a);
  SearchTarget target =
      a.replay.empty() ? open_device_target(global, a) : open_replay_target(a, base, given);
  if (resumed) check_same_device(a.resume, resumed->headers.front(), target.device_id);
  std::vector<Problem> problems = search_problems(a, base, target.replay);
  if (shard.split() && !shards_split_space(a.strategy)) problems = shard_problems(problems, shard);
  std::vector<Shape> shapes;
  for (const auto& p : problems) shapes.push_back(p.shape);
  if (resumed && !a.new_problems)
    check_resume_problems(a.resume, *resumed, settings_json(a, shapes));
  for (const auto& p : problems) check_fits_device(p, target.device_json);

  // ---- output and journal ----
  if (a.output.empty()) {
    if (a.out_dir.empty()) a.out_dir = new_output_folder(target.device_id);
    a.output = output_in(a.out_dir, a.kernel);
    std::error_code ec;
    std::filesystem::create_directories(a.out_dir, ec);  // a failure is named by the check below
  }
  // Every shard writes its own files, merged afterwards (gemmtune db merge).
  a.output = shard_path(a.output, shard);
  a.journal = a.journal.empty() ? journal_beside(a.output) : shard_path(a.journal, shard);
  target.db.path = shard_path(target.db.path, shard);
  if (a.resume.empty() && std::filesystem::exists(a.journal)) {
    throw invalid_argument("journal " + a.journal + " already exists: continue it with --resume " +
                           a.journal + ", or choose another --out folder (a new search reuses " +
                           "what earlier ones measured anyway)");
  }
  const std::vector<StopCondition> stops = shape_budgets(a, problems);
  check_search_outputs(a.output, target.db.path, target.db.device, templates_dir(global));

  spdlog::info("template {}, space {}: {}{}", a.kernel, a.space,
               reason.empty() ? "as given" : reason,
               a.replay.empty() ? "" : " (from the recording)");

  std::optional<JournalWriter> new_writer;
  JournalWriter& journal =
      resumed_writer && resumed_writer->path() == a.journal
          ? *resumed_writer
          : new_writer.emplace(a.journal,
                               a.resume.empty() ? JournalOpen::kCreate : JournalOpen::kAppend);
  journal.write_header({{"gemmtune_version", version()},
                        {"started", iso_utc_now()},
                        {"kernel", a.kernel},
                        {"space", a.space},
                        {"device", target.device_json},
                        {"evaluator", target.evaluator->description()},
                        {"settings", settings_json(a, shapes)},
                        {"resumed_from", a.resume}});

  StopSignals guard;
  const SearchRun run{global,  a,       target,           strategy_options,
                      resumed, journal, ::isatty(2) != 0, shard};
  std::vector<ShapeOutcome> outcomes;
  bool interrupted = false;
  for (size_t i = 0; i < problems.size(); ++i) {
    ShapePlan plan{stops[i], database_starts(run, problems[i])};
    // A workload's shapes start from what the others found best.
    if (!a.workload.empty()) {
      for (const auto& o : outcomes) {
        if (o.outcome.best) plan.warm_start.push_back(o.outcome.best->config);
      }
    }
    outcomes.push_back(tune_shape(run, problems[i], plan));
    if (outcomes.back().outcome.interrupted) {
      interrupted = true;
      break;
    }
  }
  interrupted = interrupted || guard.signal() != 0;  // also a signal during the refinement
  write_search_outputs(global, a, target, outcomes, interrupted);
  if (interrupted)
    throw_interrupted(guard.signal(), "gemmtune search --resume " + shell_quote(a.journal));
  return {a.kernel, a.journal, std::move(outcomes)};
}

// --kernel auto: every template gets an equal share of the budget, in one output folder; the
// fastest per shape is what counts (the database keeps each template's best).
void search_all_kernels(const GlobalOptions& global, SearchArgs a, const GivenOptions& given,
                        const std::string& reason) {
  if (!a.resume.empty())
    throw invalid_argument(
        "--kernel auto does not resume: run the same search again instead, "
        "it takes every result measured before from the evaluation cache");
  if (!a.output.empty() || !a.journal.empty())
    throw invalid_argument(
        "--kernel auto writes one results file per template: give --out DIR "
        "instead of -o/--journal");
  const std::vector<std::string> kernels = auto_kernels(global, a.space, base_problem(a));
  const auto n = int64_t(kernels.size());
  if (a.max_evals == 0 && a.time_budget_s == 0 && a.space_fraction == 0)
    a.max_evals = 100 * int64_t(a.workload.empty() ? 1 : a.workload_shapes.size());
  if (a.max_evals > 0) a.max_evals = std::max<int64_t>(1, a.max_evals / n);
  a.time_budget_s /= double(n);
  std::string names;
  for (const auto& k : kernels) names += (names.empty() ? "" : ", ") + k;
  spdlog::info("--kernel auto: {} templates ({}), each with a 1/{} share of the budget ({})", n,
               names, n, reason);
  std::vector<KernelSearch> searches;
  for (const auto& k : kernels) {
    SearchArgs sub = a;
    sub.kernel = k;
    searches.push_back(
        search_kernel(global, sub, given, "one of the templates --kernel auto tries"));
    if (a.out_dir.empty()) {
      a.out_dir = std::filesystem::path(searches.back().journal).parent_path().string();
    }
  }
  const auto& problems = searches.front().outcomes;
  for (size_t i = 0; i < problems.size(); ++i) {
    const KernelSearch* best = nullptr;
    std::string all;
    for (const auto& ks : searches) {
      const auto& b = ks.outcomes.at(i).outcome.best;
      all += fmt::format("{}{} {}", all.empty() ? "" : ", ", ks.kernel,
                         b ? fmt::format("{:.1f}", b->gflops) : std::string("-"));
      if (b && (!best || b->gflops > best->outcomes.at(i).outcome.best->gflops)) best = &ks;
    }
    const std::string shape = problems[i].problem.shape.to_string();
    if (!best) {
      require_valid_result(problems[i].problem, problems[i].outcome, searches.front().journal);
      continue;
    }
    std::cout << fmt::format("{}: fastest template {} (GFLOPS: {})\n", shape, best->kernel, all);
  }
}

void run_search_command(const GlobalOptions& global, SearchArgs a, const GivenOptions& given) {
  if (!a.workload.empty()) a.workload_shapes = read_workload(a.workload);
  std::string reason;
  if (a.kernel.empty() && a.resume.empty() && a.replay.empty()) {
    const KernelChoice choice = default_kernel(global, a.device);
    a.kernel = choice.kernel;
    reason = choice.reason;
  } else if (a.kernel == "auto") {
    reason = "as given";
  }
  if (a.kernel == "auto") {
    if (!a.replay.empty()) throw invalid_argument("--kernel auto: a replay holds one template");
    search_all_kernels(global, a, given, reason);
    return;
  }
  const KernelSearch s = search_kernel(global, a, given, reason);
  for (const auto& o : s.outcomes) require_valid_result(o.problem, o.outcome, s.journal);
}

}  // namespace

void set_search_command(CLI::App& app, GlobalOptions& options) {
  auto a = std::make_shared<SearchArgs>();
  auto given = std::make_shared<GivenOptions>();
  auto* cmd = app.add_subcommand("search",
                                 "Search a kernel's parameter space for the fastest "
                                 "configuration of each shape");
  add_search_options(*cmd, *a, *given);
  cmd->callback([&options, a, given]() { run_search_command(options, *a, *given); });
}

}  // namespace gemmtune::cli
