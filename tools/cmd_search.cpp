// gemmtune search: explores a kernel's parameter space on a device (or a recorded replay) and keeps
// the fastest verified configuration for each requested shape. Every evaluation is journalled at
// once; --resume continues an interrupted search without measuring anything twice.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/tuning/progress.hpp"
#include "search/strategies/strategies.hpp"
#include "search/tuning/tuner.hpp"
#include "search/tuning/worker_evaluator.hpp"
#include "src/core/data_paths.hpp"
#include "src/db/database.hpp"
#include "src/device/device.hpp"
#include "src/core/error.hpp"
#include "src/db/journal.hpp"
#include "src/core/json_util.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "search/ab/refine.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "src/report/report.hpp"
#include "src/core/version.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct SearchArgs {
  std::string kernel = "xgemm";
  std::string space;  // "" = cpu on a CPU device, gpu otherwise
  std::string strategy = "bayes";
  std::vector<std::string> strategy_options;
  int64_t max_evals = 0;
  double time_budget_s = 0;
  double space_fraction = 0;
  uint64_t seed = 1;
  std::string shapes;
  std::string shapes_file;
  std::string layout = "NN";
  std::string order = "row";
  std::string precision = "32";
  int64_t batch = 1;
  std::string batch_layout = "strided";
  std::string epilogue;
  double alpha = 1.0, beta = 0.0;
  std::string device;
  int compile_threads = 0;
  int lookahead = 0;
  std::string journal;
  std::string resume;
  std::string replay;
  double replay_delay_ms = 0;
  std::string output;
  double eval_timeout_s = 120;
  bool in_process = false;
  std::string cache_dir;
  bool json = false;
  std::string db;  // "" = results/<device id>.json for a device, none for a replay
  bool no_db = false;
  bool replace = false;
  bool plots = false;
  bool refine = false;
  int64_t refine_evals = 60;
};

// The options that a resumed search takes from its journal unless given again.
struct ResumableOption {
  const char* name;
  CLI::Option* option = nullptr;
};

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    // A second Ctrl-C: stop now (the journal already holds every finished evaluation).
    ::signal(SIGINT, SIG_DFL);
    ::raise(SIGINT);
  }
}

// Installs the Ctrl-C handler for the lifetime of a search.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = false;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_);
  }
  ~InterruptGuard() { ::sigaction(SIGINT, &old_, nullptr); }

 private:
  struct sigaction old_ {};
};

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error(ErrorCode::kInternal, "cannot locate the gemmtune executable");
  return p.string();
}

std::string local_date() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json settings_json(const SearchArgs& a, const std::vector<Shape>& shapes) {
  nlohmann::json shape_list = nlohmann::json::array();
  for (const auto& s : shapes) shape_list.push_back(s.to_string());
  return {{"kernel", a.kernel},
          {"space", a.space},
          {"strategy", a.strategy},
          {"strategy_options", a.strategy_options},
          {"max_evals", a.max_evals},
          {"time_budget_s", a.time_budget_s},
          {"space_fraction", a.space_fraction},
          {"seed", a.seed},
          {"shapes", shape_list},
          {"layout", a.layout},
          {"order", a.order},
          {"precision", a.precision},
          {"batch", a.batch},
          {"batch_layout", a.batch_layout},
          {"epilogue", a.epilogue},
          {"alpha", a.alpha},
          {"beta", a.beta},
          {"device", a.device},
          {"replay", a.replay},
          {"output", a.output},
          {"db", a.db},
          {"no_db", a.no_db},
          {"refine", a.refine},
          {"eval_timeout_s", a.eval_timeout_s}};
}

