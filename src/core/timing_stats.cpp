// SPDX-License-Identifier: Apache-2.0
#include "src/core/timing_stats.hpp"

#include <algorithm>
#include <cmath>

namespace gemmtune {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

TimingStats summarize_times(const std::vector<double>& totals, const std::vector<double>& mains) {
  TimingStats t;
  t.runs = static_cast<int>(totals.size());
  if (totals.empty()) return t;
  t.median_ms = median(totals);
  t.kernel_median_ms = mains.empty() ? t.median_ms : median(mains);
  t.min_ms = *std::min_element(totals.begin(), totals.end());
  t.max_ms = *std::max_element(totals.begin(), totals.end());
  double sum = 0;
  for (double v : totals) sum += v;
  t.mean_ms = sum / static_cast<double>(totals.size());
  double var = 0;
  for (double v : totals) var += (v - t.mean_ms) * (v - t.mean_ms);
  var /= static_cast<double>(totals.size());
  t.cv = t.mean_ms > 0 ? std::sqrt(var) / t.mean_ms : 0;
  return t;
}

}  // namespace gemmtune
