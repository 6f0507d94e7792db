// SPDX-License-Identifier: Apache-2.0
// The interface between searchers and whatever answers "how fast is this configuration":
// the OpenCL evaluator (compile, run, time, verify on a device) or the replay evaluator (answers
// from a recorded space, for testing searchers without a device).
#pragma once

#include <string>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"

namespace gemmtune {

// What a search tells one measurement beyond the configuration.
struct EvaluationHint {
  // Above 0: once even the fastest timed sample takes longer than this many milliseconds a call,
  // the measurement stops there. A search sets it well above its best time so far: a configuration
  // that much slower needs no more precise figure to be ranked below it.
  double stop_above_ms = 0;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Measures and verifies one configuration. Never throws for a bad configuration: the failure is
  // the returned Result's status.
  virtual Result evaluate(const Problem& problem, const Configuration& config) = 0;
  // The same with a search's hint; evaluators that time nothing themselves pass it on or ignore it.
  virtual Result evaluate_hinted(const Problem& problem, const Configuration& config,
                                 const EvaluationHint& hint) {
    return evaluate(problem, config);
  }
  // Hint that these configurations come next (e.g. compile them in the background).
  virtual void prepare(const Problem& problem, const std::vector<Configuration>& upcoming) {}
  // False where evaluate() would first wait for a build that is under way elsewhere (a compile
  // pool's worker has it queued or building): the search may measure something built meanwhile.
  virtual bool ready(const Problem& problem, const Configuration& config) { return true; }
  virtual std::string description() const = 0;
};

}  // namespace gemmtune
