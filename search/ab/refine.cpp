// SPDX-License-Identifier: Apache-2.0
#include "search/ab/refine.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"

namespace gemmtune {

std::vector<Configuration> single_changes(const ParamSpace& space, const Configuration& config) {
  std::vector<Configuration> out;
  for (const auto& p : space.parameters()) {
    if (p.values.size() < 2) continue;
    auto it = config.find(p.name);
    if (it == config.end()) continue;
    const int64_t current = it->second;
    // The space's lists are ordered; neighbours are found by value so that a configuration from
    // elsewhere (a database entry with a value outside the space) still has neighbours.
    std::vector<int64_t> values = p.values;
    std::sort(values.begin(), values.end());
    std::optional<int64_t> lower, upper;
    for (int64_t v : values) {
      if (v < current) lower = v;
      if (v > current && !upper) upper = v;
    }
    for (const auto& next : {lower, upper}) {
      if (!next) continue;
      Configuration candidate = config;
      candidate[p.name] = *next;
      if (!space.check(candidate)) out.push_back(std::move(candidate));
    }
  }
  return out;
}

std::optional<AbSide> pooled_measurements(const std::vector<AbRecord>& decisions,
                                          const Configuration& config, double flops) {
  std::optional<AbSide> pooled;
  for (const auto& d : decisions) {
    for (const AbSide* side : {&d.baseline, &d.changed}) {
      if (side->config != config || side->status != Status::kOk || side->times_ms.empty()) {
        continue;
      }
      if (!pooled) {
        pooled = *side;
        pooled->times_ms.clear();
      }
      pooled->times_ms.insert(pooled->times_ms.end(), side->times_ms.begin(), side->times_ms.end());
      pooled->indicators = side->indicators;
      pooled->max_error = std::max(pooled->max_error, side->max_error);
    }
  }
  if (pooled) summarize_side(*pooled, flops);
  return pooled;
}

RefineResult refine(Evaluator& evaluator, const Problem& problem, const ParamSpace& space,
                    Configuration baseline, const RefineOptions& options) {
  options.ab.validate();
  if (options.max_evals < 0) throw invalid_argument("--max-evals must not be negative");
  if (options.time_budget_s < 0) throw invalid_argument("--time-budget must not be negative");
  for (const auto& p : space.parameters()) {
    if (!baseline.count(p.name)) {
      throw invalid_argument("the refine baseline gives no value for " + p.name);
    }
  }
  if (options.max_evals > 0 && options.max_evals < 2 * options.ab.min_pairs) {
    throw invalid_argument(fmt::format(
        "--max-evals {} is less than one A/B comparison needs ({} evaluations for {} pairs)",
        options.max_evals, 2 * options.ab.min_pairs, options.ab.min_pairs));
  }
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };

  RefineResult res;
  res.start = baseline;
  res.best = baseline;
  std::set<Configuration> held{baseline};  // every configuration that has been the baseline

  // Why the budget does not allow another comparison, or "".
  auto budget_reason = [&]() -> std::string {
    if (options.interrupt && options.interrupt->load()) return "interrupted";
    if (options.max_evals > 0 && res.evaluations + 2 * options.ab.min_pairs > options.max_evals) {
      return fmt::format("evaluation budget spent ({} of {})", res.evaluations, options.max_evals);
    }
    if (options.time_budget_s > 0 && elapsed() >= options.time_budget_s) {
      return fmt::format("time budget spent ({:.0f} s)", options.time_budget_s);
    }
    return "";
  };

  while (res.stop_reason.empty()) {
    const auto candidates = single_changes(space, res.best);
    bool moved = false;
    for (const auto& candidate : candidates) {
      if (auto why = budget_reason(); !why.empty()) {
        res.stop_reason = why;
        break;
      }
      AbSettings ab = options.ab;
      if (options.max_evals > 0) {
        // Pairs beyond the minimum are cut to what the evaluation budget still allows.
        const int64_t pairs_left = (options.max_evals - res.evaluations) / 2;
        ab.max_pairs = static_cast<int>(
            std::max<int64_t>(ab.min_pairs, std::min<int64_t>(ab.max_pairs, pairs_left)));
      }
      auto stop_early = [&] {
        return options.time_budget_s > 0 && elapsed() >= options.time_budget_s;
      };
      AbRecord rec = run_ab(evaluator, &space.spec(), problem, res.best, candidate, ab,
                            options.indicators, stop_early);
      res.evaluations += rec.evaluations;
      if (rec.reason == DecisionReason::kTieSimpler && held.count(candidate)) {
        // Going back on a tie would undo a change that was kept for a measured win (or cycle
        // through ties): the earlier, decisive measurement stands.
        rec.decision = Decision::kRevert;
        rec.reason = DecisionReason::kTieRevisit;
        rec.explanation +=
            "; but it was left earlier for a measured win, which a tie does not undo";
      }
      spdlog::debug("refine: {} -> {} ({})", rec.change, to_string(rec.decision), rec.explanation);
      res.decisions.push_back(rec);
      if (options.on_decision) options.on_decision(rec);

      if (rec.reason == DecisionReason::kBaselineFailed) {
        res.stop_reason = "the baseline failed: " + to_string(rec.baseline.status);
        break;
      }
      if (rec.decision == Decision::kKeep) {
        ++res.kept;
        res.best = candidate;
        if (!held.insert(candidate).second) {
          // Only noise can lead back to a configuration already left: stop rather than cycle.
          res.stop_reason = "returned to " + to_string(candidate) +
                            ", which was left earlier (measurements disagree within noise)";
          break;
        }
        moved = true;
        break;
      }
    }
    if (!res.stop_reason.empty()) break;
    if (!moved) {
      res.converged = true;
      res.stop_reason =
          candidates.empty() ? "no valid single change exists" : "no single change wins";
    }
  }
  res.best_measurement = pooled_measurements(res.decisions, res.best, problem.flops());
  res.elapsed_s = elapsed();
  return res;
}

void to_json(nlohmann::json& j, const RefineResult& r) {
  j = {{"start", configuration_to_json(r.start)},
       {"best", configuration_to_json(r.best)},
       {"kept", r.kept},
       {"decisions", r.decisions.size()},
       {"evaluations", r.evaluations},
       {"elapsed_s", r.elapsed_s},
       {"converged", r.converged},
       {"stop_reason", r.stop_reason}};
  if (r.best_measurement) j["best_measurement"] = *r.best_measurement;
}

}  // namespace gemmtune
