#include "src/eval/measure.hpp"

#include <algorithm>
#include <cmath>

namespace gemmtune {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

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
