// SPDX-License-Identifier: Apache-2.0
// How every evaluator turns repeated calls into timing figures: warm-up, then repetitions until
// MeasureSettings' minimum count and minimum time are both reached (capped by its maximum), and
// the statistics of the times.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "src/core/result.hpp"
#include "src/core/timing_stats.hpp"
#include "src/eval/evaluator_factory.hpp"

namespace gemmtune {

// Runs `call` (which returns its whole-call and main-kernel milliseconds) warmup_runs times
// untimed, then as MeasureSettings asks; summarizes the timed runs.
TimingStats measure_calls(const MeasureSettings& settings,
                          const std::function<std::pair<double, double>()>& call);

}  // namespace gemmtune
