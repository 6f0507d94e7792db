// SPDX-License-Identifier: Apache-2.0
// How a search job shares its budget over its shapes, and how it splits over shards.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/job/job_parts.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

// Exhaustive and random searches visit configurations independently of each other's results, so
// their shards split every shape's space; the model-based strategies learn from the whole space
// (a modulo slice would hide whole values of a parameter from them), so they split the shapes.
bool shards_split_space(const std::string& strategy) {
  return strategy == "exhaustive" || strategy == "random";
}

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

StopCondition stop_condition(SearchJobOptions& a) {
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

std::vector<StopCondition> shape_budgets(SearchJobOptions& a,
                                         const std::vector<WorkloadShape>& workload_shapes,
                                         std::vector<Problem>& problems) {
  if (a.workload.empty()) return std::vector<StopCondition>(problems.size(), stop_condition(a));
  auto workload = workload_shapes;
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

}  // namespace gemmtune
