// SPDX-License-Identifier: Apache-2.0
#include "src/eval/measure.hpp"

#include <algorithm>
#include <cmath>

namespace gemmtune {

TimingStats measure_calls(const MeasureSettings& settings,
                          const std::function<std::pair<double, double>()>& call) {
  for (int i = 0; i < settings.warmup_runs; ++i) call();
  std::vector<double> totals, mains;
  double sum = 0;
  const int max_runs = std::max(settings.max_runs, 1);
  while (static_cast<int>(totals.size()) < max_runs &&
         (static_cast<int>(totals.size()) < settings.min_runs || sum < settings.min_time_ms)) {
    const auto [total, main] = call();
    totals.push_back(total);
    mains.push_back(main);
    sum += total;
  }
  return summarize_times(totals, mains);
}

}  // namespace gemmtune
