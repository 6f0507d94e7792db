// SPDX-License-Identifier: Apache-2.0
// gemmtune ab: one keep-or-revert comparison of a baseline configuration and a single change,
// measured interleaved and verified (see search/ab/ab_protocol.hpp). Also holds the set-up shared
// with gemmtune refine (tools/ab_options.hpp).
#include <climits>
#include <cmath>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/tuning/search_checks.hpp"
#include "src/core/error.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "tools/ab_options.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

void add_ab_options(CLI::App& cmd, AbCommandOptions& o) {
  cmd.add_option("-b,--baseline", o.baseline,
                 "Baseline: db:FILE (the database entry of the problem), journal:FILE (the fastest "
                 "result of the problem in a journal) or parameters \"MWG=64,...\" (missing ones "
                 "take the template's defaults)")
      ->required();
  cmd.add_option("--kernel", o.kernel, "Kernel template")->capture_default_str();
  add_problem_options(cmd, o.problem, kWholeProblem | kOneShape);
  add_device_option(cmd, o.device);
  cmd.add_option("--replay", o.replay,
                 "Answer from a recorded space (a journal of an exhaustive run) instead of a "
                 "device; without a shape, its only recorded problem is used");
  add_measure_options(cmd, o.eval, kTiming | kDataSeed | kCacheDir);
  cmd.add_option("--threshold", o.threshold,
                 "Speed-up a change must exceed to be kept: 2% or 0.02 (never less than the "
                 "measured noise)")
      ->capture_default_str();
  cmd.add_option("--min-pairs", o.min_pairs, "Interleaved baseline/change pairs at least")
      ->capture_default_str()
      ->check(whole_number(1, INT_MAX));
  cmd.add_option("--max-pairs", o.max_pairs, "Pairs at most, measured while within noise")
      ->capture_default_str()
      ->check(whole_number(1, INT_MAX));
  cmd.add_option("--log", o.log, "Append each decision to this JSON-lines file");
  cmd.add_option("--changelog", o.changelog, "Write each decision to this Markdown changelog");
  cmd.add_flag("--json", o.json, "Print the outcome as JSON");
}

double parse_threshold(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == ' ') t.pop_back();
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v)) {
    throw invalid_argument("--threshold '" + text + "' is not a number (write 2% or 0.02)");
  }
  if (percent) v /= 100;
  if (!(v >= 0 && v < 1)) {
    throw invalid_argument("--threshold '" + text +
                           "' is out of range: a fraction in [0, 1) or a percentage below 100%");
  }
  return v;
}

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string current;
  for (char c : all) {
    if (c == '\0') {
      args.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (args.empty()) return "gemmtune";
  std::string out = "gemmtune";
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool quote = a.empty() || a.find_first_of(" \t\"'$*?;&|<>()") != std::string::npos;
    out += " " + (quote ? "'" + a + "'" : a);
  }
  return out;
}

AbSession::AbSession() = default;
AbSession::~AbSession() = default;
AbSession::AbSession(AbSession&&) noexcept = default;

void AbSession::record(const AbRecord& rec) {
  if (log) log->append(rec);
  if (changelog) changelog->append(rec);
}

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The call time of a result, for ranking the results of a journal.
double ranking_time(const Result& r, double flops) {
  if (r.time.median_ms > 0) return r.time.median_ms;
  return r.gflops > 0 ? flops / (r.gflops * 1e6) : 0;
}