// Fills the options not given on this command line from the settings of the journal's first run.
void apply_journal_settings(SearchArgs& a, const nlohmann::json& s,
                            const std::map<std::string, CLI::Option*>& given) {
  auto unset = [&](const std::string& name) {
    auto it = given.find(name);
    return it == given.end() || it->second->count() == 0;
  };
  auto take = [&](const std::string& name, const char* key, auto& field) {
    if (unset(name) && s.contains(key)) field = s[key].get<std::decay_t<decltype(field)>>();
  };
  take("kernel", "kernel", a.kernel);
  take("space", "space", a.space);
  take("strategy", "strategy", a.strategy);
  take("strategy-option", "strategy_options", a.strategy_options);
  take("max-evals", "max_evals", a.max_evals);
  take("time-budget", "time_budget_s", a.time_budget_s);
  take("space-fraction", "space_fraction", a.space_fraction);
  take("seed", "seed", a.seed);
  take("layout", "layout", a.layout);
  take("order", "order", a.order);
  take("precision", "precision", a.precision);
  take("batch", "batch", a.batch);
  take("batch-layout", "batch_layout", a.batch_layout);
  take("epilogue", "epilogue", a.epilogue);
  take("alpha", "alpha", a.alpha);
  take("beta", "beta", a.beta);
  take("device", "device", a.device);
  take("replay", "replay", a.replay);
  take("output", "output", a.output);
  take("db", "db", a.db);
  take("no-db", "no_db", a.no_db);
  take("refine", "refine", a.refine);
  take("eval-timeout", "eval_timeout_s", a.eval_timeout_s);
  if (unset("shapes") && unset("shapes-file") && s.contains("shapes")) {
    std::string list;
    for (const auto& sh : s["shapes"]) list += (list.empty() ? "" : ",") + sh.get<std::string>();
    a.shapes = list;
  }
}

std::string default_output(const std::string& kernel, const std::string& device_id) {
  return "search-" + kernel + "-" + device_id + ".json";
}

