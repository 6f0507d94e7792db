// SPDX-License-Identifier: Apache-2.0
// gemmtune search-eval: compares search strategies on a recorded space (a replay file), over many
// seeds: evaluations needed to reach 90/95/99% of the recorded optimum, the fraction of the
// optimum reached after fixed budgets and, with --times, after simulated seconds.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/tuning/search_checks.hpp"
#include "search/tuning/strategy_eval.hpp"
#include "search/tuning/tuner.hpp"
#include "src/core/error.hpp"
#include "src/db/recording.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

// Bounds of the counts: far beyond any useful run, and within an int.
constexpr int64_t kMaxCount = 1000000;
constexpr int64_t kMaxThreads = 4096;

struct EvalArgs {
  std::string replay;
  std::string strategies = "bayes,random,anneal";
  std::vector<std::string> strategy_options;
  std::string shape;
  int seeds = 20;
  uint64_t first_seed = 1;
  int max_evals = 100;
  int lookahead = 2;
  int threads = 0;
  std::vector<int> budgets = {10, 20, 40, 60, 100};
  std::vector<double> times;
  int compile_processes = 0;
  bool no_spec = false;
  bool json = false;
  bool allow_partial = false;
};

std::string evals(double v, int max_evals) {
  return std::isfinite(v) ? fmt::format("{:.0f}", v) : fmt::format(">{}", max_evals);
}

void print_times(const StrategyEvalReport& r, const StrategyEvalSettings& s) {
  std::cout << fmt::format(
      "\nMean fraction of the optimum after T seconds, simulated from the recorded compile and "
      "measuring times with {} (share of runs at 95% or better)\n",
      s.compile_processes > 0 ? fmt::format("{} compile processes", s.compile_processes)
                              : std::string("builds in the measuring process"));
  std::cout << fmt::format("{:<12}", "strategy");
  for (double t : s.times_s) std::cout << fmt::format(" {:>16}", fmt::format("T={:g}s", t));
  std::cout << "\n";
  std::string ended;
  for (const auto& e : r.strategies) {
    std::cout << fmt::format("{:<12}", e.strategy);
    for (const auto& t : e.times) {
      std::cout << fmt::format(
          " {:>16}", fmt::format("{:.3f} ({:.0f}%)", t.mean_fraction, t.reached_95 * 100));
      if (t.runs_ended > 0 && ended.empty()) {
        ended = fmt::format(
            "{}: {:.0f}% of the runs used all {} evaluations before {:g} s (their value at the "
            "end is shown; raise --max-evals to see further)\n",
            e.strategy, t.runs_ended * 100, s.max_evals, t.seconds);
      }
    }
    std::cout << "\n";
  }
  std::cout << ended;
}

void print_report(const StrategyEvalReport& r, const StrategyEvalSettings& s) {
  std::cout << fmt::format(
      "{}: {} configurations ({} valid), optimum {:.4f} ms with {}\n{} seeds, up to {} "
      "evaluations each, {} in flight\n\n",
      r.problem.shape.to_string(), r.space_size, r.valid, r.optimum_ms, to_string(r.optimum),
      s.seeds, s.max_evals, s.lookahead);
  std::cout << "Evaluations to reach a fraction of the optimum: median [quartiles], share of runs "
               "reaching it\n";
  std::cout << fmt::format("{:<12}", "strategy");
  for (double t : s.thresholds)
    std::cout << fmt::format(" {:>26}", fmt::format("{:.0f}%", t * 100));
  std::cout << fmt::format(" {:>8}\n", "seconds");
  for (const auto& e : r.strategies) {
    std::cout << fmt::format("{:<12}", e.strategy);
    for (const auto& t : e.thresholds) {
      std::cout << fmt::format(
          " {:>26}",
          fmt::format("{} [{}-{}] {:.0f}%", evals(t.median, s.max_evals), evals(t.q1, s.max_evals),
                      evals(t.q3, s.max_evals), t.reached * 100));
    }
    std::cout << fmt::format(" {:>8.1f}\n", e.seconds);
  }
  std::cout << "\nMean fraction of the optimum after N evaluations (share of runs at 95% or "
               "better)\n";
  std::cout << fmt::format("{:<12}", "strategy");
  if (!r.strategies.empty()) {
    for (const auto& b : r.strategies.front().budgets) {
      std::cout << fmt::format(" {:>16}", fmt::format("N={}", b.budget));
    }
  }
  std::cout << "\n";
  for (const auto& e : r.strategies) {
    std::cout << fmt::format("{:<12}", e.strategy);
    for (const auto& b : e.budgets) {
      std::cout << fmt::format(
          " {:>16}", fmt::format("{:.3f} ({:.0f}%)", b.mean_fraction, b.reached_95 * 100));
    }
    std::cout << "\n";
  }
  if (!s.times_s.empty()) print_times(r, s);
}