// The partial configuration and its origin in words.
std::pair<Configuration, std::string> resolve_baseline(const std::string& text,
                                                       const std::string& kernel,
                                                       const Problem& problem) {
  if (starts_with(text, "db:")) {
    const std::string path = text.substr(3);
    const Database db = Database::load(path);
    const EntryKey key = EntryKey::of(kernel, problem);
    const DatabaseEntry* e = db.find(key);
    if (!e) throw invalid_argument(path + " has no entry for " + key.to_string());
    if (e->status != Status::kOk) {
      throw invalid_argument(path + ": the entry for " + key.to_string() + " is " +
                             to_string(e->status) + ", not a usable baseline");
    }
    return {e->parameters, fmt::format("the entry for {} in {} ({:.2f} GFLOPS when found by {})",
                                       key.to_string(), path, e->gflops, e->found.strategy)};
  }
  if (starts_with(text, "journal:")) {
    const std::string path = text.substr(8);
    const Journal journal = read_journal(path);
    const std::string key = problem_key(kernel, problem);
    const Result* best = nullptr;
    for (const auto& e : journal.entries) {
      if (problem_key(e) != key || !e.result.ok()) continue;
      const double t = ranking_time(e.result, problem.flops());
      if (t > 0 && (!best || t < ranking_time(*best, problem.flops()))) best = &e.result;
    }
    if (!best) {
      throw invalid_argument(path + " has no valid result for " + kernel + " " +
                             problem.shape.to_string() + " " + problem.layout() + " fp" +
                             to_string(problem.precision));
    }
    return {best->config, fmt::format("the fastest of {} results in {} ({:.2f} GFLOPS recorded)",
                                      journal.entries.size(), path, best->gflops)};
  }
  return {parse_configuration(text), "given parameters"};
}

// A problem a recording holds, with the template it was measured with.
struct KernelProblem {
  std::string kernel;
  Problem problem;
};

// The only problem recorded in a journal, if there is exactly one.
std::optional<KernelProblem> single_problem(const std::vector<KernelProblem>& problems) {
  if (problems.size() == 1) return problems.front();
  return std::nullopt;
}

std::vector<KernelProblem> replay_problems(const ReplayEvaluator& replay) {
  std::vector<KernelProblem> out;
  for (const auto& p : replay.problems()) out.push_back({replay.kernel(), p});
  return out;
}

std::vector<KernelProblem> journal_problems(const Journal& j) {
  std::vector<KernelProblem> out;
  std::set<std::string> seen;
  for (const auto& e : j.entries) {
    if (seen.insert(problem_key(e)).second) out.push_back({e.kernel, e.problem});
  }
  return out;
}

std::string header_string(const nlohmann::json& header, const char* a, const char* b) {
  if (header.contains(a) && header[a].is_object() && header[a].contains(b) &&
      header[a][b].is_string()) {
    return header[a][b].get<std::string>();
  }
  return "";
}

}  // namespace