std::string spec_path(const GlobalOptions& global, const std::string& kernel) {
  return templates_dir(global) + "/" + kernel + ".json";
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

std::string shell_quote(const std::string& s) {
  if (s.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,") ==
      std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct ShapeOutcome {
  Problem problem;
  TuneOutcome outcome;
  size_t space_size = 0;
  std::optional<RefineResult> refined;
};

// Where the tuned database and its report go, and what the search put there.
struct DatabaseTarget {
  std::string path;  // "" = none
  DatabaseDevice device;
  std::string profile_name;
};

// The A/B refinement after a search (--refine): single changes from the search's best, within
// the same space; the database gets the refined configuration only when re-measured faster.
RefineResult refine_best(Evaluator& evaluator, const Problem& problem, const KernelSpec& spec,
                         const std::string& space_name, const DeviceLimits& limits,
                         const Configuration& best, int64_t max_evals,
                         const std::atomic<bool>* interrupt) {
  const ParamSpace space(spec, space_name, limits,
                         Context{{"ELEM_BYTES", element_bytes(problem.precision)}});
  RefineOptions ro;
  ro.max_evals = max_evals;
  ro.interrupt = interrupt;
  ro.on_decision = [](const AbRecord& rec) {
    spdlog::info("refine: {} -> {} ({})", rec.change, to_string(rec.decision),
                 to_string(rec.reason));
  };
  return refine(evaluator, problem, space, best, ro);
}

// Writes <db stem>-report.md/.json beside the database (and the pictures with --plots).
void write_report_beside(const GlobalOptions& global, const DatabaseTarget& db,
                         const std::string& journal, bool plots) {
  namespace fs = std::filesystem;
  const Database loaded = Database::load(db.path);
  const auto profiles = load_profiles(global);
  const DeviceProfile* profile = profiles.find(loaded.device.profile);
  const auto report = analyze_database(loaded, templates_dir(global), profile);
  const fs::path dir = fs::path(db.path).parent_path();
  const std::string stem = fs::path(db.path).stem().string();
  std::string md = to_markdown(report);
  if (plots) {
    const fs::path pictures = dir / (stem + "-plots");
    const std::string script = find_data_dir("scripts", "") + "/plot.py";
    // Debian's python3 carries python3-matplotlib; another python3 earlier on PATH may not.
    std::string python = "python3";
    for (const char* candidate : {"python3", "/usr/bin/python3"}) {
      const std::string probe = std::string(candidate) + " -c 'import matplotlib' >/dev/null 2>&1";
      if (std::system(probe.c_str()) == 0) {
        python = candidate;
        break;
      }
    }
    const std::string cmd = python + " " + shell_quote(script) + " all " + shell_quote(journal) +
                            " " + shell_quote(db.path) + " -d " + shell_quote(pictures.string());
    if (std::system(cmd.c_str()) != 0) {
      spdlog::warn("pictures not drawn: `{}` failed (python3 with matplotlib is needed)", cmd);
    } else {
      std::vector<std::string> pngs;
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(pictures, ec)) {
        if (e.path().extension() == ".png") pngs.push_back(e.path().filename().string());
      }
      std::sort(pngs.begin(), pngs.end());
      md += "\n## Pictures\n\n";
      for (const auto& p : pngs) {
        md += "![" + p + "](" + stem + "-plots/" + p + ")\n";
      }
    }
  }
  const std::string md_path = (dir / (stem + "-report.md")).string();
  write_file_atomic(md_path, md);
  write_json_atomic((dir / (stem + "-report.json")).string(), nlohmann::json(report));
}

void print_summary(const std::vector<ShapeOutcome>& outcomes) {
  std::cout << fmt::format("{:<20} {:>7} {:>7} {:>7} {:>10} {:>10} {:>9}  {}\n", "shape", "evals",
                           "failed", "resumed", "GFLOPS", "ms", "evals/min", "best configuration");
  for (const auto& o : outcomes) {
    const auto& t = o.outcome;
    std::cout << fmt::format(
        "{:<20} {:>7} {:>7} {:>7} {:>10} {:>10} {:>9.1f}  {}\n", o.problem.shape.to_string(),
        t.evaluations, t.failed, t.resumed, t.best ? fmt::format("{:.2f}", t.best->gflops) : "-",
        t.best ? fmt::format("{:.4f}", t.best->time.median_ms) : "-", t.evaluations_per_minute(),
        t.best ? to_string(t.best->config) : "(no valid configuration)");
  }
}

void run_search_command(const GlobalOptions& global, SearchArgs a,
                        const std::map<std::string, CLI::Option*>& given) {
  // ---- resume: the journal's settings fill what this command line leaves out ----
  std::optional<Journal> resumed;
  if (!a.resume.empty()) {
    resumed = read_journal(a.resume);
    if (resumed->headers.empty()) throw invalid_file(a.resume, "has no header record to resume");
    apply_journal_settings(a, resumed->headers.front().value("settings", nlohmann::json::object()),
                           given);
    if (a.journal.empty()) a.journal = a.resume;
    spdlog::info("resuming {}: {} evaluations journalled", a.resume, resumed->entries.size());
  }

  const auto strategy_options = parse_strategy_options(a.strategy_options);
  for (const auto& [name, values] : strategy_options) {
    if (name != a.strategy) {
      throw invalid_argument("option " + name + "." + values.begin()->first + " is for strategy " +
                             name + ", not " + a.strategy);
    }
  }
  const OptionValues options_for_strategy =
      strategy_options.count(a.strategy) ? strategy_options.at(a.strategy) : OptionValues{};
  find_strategy(a.strategy);
  if (a.refine && a.refine_evals < 2 * AbSettings{}.min_pairs) {
    throw invalid_argument(
        fmt::format("--refine-evals {} is less than one A/B comparison needs "
                    "({} evaluations)",
                    a.refine_evals, 2 * AbSettings{}.min_pairs));
  }

  Problem base;
  base.kernel = a.kernel;
  set_layout(base, a.layout);
  base.order = parse_order(a.order);
  base.precision = parse_precision(a.precision);
  if (a.batch < 1) throw invalid_argument("--batch must be at least 1");
  base.batch = a.batch;
  base.batch_layout = parse_batch_layout(a.batch_layout);
  a.epilogue = canonical_epilogue(a.epilogue);  // also as the journal records it
  base.epilogue = a.epilogue;
  base.alpha = a.alpha;
  base.beta = a.beta;

  // ---- the evaluator and what it says about the device ----
  std::unique_ptr<Evaluator> evaluator;
  ReplayEvaluator* replay = nullptr;
  nlohmann::json device_json;
  std::string device_id, device_type;
  std::optional<KernelSpec> spec;
  DeviceLimits limits;
  DatabaseTarget db;
  if (!a.replay.empty()) {
    auto r = std::make_unique<ReplayEvaluator>(a.replay, a.replay_delay_ms);
    replay = r.get();
    evaluator = std::move(r);
    const auto& h = replay->header();
    device_json = h.value("device", nlohmann::json::object());
    device_id = device_json.is_object() ? device_json.value("id", "replay") : "replay";
    device_type = device_json.is_object() ? device_json.value("type", "") : "";
    const auto recorded_kernel = replay->problems().front().kernel;
    if (given.at("kernel")->count() == 0 && a.resume.empty()) a.kernel = recorded_kernel;
    base.kernel = a.kernel;
    if (a.kernel != recorded_kernel) {
      throw invalid_argument("replay " + a.replay + " records kernel " + recorded_kernel +
                             ", not " + a.kernel);
    }
    if (a.space.empty()) a.space = h.value("space", "recorded");
    if (device_json.is_object()) {
      try {
        db.device = DatabaseDevice::from(device_json.get<DeviceInfo>());
      } catch (const std::exception&) {
        db.device.name = device_json.value("name", "replay");  // an older header: name only
      }
    }
    db.path = a.no_db ? "" : a.db;
  } else {
    const auto profiles = load_profiles(global);
    const Device device = select_device(a.device, &profiles);
    const DeviceProfile* profile = profiles.match(device.info);
    device_json = device.info;
    device_json["id"] = device.info.id();
    device_id = device.info.id();
    device_type = device.info.type;
    spec = KernelSpec::load(spec_path(global, a.kernel));
    limits = device_limits(device.info, profile);
    db.device = DatabaseDevice::from(device.info);
    db.path = a.no_db ? "" : a.db.empty() ? Database::default_path(device.info) : a.db;
    if (a.space.empty()) a.space = device.info.type == "cpu" ? "cpu" : "gpu";
    const int threads = a.compile_threads > 0
                            ? a.compile_threads
                            : int(std::max(1u, std::thread::hardware_concurrency()));
    a.compile_threads = threads;
    if (a.in_process) {
      OpenClEvaluatorOptions o;
      o.templates_dir = templates_dir(global);
      o.cache_dir = a.cache_dir;
      o.compile_threads = threads;
      evaluator = std::make_unique<OpenClEvaluator>(device, profile, std::move(o));
    } else {
      WorkerOptions w;
      w.argv = {self_executable()};
      if (!global.templates_dir.empty())
        w.argv.insert(w.argv.end(), {"--templates", global.templates_dir});
      if (!global.devices_dir.empty())
        w.argv.insert(w.argv.end(), {"--devices", global.devices_dir});
      if (!global.log_level.empty()) w.argv.insert(w.argv.end(), {"--log-level", global.log_level});
      if (global.verbose) w.argv.push_back("-v");
      if (global.quiet) w.argv.push_back("-q");
      w.argv.insert(w.argv.end(), {"worker", "--fd", "3", "--device", device.info.selector(),
                                   "--compile-threads", std::to_string(threads)});
      if (!a.cache_dir.empty()) w.argv.insert(w.argv.end(), {"--cache-dir", a.cache_dir});
      w.eval_timeout_s = a.eval_timeout_s;
      w.start_timeout_s = std::max(60.0, a.eval_timeout_s);
      evaluator = std::make_unique<WorkerEvaluator>(std::move(w));
    }
  }

  if (resumed) check_same_device(a.resume, resumed->headers.front(), device_id);

  // ---- shapes ----
  std::vector<Shape> shapes;
  if (!a.shapes_file.empty()) shapes = read_shapes_file(a.shapes_file);
  if (!a.shapes.empty()) {
    for (const auto& s : parse_shape_list(a.shapes)) shapes.push_back(s);
  }
  if (shapes.empty()) {
    if (!replay) throw invalid_argument("no shape given (use -s/--shapes or --shapes-file)");
    for (const auto& p : replay->problems()) shapes.push_back(p.shape);
    // A replay's problems carry their own layout and precision.
    base = replay->problems().front();
  }
  std::vector<Problem> problems;
  for (const auto& s : shapes) {
    Problem p = base;
    p.shape = s;
    if (replay && !replay->has_problem(p)) {
      // Take layout, precision and scaling from the recording when only the shape was given.
      bool found = false;
      for (const auto& q : replay->problems()) {
        if (q.shape == s && q.kernel == p.kernel) {
          p = q;
          found = true;
          break;
        }
      }
      if (!found) replay->configurations(p);  // throws, naming the recorded shapes
    }
    problems.push_back(p);
  }

  // ---- output and journal ----
  if (a.output.empty()) a.output = default_output(a.kernel, device_id);
  if (a.journal.empty()) a.journal = journal_beside(a.output);
  if (a.resume.empty() && std::filesystem::exists(a.journal)) {
    throw invalid_argument("journal " + a.journal + " already exists: continue it with --resume " +
                           a.journal + ", or choose another file with --journal");
  }
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

  JournalWriter journal(a.journal);
  journal.write_header({{"gemmtune_version", version()},
                        {"started", local_date()},
                        {"kernel", a.kernel},
                        {"space", a.space},
                        {"device", device_json},
                        {"evaluator", evaluator->description()},
                        {"settings", settings_json(a, shapes)},
                        {"resumed_from", a.resume}});

  InterruptGuard guard;
  const bool terminal = ::isatty(2) != 0;
  std::vector<ShapeOutcome> outcomes;
  bool interrupted = false;
  for (const auto& problem : problems) {
    std::optional<SearchSpace> space;
    if (replay) {
      space.emplace(SearchSpace::from_configurations(replay->configurations(problem)));
    } else {
      ParamSpace ps(*spec, a.space, limits,
                    Context{{"ELEM_BYTES", element_bytes(problem.precision)}});
      space.emplace(SearchSpace::from_param_space(ps));
    }
    // Derived quantities (tile sizes, local memory, registers) help the model-based searchers;
    // a replay of a kernel whose template is not here simply goes without them.
    if (!spec && std::filesystem::exists(spec_path(global, a.kernel))) {
      spec = KernelSpec::load(spec_path(global, a.kernel));
    }
    if (spec) {
      space->add_spec_features(*spec, Context{{"ELEM_BYTES", element_bytes(problem.precision)}});
      if (replay) replay->set_defaults(spec->defaults());
    }
    if (space->size() == 0) {
      throw invalid_argument("space " + a.space + " of kernel " + a.kernel +
                             " has no valid configuration on this device");
    }
    spdlog::info("{}: searching {} configurations of {}/{} with {} (seed {})",
                 problem.shape.to_string(), space->size(), a.kernel, a.space, a.strategy, a.seed);
    auto searcher = make_searcher(a.strategy, *space, a.seed, options_for_strategy);

    TuneSettings settings;
    settings.stop = stop;
    settings.lookahead = a.lookahead > 0 ? size_t(a.lookahead)
                         : replay        ? 1
                                         : size_t(a.compile_threads) + 1;
    settings.interrupt = &g_interrupted;
    settings.journal = &journal;
    if (resumed) {
      const std::string key = problem_key(problem);
      for (const auto& e : resumed->entries) {
        if (problem_key(e.problem) == key) settings.known.push_back(e.result);
      }
    }
    ProgressReporter progress(terminal, problem.shape.to_string(), problem.flops());
    settings.on_progress = [&progress](const TuneProgress& p) { progress.update(p); };
    ShapeOutcome so{problem, run_search(*evaluator, problem, *space, *searcher, settings),
                    space->size(), std::nullopt};
    progress.finish();
    spdlog::info("{}: {} ({} evaluations, {} measured now at {:.1f} per minute)",
                 problem.shape.to_string(), so.outcome.stop_reason, so.outcome.evaluations,
                 so.outcome.measured, so.outcome.evaluations_per_minute());
    if (a.refine && so.outcome.best && !so.outcome.interrupted) {
      if (!spec) spec = KernelSpec::load(spec_path(global, a.kernel));
      so.refined = refine_best(*evaluator, problem, *spec, a.space, limits, so.outcome.best->config,
                               a.refine_evals, &g_interrupted);
      const auto& r = *so.refined;
      spdlog::info("{}: refine {}: {} of {} changes kept", problem.shape.to_string(), r.stop_reason,
                   r.kept, r.decisions.size());
      if (r.best != so.outcome.best->config) {
        // The database takes a full measurement, verified like any other.
        const Result again = evaluator->evaluate(problem, r.best);
        if (again.status == Status::kOk && again.gflops > so.outcome.best->gflops) {
          so.outcome.best = again;
        }
      }
    }
    if (!db.path.empty() && so.outcome.best) {
      Provenance found;
      found.strategy = a.strategy + (so.refined ? "+refine" : "");
      found.evaluations =
          int64_t(so.outcome.evaluations) + (so.refined ? so.refined->evaluations : 0);
      found.seed = a.seed;
      found.space = a.space;
      const auto put =
          Database::update(db.path, db.device,
                           DatabaseEntry::from_result(problem, *so.outcome.best, found), a.replace);
      spdlog::info("{}: database {}: {}", problem.shape.to_string(), db.path, to_string(put));
    }
    outcomes.push_back(std::move(so));
    if (outcomes.back().outcome.interrupted) {
      interrupted = true;
      break;
    }
  }

  // ---- output ----
  nlohmann::json results = nlohmann::json::array();
  size_t measured = 0;
  double elapsed = 0;
  for (const auto& o : outcomes) {
    const auto& t = o.outcome;
    measured += t.measured;
    elapsed += t.elapsed_s;
    results.push_back({{"problem", o.problem},
                       {"shape", o.problem.shape.to_string()},
                       {"best", t.best ? nlohmann::json(*t.best) : nlohmann::json()},
                       {"space_size", o.space_size},
                       {"evaluations", t.evaluations},
                       {"measured", t.measured},
                       {"resumed", t.resumed},
                       {"failed", t.failed},
                       {"elapsed_s", t.elapsed_s},
                       {"evaluations_per_minute", t.evaluations_per_minute()},
                       {"stop_reason", t.stop_reason}});
  }
  const double per_minute = elapsed > 0 ? 60.0 * double(measured) / elapsed : 0;
  nlohmann::json out = {
      {"format", "gemmtune-search"},
      {"metadata",
       {{"device", device_json},
        {"driver", device_json.is_object() ? device_json.value("driver_version", "") : ""},
        {"gemmtune_version", version()},
        {"seed", a.seed},
        {"date", local_date()},
        {"strategy", a.strategy},
        {"strategy_options", a.strategy_options},
        {"kernel", a.kernel},
        {"space", a.space},
        {"evaluator", evaluator->description()},
        {"journal", a.journal},
        {"complete", !interrupted},
        {"evaluations_per_minute", per_minute}}},
      {"results", results}};
  std::error_code ec;
  const auto parent = std::filesystem::path(a.output).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  write_json_atomic(a.output, out);

  const bool have_db = !db.path.empty() && std::filesystem::exists(db.path);
  if (have_db) write_report_beside(global, db, a.journal, a.plots);
  const std::string report_path =
      have_db ? (std::filesystem::path(db.path).parent_path() /
                 (std::filesystem::path(db.path).stem().string() + "-report.md"))
                    .string()
              : "";
  if (a.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    print_summary(outcomes);
    std::cout << fmt::format("{} configurations measured in {:.1f} s: {:.1f} per minute\n",
                             measured, elapsed, per_minute);
    std::cout << "Results written to " << a.output << " (journal " << a.journal << ")\n";
    if (have_db) {
      std::cout << "Tuned database: " << db.path << "\nReport: " << report_path << "\n";
    }
  }
  if (interrupted) {
    spdlog::warn("search interrupted; continue it with: gemmtune search --resume {}",
                 shell_quote(a.journal));
  }
}

}  // namespace

void set_search_command(CLI::App& app, GlobalOptions& options) {
  auto a = std::make_shared<SearchArgs>();
  auto given = std::make_shared<std::map<std::string, CLI::Option*>>();
  auto* cmd = app.add_subcommand("search",
                                 "Search a kernel's parameter space for the fastest "
                                 "configuration of each shape");
  auto& g = *given;
  std::string strategies_help = "Search strategy:";
  for (const auto& s : strategies()) strategies_help += " " + s.name + " (" + s.description + ");";
  g["kernel"] = cmd->add_option("--kernel", a->kernel, "Kernel template")->capture_default_str();
  g["space"] = cmd->add_option("--space", a->space,
                               "Named space of the template: ci, cpu, gpu or full (default: cpu "
                               "on a CPU device, gpu otherwise)");
  g["strategy"] =
      cmd->add_option("--strategy", a->strategy, strategies_help)->capture_default_str();
  std::string option_help = "Strategy option STRATEGY.NAME=VALUE (repeatable):";
  for (const auto& s : strategies()) {
    for (const auto& o : s.options) {
      option_help +=
          fmt::format(" {}.{} ({}, default {});", s.name, o.name, o.help, o.default_value);
    }
  }
  g["strategy-option"] = cmd->add_option("--strategy-option", a->strategy_options, option_help);
  g["max-evals"] = cmd->add_option("--max-evals", a->max_evals,
                                   "Evaluations per shape at most, journalled ones included "
                                   "(default 100 unless another budget is given; exhaustive: all)");
  g["time-budget"] = cmd->add_option("--time-budget", a->time_budget_s,
                                     "Seconds per shape at most (checked between evaluations)");
  g["space-fraction"] = cmd->add_option("--space-fraction", a->space_fraction,
                                        "Fraction of the space per shape at most (0 to 1)")
                            ->check(CLI::Range(0.0, 1.0));
  g["seed"] = cmd->add_option("--seed", a->seed, "Seed of the strategy")->capture_default_str();
  g["shapes"] = cmd->add_option("-s,--shapes", a->shapes,
                                "Shapes MxNxK, comma-separated (each gets its own best)");
  g["shapes-file"] = cmd->add_option("--shapes-file", a->shapes_file, "File of shapes, one a line");
  g["layout"] = cmd->add_option("--layout", a->layout, "NN, NT, TN or TT")->capture_default_str();
  g["order"] = cmd->add_option("--order", a->order, "row or col")->capture_default_str();
  g["precision"] =
      cmd->add_option("--precision", a->precision, "32, 64, 16 or 16acc32")->capture_default_str();
  g["batch"] = cmd->add_option("--batch", a->batch, "Independent GEMMs per shape, one launch")
                   ->capture_default_str();
  g["batch-layout"] =
      cmd->add_option("--batch-layout", a->batch_layout, "strided or offsets (batch > 1)")
          ->capture_default_str();
  g["epilogue"] = cmd->add_option("--epilogue", a->epilogue,
                                  "Fused epilogue: \"\" (none), bias, relu, gelu, bias,relu or "
                                  "bias,gelu (bias: one value per column of C)");
  g["alpha"] = cmd->add_option("--alpha", a->alpha, "Scale of A*B")->capture_default_str();
  g["beta"] = cmd->add_option("--beta", a->beta, "Scale of C")->capture_default_str();
  add_device_option(*cmd, a->device);
  g["device"] = cmd->get_option("--device");
  cmd->add_option("--compile-threads", a->compile_threads,
                  "Background compile threads (default: the cores available)");
  cmd->add_option(
      "--lookahead", a->lookahead,
      "Configurations in flight (default: compile threads + 1, capped by the strategy)");
  cmd->add_option("--journal", a->journal,
                  "JSON-lines journal of every evaluation (default: beside the output)");
  cmd->add_option("--resume", a->resume,
                  "Continue the search of this journal (its settings apply unless given again)");
  g["replay"] = cmd->add_option("--replay", a->replay,
                                "Answer from a recorded space (a journal of an exhaustive run, "
                                ".jsonl or .gz) instead of a device");
  cmd->add_option("--replay-delay-ms", a->replay_delay_ms,
                  "Replay: sleep per evaluation, imitating measurement time");
  g["output"] = cmd->add_option("-o,--output", a->output,
                                "Best configuration per shape with metadata (JSON; default "
                                "search-<kernel>-<device>.json)");
  g["eval-timeout"] = cmd->add_option("--eval-timeout", a->eval_timeout_s,
                                      "Seconds an evaluation may take before it counts as a hang")
                          ->capture_default_str();
  cmd->add_flag("--in-process", a->in_process,
                "Evaluate in this process (no protection against driver crashes and hangs)");
  cmd->add_option("--cache-dir", a->cache_dir, "Kernel binary cache (\"none\" disables)");
  cmd->add_flag("--json", a->json, "Print the results as JSON");
  g["db"] = cmd->add_option("--db", a->db,
                            "Tuned database to update (default: results/<device id>.json; a replay "
                            "writes one only when given)");
  g["no-db"] = cmd->add_flag("--no-db", a->no_db, "Write no tuned database or report");
  cmd->add_flag("--replace", a->replace,
                "Replace a database entry even when the new result is slower");
  cmd->add_flag("--plots", a->plots,
                "Draw PNG pictures beside the report (python3 with matplotlib)");
  g["refine"] =
      cmd->add_flag("--refine", a->refine,
                    "Finish each shape with the A/B refinement (single changes from the best)");
  cmd->add_option("--refine-evals", a->refine_evals, "Evaluations the refinement may use")
      ->capture_default_str();
  cmd->callback([&options, a, given]() { run_search_command(options, *a, *given); });
}

}  // namespace gemmtune::cli