// The template of a recorded kernel, whose derived values the model-based strategies use as
// features; null (with a note) when the templates folder has no such kernel.
const KernelSpec* load_spec(const GlobalOptions& options, const std::string& kernel,
                            std::map<std::string, std::unique_ptr<KernelSpec>>& cache) {
  auto it = cache.find(kernel);
  if (it != cache.end()) return it->second.get();
  const std::string path = templates_dir(options) + "/" + kernel + ".json";
  std::unique_ptr<KernelSpec> spec;
  if (kernel.empty()) {
    spdlog::warn("the recording names no kernel: models see the parameters only");
  } else if (std::filesystem::exists(path)) {
    spec = std::make_unique<KernelSpec>(KernelSpec::load(path));
  } else {
    spdlog::warn("no template {} for the recorded kernel: models see the parameters only", path);
  }
  return cache.emplace(kernel, std::move(spec)).first->second.get();
}

void run_search_eval(const GlobalOptions& options, const EvalArgs& a, bool lookahead_given) {
  const Journal recording = read_recording(a.replay);
  // Strategies are scored against the recorded optimum: on a sample of the space that is the
  // best of the sample, not of the space, and the scores would flatter every strategy.
  const auto partial = partial_recording(recording);
  if (partial && !a.allow_partial) {
    throw invalid_argument("replay " + a.replay + " records " + *partial +
                           ", not the whole space: scores would be measured against the best of "
                           "a sample (pass --allow-partial to compare anyway)");
  }
  if (partial) spdlog::warn("replay {} records {}, not the whole space", a.replay, *partial);
  ReplayEvaluator replay(recording);
  StrategyEvalSettings s;
  s.strategies.clear();
  std::string item;
  std::istringstream in(a.strategies);
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    find_strategy(item);
    s.strategies.push_back(item);
  }
  if (s.strategies.empty()) throw invalid_argument("--strategies names no strategy");
  s.options = parse_strategy_options(a.strategy_options);
  for (const auto& [name, values] : s.options) {
    if (std::find(s.strategies.begin(), s.strategies.end(), name) == s.strategies.end()) {
      throw invalid_argument("option for strategy " + name + ", which is not among --strategies");
    }
  }
  if (a.seeds < 1) throw invalid_argument("--seeds must be at least 1");
  if (a.max_evals < 1) throw invalid_argument("--max-evals must be at least 1");
  if (a.lookahead < 1) throw invalid_argument("--lookahead must be at least 1");
  s.seeds = a.seeds;
  s.first_seed = a.first_seed;
  s.max_evals = a.max_evals;
  s.compile_processes = a.compile_processes;
  // As a search keeps a compile pool busy, unless the lookahead is given.
  s.lookahead = a.compile_processes > 0 && !lookahead_given
                    ? pool_lookahead(size_t(a.compile_processes))
                    : size_t(a.lookahead);
  for (double t : a.times) {
    if (!(t > 0)) throw invalid_argument("--times must be positive seconds");
    s.times_s.push_back(t);
  }
  s.budgets.clear();
  for (int b : a.budgets) {
    if (b < 1) throw invalid_argument("--budgets must be positive");
    if (b <= a.max_evals) s.budgets.push_back(b);
  }
  s.threads = a.threads > 0 ? a.threads : int(std::max(1u, std::thread::hardware_concurrency()));

  std::vector<Problem> problems;
  if (a.shape.empty()) {
    problems = replay.problems();
  } else {
    const Shape shape = parse_shape(a.shape);
    for (const auto& p : replay.problems()) {
      if (p.shape == shape) problems.push_back(p);
    }
    if (problems.empty()) {
      throw invalid_argument("replay " + a.replay + " has no recording of " + shape.to_string());
    }
  }
  nlohmann::json out = nlohmann::json::array();
  std::map<std::string, std::unique_ptr<KernelSpec>> specs;
  for (const auto& p : problems) {
    s.spec = a.no_spec ? nullptr : load_spec(options, replay.kernel(), specs);
    const auto report = evaluate_strategies(replay, p, s);
    if (a.json) {
      nlohmann::json j = report;
      j["settings"] = {{"seeds", s.seeds},
                       {"first_seed", s.first_seed},
                       {"max_evals", s.max_evals},
                       {"lookahead", s.lookahead},
                       {"compile_processes", s.compile_processes},
                       {"times", s.times_s},
                       {"replay", a.replay},
                       {"strategy_options", a.strategy_options},
                       {"derived_features", s.spec != nullptr},
                       {"whole_space", !partial}};
      out.push_back(j);
    } else {
      print_report(report, s);
    }
  }
  if (a.json) std::cout << out.dump(2) << "\n";
}

}  // namespace