AbSession open_ab_session(const GlobalOptions& global, const AbCommandOptions& o,
                          const std::string& title) {
  AbSession s;
  s.settings.threshold = parse_threshold(o.threshold);
  s.settings.min_pairs = o.min_pairs;
  s.settings.max_pairs = o.max_pairs;
  s.settings.validate();

  // The problem: the flags, else the only problem a replay or journal records.
  const std::optional<Shape> shape = o.problem.one_shape();
  std::unique_ptr<ReplayEvaluator> replay;
  if (!o.replay.empty()) replay = std::make_unique<ReplayEvaluator>(o.replay);
  if (shape) {
    s.kernel = o.kernel;
    s.problem = o.problem.problem();
    s.problem.shape = *shape;
  } else {
    std::optional<KernelProblem> only;
    std::string from;
    if (replay) {
      only = single_problem(replay_problems(*replay));
      from = o.replay;
    } else if (starts_with(o.baseline, "journal:")) {
      only = single_problem(journal_problems(read_journal(o.baseline.substr(8))));
      from = o.baseline.substr(8);
    }
    if (!only) {
      throw invalid_argument(
          from.empty() ? "give the problem shape with --shape MxNxK or -m/-n/-k"
                       : from + " records several problems: choose one with --shape MxNxK");
    }
    s.kernel = only->kernel;
    s.problem = only->problem;
  }
  check_index_range(s.problem);

  // The evaluator.
  std::string problem_words =
      fmt::format("{} {} {}-major {} fp{}", s.kernel, s.problem.shape.to_string(),
                  s.problem.order_name(), s.problem.layout(), to_string(s.problem.precision));
  if (s.problem.batch != 1) {
    problem_words +=
        fmt::format(" batch {} ({})", s.problem.batch, to_string(s.problem.batch_layout));
  }
  if (!s.problem.epilogue.none()) problem_words += " epilogue " + to_string(s.problem.epilogue);
  if (replay) {
    if (s.kernel != replay->kernel()) {
      throw invalid_argument("replay " + o.replay + " records kernel " + replay->kernel() +
                             ", not " + s.kernel);
    }
    if (!replay->has_problem(s.problem)) replay->configurations(s.problem);  // throws, naming it
    s.owned_spec_ = std::make_unique<KernelSpec>(
        KernelSpec::load(templates_dir(global) + "/" + s.kernel + ".json"));
    s.spec = s.owned_spec_.get();
    replay->set_defaults(s.spec->defaults());
    const nlohmann::json& h = replay->header();
    std::string device = header_string(h, "device", "name");
    if (device.empty() && h.contains("device") && h["device"].is_string()) {
      device = h["device"].get<std::string>();
    }
    s.header_fields.push_back({"evaluator", "replay of " + o.replay});
    if (!device.empty()) s.header_fields.push_back({"device (recorded)", device});
    const std::string driver = header_string(h, "device", "driver_version");
    if (!driver.empty()) s.header_fields.push_back({"driver (recorded)", driver});
    s.evaluator = std::make_unique<CheckedEvaluator>(std::move(replay), *s.spec, DeviceLimits{});
    s.indicators = report_indicator_function(*s.spec, nullptr, DatabaseDevice{});
  } else {
    s.profiles_ = std::make_unique<ProfileSet>(load_profiles(global));
    const Device device = select_device(o.device, s.profiles_.get());
    const DeviceProfile* profile = s.profiles_->find(device.info.profile);
    EvaluatorOptions eo = evaluator_options(global, o.eval);
    // Background compilation would compete with the timed runs and widen the noise.
    eo.compile_threads = 1;
    auto ev = make_evaluator(s.kernel, device, profile, eo);
    s.spec = &ev->spec();
    s.limits = device_limits(device.info, profile);
    s.indicators = report_indicator_function(*s.spec, profile, DatabaseDevice::from(device.info));
    s.header_fields.push_back({"device", fmt::format("{} ({}, profile {})", device.info.name,
                                                     device.info.vendor, device.info.profile)});
    s.header_fields.push_back(
        {"driver", fmt::format("{}; platform {} ({})", device.info.driver_version,
                               device.info.platform_name, device.info.platform_version)});
    s.evaluator = std::move(ev);
  }
  s.header_fields.push_back({"problem", problem_words});

  // The baseline, completed with the template's defaults.
  auto [partial, origin] = resolve_baseline(o.baseline, s.kernel, s.problem);
  s.baseline = s.spec->complete(partial);
  s.baseline_origin = origin;
  s.header_fields.push_back({"baseline", "`" + to_string(s.baseline) + "` (" + origin + ")"});
  std::string settings = fmt::format("threshold {:g}%, {} to {} pairs", 100 * s.settings.threshold,
                                     s.settings.min_pairs, s.settings.max_pairs);
  if (o.replay.empty()) {
    settings += fmt::format(", {} timed runs and {:g} ms at least per measurement",
                            o.eval.measure.min_runs, o.eval.measure.min_time_ms);
  }
  s.header_fields.push_back({"settings", settings});

  if (!o.log.empty()) s.log = std::make_unique<DecisionLog>(o.log);
  if (!o.changelog.empty()) {
    ChangelogHeader h;
    h.title = title + " (" + iso_utc_now() + ")";
    h.fields.push_back({"command", "`" + command_line() + "`"});
    h.fields.push_back({"date", iso_utc_now()});
    for (const auto& f : s.header_fields) h.fields.push_back(f);
    s.changelog = std::make_unique<MarkdownChangelog>(o.changelog, h);
  }
  return s;
}

