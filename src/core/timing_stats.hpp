// SPDX-License-Identifier: Apache-2.0
// Timing statistics of repeated runs, shared by the evaluators that time kernels and the readers
// of other tools' recordings that list each run's time.
#pragma once

#include <chrono>
#include <vector>

#include "src/core/result.hpp"

namespace gemmtune {

// Milliseconds from `t0` to now on the steady clock.
inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The median of `values` (0 for none).
double median(std::vector<double> values);

// Statistics of whole-call times `totals`; kernel_median_ms is the median of `mains` (the main
// kernel alone), or of `totals` when `mains` is empty.
TimingStats summarize_times(const std::vector<double>& totals, const std::vector<double>& mains);

}  // namespace gemmtune