void set_search_eval_command(CLI::App& app, GlobalOptions& options) {
  auto a = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("search-eval",
                                 "Compare search strategies on a recorded space over many seeds");
  cmd->add_option("--replay", a->replay,
                  "Recorded space: journal of an exhaustive search, Kernel Tuner cache file or T4 "
                  "results (each optionally .gz)")
      ->required();
  cmd->add_option("--strategies", a->strategies, "Comma-separated strategies")
      ->capture_default_str();
  cmd->add_option("--strategy-option", a->strategy_options,
                  "STRATEGY.NAME=VALUE (repeatable; see search --help)");
  cmd->add_option("--shape", a->shape, "Recorded shape to use (default: every recorded shape)");
  cmd->add_option("--seeds", a->seeds, "Runs per strategy")
      ->capture_default_str()
      ->check(whole_number(1, kMaxCount));
  cmd->add_option("--first-seed", a->first_seed, "Seed of the first run")
      ->capture_default_str()
      ->check(seed_number());
  cmd->add_option("--max-evals", a->max_evals, "Evaluations per run")
      ->capture_default_str()
      ->check(whole_number(1, kMaxCount));
  cmd->add_option("--lookahead", a->lookahead,
                  "Proposals in flight (2: one timed while the next compiles)")
      ->capture_default_str()
      ->check(whole_number(1, kMaxCount));
  cmd->add_option("--threads", a->threads, "Runs in parallel (default: the cores available)")
      ->check(whole_number(1, kMaxThreads));
  cmd->add_option("--budgets", a->budgets,
                  "Evaluation counts at which to report the fraction reached")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--times", a->times,
                  "Seconds at which to report the fraction reached, on a clock simulated from the "
                  "recorded compile and measuring times")
      ->delimiter(',');
  cmd->add_option("--compile-processes", a->compile_processes,
                  "Compile processes of the simulated clock (0: the measuring process builds); "
                  "the lookahead follows them as in a search unless given")
      ->capture_default_str()
      ->check(whole_number(0, kMaxThreads));
  cmd->add_flag("--no-template", a->no_spec,
                "Do not load the recorded kernel's template (models see the parameters only)");
  cmd->add_flag("--json", a->json, "Print JSON instead of tables");
  cmd->add_flag("--allow-partial", a->allow_partial,
                "Accept a recording of part of the space (a non-exhaustive or budgeted search)");
  auto* lookahead = cmd->get_option("--lookahead");
  cmd->callback(
      [a, &options, lookahead]() { run_search_eval(options, *a, lookahead->count() > 0); });
}

}  // namespace gemmtune::cli