namespace {

void print_side(const char* label, const AbSide& side) {
  if (side.status != Status::kOk) {
    std::cout << fmt::format(
        "{:<11}{}{}\n", label, to_string(side.status),
        side.message.empty() ? "" : ": " + side.message.substr(0, side.message.find('\n')));
    return;
  }
  if (side.times_ms.empty()) {
    std::cout << fmt::format("{:<11}not measured\n", label);
    return;
  }
  std::cout << fmt::format("{:<11}{:.2f} ± {:.2f} GFLOPS (median {:.4f} ms over {} calls)\n", label,
                           side.gflops, side.gflops_spread, side.median_ms, side.times_ms.size());
}

void print_record(const AbRecord& r) {
  std::cout << fmt::format("problem    {} {} {}-major {} fp{}\n", r.kernel,
                           r.problem.shape.to_string(), r.problem.order_name(), r.problem.layout(),
                           to_string(r.problem.precision));
  std::cout << fmt::format("baseline   {}\n", to_string(r.baseline.config));
  std::cout << fmt::format("change     {}\n", r.change);
  print_side("  before", r.baseline);
  print_side("  after", r.changed);
  if (r.stats.pairs > 0) {
    std::cout << fmt::format("gain       {:+.2f}% over {} pairs (noise ±{:.2f}%, margin {:.2f}%)\n",
                             100 * r.stats.gain, r.stats.pairs, 100 * r.stats.noise,
                             100 * r.stats.margin);
  }
  std::cout << fmt::format("simpler    {}\n", r.simplicity.order < 0
                                                  ? "the change: " + r.simplicity.describe()
                                              : r.simplicity.order > 0 ? "the baseline"
                                                                       : "equally simple");
  std::cout << fmt::format("decision   {}: {}\n", to_string(r.decision), r.explanation);
  std::cout << fmt::format("kept       {}\n", to_string(r.kept()));
}

void run_ab_command(const GlobalOptions& global, const AbCommandOptions& o,
                    const std::string& change_text) {
  AbSession s = open_ab_session(global, o, "A/B comparison");
  const Configuration overrides = parse_configuration(change_text);
  if (overrides.empty()) throw invalid_argument("--change gives no parameter");
  const Configuration change = merge_configuration(s.baseline, overrides, true);
  if (change == s.baseline) {
    throw invalid_argument("--change '" + change_text + "' leaves the baseline as it is");
  }
  spdlog::info("A/B on {}: baseline {} vs {}", s.evaluator->description(), to_string(s.baseline),
               describe_change(s.baseline, change));
  const AbRecord rec =
      run_ab(*s.evaluator, s.spec, s.problem, s.baseline, change, s.settings, s.indicators);
  s.record(rec);
  if (o.json) {
    std::cout << nlohmann::json(rec).dump(2) << "\n";
  } else {
    print_record(rec);
  }
  if (rec.reason == DecisionReason::kBaselineFailed) {
    // Nothing was compared: a failed check, not a decision.
    throw CheckFailed(rec.explanation.substr(0, rec.explanation.find('\n')));
  }
}

}  // namespace

void set_ab_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<AbCommandOptions>();
  auto change = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "ab",
      "Keep or revert one change: measure baseline and change interleaved, verify both, "
      "decide by speed, noise and simplicity");
  add_ab_options(*cmd, *o);
  cmd->add_option("-c,--change", *change, "The change, as parameters: \"KWI=4\" or \"VWM=4,VWN=4\"")
      ->required();
  cmd->callback([&options, o, change]() { run_ab_command(options, *o, *change); });
}

}  // namespace gemmtune::cli
