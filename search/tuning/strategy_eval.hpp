// SPDX-License-Identifier: Apache-2.0
// Comparing strategies on a recorded space: each strategy is run with many seeds against a replay
// and scored by how many evaluations it needs to come close to the recorded optimum, and how
// close it is after fixed budgets.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/strategies/strategies.hpp"
#include "src/eval/replay_evaluator.hpp"

namespace gemmtune {

// The fraction of the optimum the budget and time tables report the share of runs reaching.
constexpr double kReportedFraction = 0.95;

struct StrategyEvalSettings {
  std::vector<std::string> strategies = {"bayes", "random", "anneal"};
  int seeds = 20;
  uint64_t first_seed = 1;  // runs use seeds first_seed .. first_seed + seeds - 1
  int max_evals = 100;
  size_t lookahead = 2;  // proposals in flight, as in a search on a device
  std::map<std::string, OptionValues> options;
  int threads = 1;
  std::vector<int> budgets = {10, 20, 40, 100};
  std::vector<double> thresholds = {0.90, 0.95, 0.99};
  // The recorded kernel's template, when available: its derived values become model features.
  const KernelSpec* spec = nullptr;
  // The time axis: each run replayed on a simulated clock (see ReplayClock), reporting the
  // fraction reached after each of `times_s`; none when empty.
  std::vector<double> times_s;
  int compile_processes = 0;  // builders ahead of the measurement; 0: the measurement builds
};

// A search's time on a recording, simulated: each configuration takes its recorded compile time
// in the first free of `processes` compile processes from when the search proposes it (or in the
// measuring process, when there are none), and its recorded measuring time (repetitions × mean)
// on the one device, which measures in proposal order as soon as the build is done. The
// searcher's own thinking time and the evaluator's overheads are not in the recordings, so they
// are left out.
class ReplayClock {
 public:
  explicit ReplayClock(int processes) : free_(size_t(std::max(processes, 0)), 0.0) {}
  // The configurations proposed now (the tuner announces them through prepare()).
  void proposed(const Result& recorded);
  // The configuration measured next; returns the time its measurement ends.
  double measured(const Result& recorded);
  double now() const { return now_; }

 private:
  std::vector<double> free_;             // when each compile process is free
  std::map<std::string, double> ready_;  // configuration → when its build is done
  double now_ = 0;
};

struct ThresholdStats {
  double threshold = 0;
  // Evaluations needed, over the runs; infinity where fewer than the quantile's share reached it.
  double median = 0, q1 = 0, q3 = 0;
  double reached = 0;  // share of runs that reached the threshold within max_evals
};

struct BudgetStats {
  int budget = 0;
  double mean_fraction = 0;  // mean over runs of optimum time / best time found
  double reached_95 = 0;     // share of runs at 95% of the optimum or better
};

struct TimeStats {
  double seconds = 0;
  double mean_fraction = 0;  // mean over runs of optimum time / best time found by then
  double reached_95 = 0;
  double runs_ended = 0;  // share of runs whose evaluations were all done before `seconds`
};

struct StrategyEval {
  std::string strategy;
  std::vector<ThresholdStats> thresholds;
  std::vector<BudgetStats> budgets;
  std::vector<TimeStats> times;  // the time axis, when asked for
  double seconds = 0;            // wall time of all runs of this strategy
  // Per run: fraction of the optimum reached after each evaluation.
  std::vector<std::vector<double>> trajectories;
  // Per run: simulated time at which each evaluation finished (with the time axis).
  std::vector<std::vector<double>> finish_s;
};

struct StrategyEvalReport {
  std::string kernel;  // the recording's
  Problem problem;
  size_t space_size = 0;
  size_t valid = 0;  // configurations with a valid measurement
  double optimum_ms = 0;
  Configuration optimum;
  std::vector<StrategyEval> strategies;
};

// Runs the comparison for one recorded problem. Throws Error when the recording holds no valid
// result to compare against.
StrategyEvalReport evaluate_strategies(const ReplayEvaluator& replay, const Problem& problem,
                                       const StrategyEvalSettings& settings);

// Quantile q of `values` (linear interpolation; infinity propagates).
double quantile(std::vector<double> values, double q);

void to_json(nlohmann::json& j, const ThresholdStats& t);
void to_json(nlohmann::json& j, const BudgetStats& b);
void to_json(nlohmann::json& j, const TimeStats& t);
void to_json(nlohmann::json& j, const StrategyEval& s);
void to_json(nlohmann::json& j, const StrategyEvalReport& r);

}  // namespace gemmtune
