// SPDX-License-Identifier: Apache-2.0
// The search of one shape within a job: its space (this shard's part of it), the configurations
// it starts from, the tuning loop with the journal and the evaluation cache, the refinement of
// its best, and the database update.
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/job/job_parts.hpp"
#include "search/tuning/progress.hpp"
#include "search/tuning/stop_signals.hpp"
#include "src/core/error.hpp"
#include "src/db/database.hpp"

namespace gemmtune {

namespace {

// The space of one problem: the recording's configurations, or the template's on this device.
// The distinct configurations of `path`'s entries of `spec`'s kernel, completed with the
// template's defaults, that the template and the device allow.
std::vector<Configuration> database_configurations(const std::string& path, const KernelSpec& spec,
                                                   const DeviceLimits& limits,
                                                   const Context& context) {
  const Database db = Database::load(path);
  std::vector<Configuration> out;
  size_t refused = 0, entries = 0;
  for (const auto& e : db.entries()) {
    if (e.key.kernel != spec.name() || e.status != Status::kOk) continue;
    ++entries;
    Configuration c;
    try {
      c = spec.complete(e.parameters);
    } catch (const Error&) {
      ++refused;  // a parameter the template no longer has
      continue;
    }
    if (spec.check(c, limits, context)) {
      ++refused;
      continue;
    }
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  if (out.empty()) {
    throw invalid_argument(
        fmt::format("--space-from {}: no entry of kernel {} that this device "
                    "allows ({} entries of it)",
                    path, spec.name(), entries));
  }
  spdlog::info("--space-from {}: {} configurations of {} entries of {}{}", path, out.size(),
               entries, spec.name(),
               refused ? fmt::format(" ({} not allowed here or stale)", refused) : "");
  return out;
}

SearchSpace shape_space(const SearchRun& run, const Problem& problem) {
  auto& t = run.target;
  const Context context{{"ELEM_BYTES", element_bytes(problem.precision)}};
  const int64_t space_key = context.at("ELEM_BYTES");
  if (!t.replay) {
    if (auto built = t.spaces.find(space_key); built != t.spaces.end()) return built->second;
  }
  std::optional<SearchSpace> space;
  if (t.replay) {
    space.emplace(SearchSpace::from_configurations(t.replay->configurations(problem)));
  } else if (!run.a.space_from.empty()) {
    space.emplace(SearchSpace::from_configurations(
        database_configurations(run.a.space_from, *t.spec, t.limits, context)));
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
  const std::string path = spec_path(run.a.eval.templates_dir, run.a.kernel);
  if (!t.spec && std::filesystem::exists(path)) t.spec = KernelSpec::load(path);
  if (t.spec) {
    space->add_spec_features(*t.spec, context);
    if (t.replay) t.replay->set_defaults(t.spec->defaults());
  }
  if (space->size() == 0) {
    throw invalid_argument("space " + run.a.space + " of kernel " + run.a.kernel +
                           " has no valid configuration on this device");
  }
  if (!t.replay) {
    spdlog::debug("{}/{}: space of {} configurations built for {}-byte elements", run.a.kernel,
                  run.a.space, space->size(), space_key);
    t.spaces.emplace(space_key, *space);
  }
  return std::move(*space);
}

// The A/B refinement after a search (--refine): single changes from the search's best, within
// the same space; the best is replaced only when a full, verified measurement is faster.
void refine_shape(const SearchRun& run, const Problem& problem, ShapeOutcome& so) {
  auto& t = run.target;
  if (!t.spec) t.spec = KernelSpec::load(spec_path(run.a.eval.templates_dir, run.a.kernel));
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
  found.space =
      run.a.space_from.empty()
          ? run.a.space
          : "configurations of " + std::filesystem::path(run.a.space_from).filename().string();
  const auto put = Database::update(
      db.path, db.device,
      DatabaseEntry::from_result(run.a.kernel, problem, *so.outcome.best, found), run.a.replace);
  spdlog::info("{}: database {}: {}", problem.shape.to_string(), db.path, to_string(put));
}

// How many of the database's entries of a problem's family a search measures first.
constexpr size_t kDatabaseStarts = 3;

}  // namespace

// The configurations of the database's entries of `problem`'s family, the exact shape first and
// then by distance in log space, completed with the template's defaults (an entry older than a
// parameter lacks it): a search of a database starts from what the database knows, so that the
// best configuration of a neighbouring shape is never missed by a short search of this one.
std::vector<Configuration> database_starts(const SearchRun& run, const Problem& problem) {
  const auto& db = run.target.db;
  if (!run.target.spec) return {};
  std::vector<Configuration> out;
  if (!db.path.empty() && std::filesystem::exists(db.path)) {
    const Database database = Database::load(db.path);
    for (const auto& match : database.ranked(EntryKey::of(run.a.kernel, problem))) {
      if (out.size() == kDatabaseStarts) break;
      const Configuration c = run.target.spec->complete(match.entry->parameters);
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  // Then the device profile's starting configurations of this template and precision (the AMD
  // profiles': chosen offline, never measured), so that a card nobody tuned is measured where the
  // offline analysis points first.
  const std::string profile_name = run.target.device_json.value("profile", std::string());
  if (run.target.replay || profile_name.empty()) return out;
  const ProfileSet profiles = job_profiles(run.a);
  const DeviceProfile* profile = profiles.find(profile_name);
  if (!profile) return out;
  for (const auto& start : profile->starting_configurations) {
    if (start.kernel != run.target.spec->name() || start.precision != problem.precision) continue;
    const Configuration c = run.target.spec->complete(start.parameters);
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

ShapeOutcome tune_shape(const SearchRun& run, const Problem& problem, const ShapePlan& plan) {
  const auto& a = run.a;
  const SearchSpace space = shape_space(run, problem);
  spdlog::info("{}: searching {} configurations of {}/{} with {} (seed {})",
               problem.shape.to_string(), space.size(), a.kernel, a.space, a.strategy, a.seed);
  auto searcher = make_searcher(a.strategy, space, a.seed, run.strategy_options);

  TuneSettings settings;
  settings.stop = plan.stop;
  settings.warm_start = plan.warm_start;
  // A compile pool is kept busy only with configurations announced ahead.
  settings.lookahead = a.lookahead > 0           ? size_t(a.lookahead)
                       : run.target.replay       ? 1
                       : a.compile_processes > 0 ? pool_lookahead(size_t(a.compile_processes))
                                                 : size_t(a.eval.compile_threads) + 1;
  // On a device with a compile pool the lane would otherwise wait for the strategy's thinking.
  settings.propose_while_measuring = !run.target.replay && a.compile_processes > 0;
  settings.stop_above_best = a.stop_above_best;
  // Only where builds run in a pool of their own can a lane tell that its next proposal is not
  // built yet (a replay or in-process builds measure what the strategy proposes, in its order).
  if (run.target.pool && run.target.spec) {
    settings.runtime_parameters = run.target.spec->runtime_parameters();
  }
  settings.interrupt = stop_requested();
  settings.journal = &run.journal;
  settings.kernel = a.kernel;
  if (run.target.spec) {
    const Context context{{"ELEM_BYTES", element_bytes(problem.precision)}};
    settings.work_group_size = [spec = &*run.target.spec, context](const Configuration& c) {
      return spec->work_group_size(c, context).value_or(0);
    };
  }
  if (run.resumed) {
    const std::string key = problem_key(a.kernel, problem);
    for (const auto& e : run.resumed->entries) {
      if (problem_key(e) == key) settings.known.push_back(e.result);
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
      settings.on_measured = [&cache_writer, &a, &problem](const Result& r) {
        cache_writer->append(a.kernel, problem, r, 0);
      };
    }
  }
  ProgressReporter progress(run.terminal, problem.shape.to_string(), problem.flops());
  settings.on_progress = [&progress](const TuneProgress& p) { progress.update(p); };
  ShapeOutcome so{problem,
                  run_search(device_lanes(run.target), problem, space, *searcher, settings),
                  space.size(), std::nullopt};
  progress.finish();
  spdlog::info(
      "{}: {} ({} evaluations, {} from the cache, {} measured now at {:.1f} per minute; up to {} "
      "in flight of {} asked)",
      problem.shape.to_string(), so.outcome.stop_reason, so.outcome.evaluations, so.outcome.cached,
      so.outcome.measured, so.outcome.evaluations_per_minute(), so.outcome.max_in_flight,
      settings.lookahead);
  if (a.refine && so.outcome.best && !so.outcome.interrupted) refine_shape(run, problem, so);
  update_database(run, problem, so);
  return so;
}

}  // namespace gemmtune
