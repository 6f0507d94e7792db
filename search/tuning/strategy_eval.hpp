// Comparing strategies on a recorded space: each strategy is run with many seeds against a replay
// and scored by how many evaluations it needs to come close to the recorded optimum, and how
// close it is after fixed budgets.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/strategies/strategies.hpp"
#include "src/eval/replay_evaluator.hpp"

namespace gemmtune {

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

struct StrategyEval {
  std::string strategy;
  std::vector<ThresholdStats> thresholds;
  std::vector<BudgetStats> budgets;
  double seconds = 0;  // wall time of all runs of this strategy
  // Per run: fraction of the optimum reached after each evaluation.
  std::vector<std::vector<double>> trajectories;
};

struct StrategyEvalReport {
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
void to_json(nlohmann::json& j, const StrategyEval& s);
void to_json(nlohmann::json& j, const StrategyEvalReport& r);

}  // namespace gemmtune
