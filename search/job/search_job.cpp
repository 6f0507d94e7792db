// SPDX-License-Identifier: Apache-2.0
// The flow of a search job: the template (or every template), the resumed journal's settings,
// the target, the problems of this shard, the output files, and the per-shape loop.
#include "search/job/search_job.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/job/job_parts.hpp"
#include "search/tuning/search_checks.hpp"
#include "search/tuning/stop_signals.hpp"
#include "src/core/data_paths.hpp"
#include "src/core/error.hpp"
#include "src/core/file_identity.hpp"
#include "src/core/version.hpp"

namespace gemmtune {

namespace {

// A new folder for this search's files: results/searches/<device>-<UTC time>[-2 ...], so that
// searches started in one folder never collide.
std::string new_output_folder(const std::string& device_id) {
  const std::string base =
      std::string(kUserOutputFolder) + "/searches/" + device_id + "-" + utc_now("%Y%m%d-%H%M%S");
  std::string dir = base;
  for (int n = 2; std::filesystem::exists(dir); ++n) dir = base + "-" + std::to_string(n);
  return dir;
}

std::string output_in(const std::string& dir, const std::string& kernel) {
  return (std::filesystem::path(dir) / ("search-" + kernel + ".json")).string();
}

// A journal holds the measurements of one device; continuing it on another would mix them.
void check_same_device(const std::string& journal, const JsonReader& header,
                       const std::string& device_id) {
  const auto recorded = header.optional_object("device");
  if (!recorded || !recorded->has("id")) return;  // an older header: nothing to check
  const std::string recorded_id = recorded->string("id");
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
OptionValues strategy_option_values(const SearchJobOptions& a) {
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

// What one template's search found, for the caller's checks (and --kernel auto's comparison).
struct KernelSearch {
  std::string kernel;
  std::string journal;
  std::vector<ShapeOutcome> outcomes;
};

// A journal holds one shard's measurements (or the whole job's): continuing it as another part
// would start a new journal or mix parts, so a --shard that differs from the recorded one is
// refused.
void check_resumed_shard(const SearchJobOptions& a, const JsonReader& settings) {
  if (a.given.count("shard") == 0) return;
  // Journals written before shards existed hold the whole job.
  const Shard theirs = settings.parsed_or(
      "shard", "0/1", [](const std::string& v) { return Shard::parse(v, "the journal's shard"); });
  const Shard ours = Shard::parse(a.shard);
  if (theirs.index != ours.index || theirs.count != ours.count) {
    throw invalid_argument("--resume " + a.resume + " holds " +
                           (theirs.split() ? "shard " + theirs.to_string() : "an unsharded job") +
                           ", not --shard " + ours.to_string() +
                           ": resume it without --shard, or resume that shard's own journal");
  }
}

// A journal moved with its folder (the default layout: the results file beside the journal) is
// continued there: the results go beside it, not to the folder it was recorded in.
void results_beside_moved_journal(SearchJobOptions& a, const JsonReader& settings) {
  namespace fs = std::filesystem;
  if (a.given.count("output") != 0 || !a.journal.empty()) return;
  const std::string recorded = settings.string_or("output", "");
  if (recorded.empty()) return;
  const fs::path journal(a.resume);
  if (fs::path(journal_beside(recorded)).filename() != journal.filename()) return;
  a.output = (journal.parent_path() / fs::path(recorded).filename()).string();
}

// Continues `a.resume`: locks it (a second search on it is refused as busy instead of measuring
// the same configurations again), reads it, and fills what `a` leaves out from its settings.
std::optional<Journal> resume_journal(SearchJobOptions& a,
                                      std::optional<JournalWriter>& resumed_writer) {
  if (a.resume.empty()) return std::nullopt;
  if (a.journal.empty() || a.journal == a.resume) {
    resumed_writer.emplace(a.resume, JournalOpen::kResume);
  }
  std::optional<Journal> resumed = read_journal(a.resume);
  if (resumed->headers.empty()) throw invalid_file(a.resume, "has no header record to resume");
  const JsonReader header = resumed->header(0);
  if (const auto settings = header.optional_object("settings")) {
    check_resumed_shard(a, *settings);
    apply_journal_settings(a, *settings);
    results_beside_moved_journal(a, *settings);
  }
  if (a.journal.empty()) a.journal = a.resume;
  spdlog::info("resuming {}: {} evaluations journalled", a.resume, resumed->entries.size());
  return resumed;
}

// A folder this search created, removed again when the search leaves it empty (refused before
// writing anything), so that refusals leave nothing behind.
struct CreatedFolder {
  std::string path;
  ~CreatedFolder() {
    std::error_code ec;
    if (!path.empty() && std::filesystem::is_empty(path, ec) && !ec) {
      std::filesystem::remove(path, ec);
    }
  }
};

// Names the results file and the journal (a new folder unless given; this shard's names) and
// refuses a new search on a journal that exists. Sets `created` to the folder it created.
void name_outputs(SearchJobOptions& a, SearchTarget& target, const Shard& shard,
                  CreatedFolder& created) {
  if (a.output.empty()) {
    if (a.out_dir.empty()) a.out_dir = new_output_folder(target.device_id);
    a.output = output_in(a.out_dir, a.kernel);
    std::error_code ec;
    // A failure is named by the checks that follow.
    if (std::filesystem::create_directories(a.out_dir, ec)) created.path = a.out_dir;
  }
  // Every shard writes its own files, merged afterwards (gemmtune db merge).
  a.output = shard_path(a.output, shard);
  a.journal = a.journal.empty() ? journal_beside(a.output) : shard_path(a.journal, shard);
  const std::string whole_db = target.db.path;
  target.db.path = shard_path(target.db.path, shard);
  if (target.db.path != whole_db) {
    // Said, not silent: the database named is not the file written until the parts are merged.
    spdlog::info(
        "shard {}: database entries go to {}, not {}; join the {} parts into it with "
        "gemmtune db merge {} PARTS...",
        shard.to_string(), target.db.path, whole_db, shard.count, whole_db);
  }
  if (a.resume.empty() && std::filesystem::exists(a.journal)) {
    throw invalid_argument("journal " + a.journal + " already exists: continue it with --resume " +
                           a.journal + ", or choose another --out folder (a new search reuses " +
                           "what earlier ones measured anyway)");
  }
}

// No file the search writes is one it reads (the same file, however spelled), and the results
// file never replaces a tuned database unless --force: either would destroy hours of tuning.
void check_outputs_not_inputs(const SearchJobOptions& a, const std::string& db) {
  const std::vector<NamedInput> read = {
      {a.resume, "--resume"}, {a.workload, "--workload"}, {a.replay, "--replay"}};
  std::vector<NamedInput> read_or_written = read;
  read_or_written.push_back({db, "--db"});
  read_or_written.push_back({a.journal, "the journal"});
  check_output_not_input(a.output, read_or_written, "-o/--output");
  check_output_not_input(db, read, "--db");
  // The journal is appended to: it may be the resumed one, never another input.
  check_output_not_input(a.journal, {read[1], read[2], {db, "--db"}}, "the journal");
  if (a.given.count("force") == 0) {
    check_not_replacing(a.output, "-o/--output", kDatabaseFormat, "a tuned database");
  }
}

// The search of one template: everything from the journal to the outputs. `reason` says why this
// template (and is logged with the space in the first line).
KernelSearch search_kernel(SearchJobOptions a, const std::vector<WorkloadShape>& workload_shapes,
                           const std::string& reason, const SearchJobReports& reports) {
  std::optional<JournalWriter> resumed_writer;
  const std::optional<Journal> resumed = resume_journal(a, resumed_writer);
  const OptionValues strategy_options = strategy_option_values(a);
  const Shard shard = Shard::parse(a.shard);
  if (a.refine && a.refine_evals < 2 * AbSettings{}.min_pairs) {
    throw invalid_argument(
        fmt::format("--refine-evals {} is less than one A/B comparison needs "
                    "({} evaluations)",
                    a.refine_evals, 2 * AbSettings{}.min_pairs));
  }

  Problem base = base_problem(a);
  SearchTarget target = a.replay.empty() ? open_device_target(a) : open_replay_target(a);
  if (resumed) check_same_device(a.resume, resumed->header(0), target.device_id);
  std::vector<Problem> problems = search_problems(a, workload_shapes, base, target.replay);
  // A resumed part's journal records the shapes of its part only: those are not split again.
  const bool recorded_part = resumed && a.given.count("shapes") == 0 &&
                             a.given.count("shapes-file") == 0 && a.workload.empty();
  if (shard.split() && !shards_split_space(a.strategy) && !recorded_part) {
    problems = shard_problems(problems, shard);
  }
  std::vector<Shape> shapes;
  for (const auto& p : problems) shapes.push_back(p.shape);
  if (resumed && !a.new_problems)
    check_resume_problems(a.resume, *resumed, settings_json(a, shapes));
  for (const auto& p : problems) check_fits_device(p, target.device_json);

  CreatedFolder created;
  name_outputs(a, target, shard, created);
  const std::vector<StopCondition> stops = shape_budgets(a, workload_shapes, problems);
  check_search_outputs(a.output, target.db.path, target.db.device, a.eval.templates_dir);
  check_outputs_not_inputs(a, target.db.path);

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
                        {"devices", target.device_selectors},
                        {"evaluator", target.evaluator->description()},
                        {"settings", settings_json(a, shapes)},
                        {"resumed_from", a.resume}});

  StopSignals guard;
  const SearchRun run{a, target, strategy_options, resumed, journal, ::isatty(2) != 0, shard};
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
  write_search_outputs(a, target, outcomes, interrupted, reports);
  if (interrupted)
    throw_interrupted(guard.signal(), "gemmtune search --resume " + shell_quote(a.journal));
  return {a.kernel, a.journal, std::move(outcomes)};
}

// --kernel auto: every template gets an equal share of the budget, in one output folder; the
// fastest per shape is what counts (the database keeps each template's best).
void search_all_kernels(SearchJobOptions a, const std::vector<WorkloadShape>& workload_shapes,
                        const std::string& reason, const SearchJobReports& reports) {
  if (!a.resume.empty())
    throw invalid_argument(
        "--kernel auto does not resume: run the same search again instead, "
        "it takes every result measured before from the evaluation cache");
  if (!a.output.empty() || !a.journal.empty())
    throw invalid_argument(
        "--kernel auto writes one results file per template: give --out DIR "
        "instead of -o/--journal");
  const std::vector<std::string> kernels =
      auto_kernels(a.eval.templates_dir, a.space, base_problem(a));
  const auto n = int64_t(kernels.size());
  if (a.max_evals == 0 && a.time_budget_s == 0 && a.space_fraction == 0)
    a.max_evals = 100 * int64_t(a.workload.empty() ? 1 : workload_shapes.size());
  if (a.max_evals > 0) a.max_evals = std::max<int64_t>(1, a.max_evals / n);
  a.time_budget_s /= double(n);
  std::string names;
  for (const auto& k : kernels) names += (names.empty() ? "" : ", ") + k;
  spdlog::info("--kernel auto: {} templates ({}), each with a 1/{} share of the budget ({})", n,
               names, n, reason);
  std::vector<KernelSearch> searches;
  for (const auto& k : kernels) {
    SearchJobOptions sub = a;
    sub.kernel = k;
    searches.push_back(
        search_kernel(sub, workload_shapes, "one of the templates --kernel auto tries", reports));
    if (a.out_dir.empty()) {
      a.out_dir = std::filesystem::path(searches.back().journal).parent_path().string();
    }
  }
  const auto& problems = searches.front().outcomes;
  for (size_t i = 0; i < problems.size(); ++i) {
    const KernelSearch* best = nullptr;
    FastestTemplate fastest;
    fastest.shape = problems[i].problem.shape;
    for (const auto& ks : searches) {
      const auto& b = ks.outcomes.at(i).outcome.best;
      fastest.gflops.emplace_back(ks.kernel, b ? std::optional<double>(b->gflops) : std::nullopt);
      if (b && (!best || b->gflops > best->outcomes.at(i).outcome.best->gflops)) best = &ks;
    }
    if (!best) {
      require_valid_result(problems[i].problem, problems[i].outcome, searches.front().journal);
      continue;
    }
    fastest.kernel = best->kernel;
    if (reports.fastest) reports.fastest(fastest);
  }
}

}  // namespace

void run_search_job(SearchJobOptions a, const SearchJobReports& reports) {
  a.eval.templates_dir = find_data_dir("kernel_templates", a.eval.templates_dir);
  std::vector<WorkloadShape> workload_shapes;
  if (!a.workload.empty()) workload_shapes = read_workload(a.workload);
  std::string reason;
  if (a.kernel.empty() && a.resume.empty() && a.replay.empty()) {
    const KernelChoice choice = default_kernel(a);
    a.kernel = choice.kernel;
    reason = choice.reason;
  } else if (a.kernel == "auto") {
    reason = "as given";
  }
  if (a.kernel == "auto") {
    if (!a.replay.empty()) throw invalid_argument("--kernel auto: a replay holds one template");
    search_all_kernels(a, workload_shapes, reason, reports);
    return;
  }
  const KernelSearch s = search_kernel(a, workload_shapes, reason, reports);
  for (const auto& o : s.outcomes) require_valid_result(o.problem, o.outcome, s.journal);
}

}  // namespace gemmtune
