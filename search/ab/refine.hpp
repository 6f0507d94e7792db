// SPDX-License-Identifier: Apache-2.0
// Automatic refinement by the A/B protocol: from a baseline, every single change (one parameter
// moved to a neighbouring value of the space) is A/B-tested against the current configuration;
// a kept change becomes the new baseline and the round starts again, until a whole round keeps
// nothing (no single change wins) or the budget ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/ab/ab_protocol.hpp"
#include "src/eval/evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

struct RefineOptions {
  AbSettings ab;
  int64_t max_evals = 0;     // evaluate() calls allowed; 0 = no limit
  double time_budget_s = 0;  // 0 = no limit
  // Bottleneck indicators of each side of a decision; empty = none recorded.
  IndicatorFunction indicators;
  // Called with each decision the moment it is made (the changelog and JSON-lines writers).
  std::function<void(const AbRecord&)> on_decision;
  const std::atomic<bool>* interrupt = nullptr;  // stops after the current decision when set
};

struct RefineResult {
  Configuration start;  // the baseline given
  Configuration best;   // the configuration refinement ended on
  // Every measurement of `best` in the decisions, pooled (absent when nothing was measured).
  std::optional<AbSide> best_measurement;
  std::vector<AbRecord> decisions;
  int kept = 0;
  int64_t evaluations = 0;
  double elapsed_s = 0;
  // True when a whole round of single changes of `best` was measured and none was kept: `best`
  // is a local optimum under the protocol.
  bool converged = false;
  std::string stop_reason;
};

// The single changes of `config` in `space`: each parameter with more than one value moved to the
// neighbouring lower and upper value of the space's list (the nearest ones when `config`'s value
// is not in the list), keeping only valid configurations (constraints and device limits). Ordered
// by parameter, lower value first.
std::vector<Configuration> single_changes(const ParamSpace& space, const Configuration& config);

// Every successful per-call time of `config` in `decisions` (on either side), pooled into one
// side with its median and spread; the indicators are those of its latest decision. Nullopt when
// `config` was never measured successfully.
std::optional<AbSide> pooled_measurements(const std::vector<AbRecord>& decisions,
                                          const Configuration& config, double flops);

// Runs the refinement. `baseline` must give every parameter of the space (complete it with the
// template's defaults first); it throws Error (invalid argument) naming a missing parameter.
// Usable after any search: refine(evaluator, problem, space, best.config, options).
RefineResult refine(Evaluator& evaluator, const Problem& problem, const ParamSpace& space,
                    Configuration baseline, const RefineOptions& options);

void to_json(nlohmann::json& j, const RefineResult& r);

}  // namespace gemmtune
