// SPDX-License-Identifier: Apache-2.0
#include "src/select/split_k_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "src/core/int_math.hpp"
#include "src/kernel/gemm_view.hpp"

namespace gemmtune {

namespace {

// The share of the prediction's time the weighing keeps for the work-groups where the
// reduction's estimate alone would take all of it (a prediction far too short for the shape).
constexpr double kLeastSplitComputeShare = 0.05;

}  // namespace

SplitKFitDecision decide_split_k(const KernelSpec& spec, const Configuration& config,
                                 const ResourceUsage& usage, const Problem& problem,
                                 double predicted_gflops, const DeviceModel& device,
                                 const SplitKRule& rule) {
  SplitKFitDecision out{config, ""};
  const auto& declared = spec.launch().split_k;
  if (!rule.on() || !declared || problem.batch != 1 || predicted_gflops <= 0 ||
      device.compute_units <= 0) {
    return out;
  }
  const std::string& name = declared->parameter;
  const Parameter* parameter = spec.find_parameter(name);
  const auto current = config.find(name);
  if (!parameter || current == config.end() || current->second <= 1) return out;
  const Context context{{"ELEM_BYTES", element_bytes(problem.precision)}};
  const KernelView view = kernel_view(problem);
  const std::optional<LaunchGeometry> found = try_launch_geometry(spec, config, context, view);
  if (!found) return out;  // the configuration's own check says why, where it runs
  const LaunchGeometry& geometry = *found;
  if (!geometry.split_k || !geometry.split_k->reduce_launch() || geometry.padded) return out;
  const TileGeometry tile = TileGeometry::of(&spec, config, problem.precision, usage, device);
  if (!tile.tiled) return out;
  const int64_t tiles = ceil_div(view.m, tile.mwg) * ceil_div(view.n, tile.nwg);
  const double reduce_bytes_per_part =
      static_cast<double>(view.m) * static_cast<double>(view.n) * element_bytes(problem.precision);
  // The busiest unit's K iterations, and the reduction's microseconds, of a split of `s`.
  auto iterations = [&](int64_t s) {
    const double rounds =
        busiest_unit_time(tiles * s, device.compute_units, tile.slots, rule.saturation_groups);
    return rounds * (double(ceil_div(ceil_div(view.k, s), tile.kwg)) + rule.group_overhead);
  };
  auto reduce_us = [&](int64_t s) {
    if (s <= 1) return 0.0;
    const double traffic =
        rule.reduce_gbs > 0 ? double(s + 1) * reduce_bytes_per_part / (rule.reduce_gbs * 1e3) : 0;
    return traffic + rule.launch_us;
  };
  const int64_t own = current->second;
  const double predicted_us = problem.flops() / (predicted_gflops * 1e3);
  const double us_per_iteration =
      std::max(predicted_us - reduce_us(own), kLeastSplitComputeShare * predicted_us) /
      iterations(own);
  auto weigh = [&](int64_t s) { return us_per_iteration * iterations(s) + reduce_us(s); };
  const double own_us = weigh(own);
  int64_t best = own;
  double best_us = own_us;
  for (int64_t s : rule.values) {
    if (s == own || !parameter->accepts(s)) continue;
    Configuration with = config;
    with[name] = s;
    if (spec.check(with, DeviceLimits{}, context)) continue;  // the template refuses it
    const double us = weigh(s);
    if (us < best_us) {
      best = s;
      best_us = us;
    }
  }
  if (best == own || best_us > (1 - rule.min_gain) * own_us) return out;
  out.config[name] = best;
  out.note = fmt::format(
      "{}={} (measured with {}): {} tiles in {} work-groups on {} compute units, {} at once, "
      "weighed {:.1f} us against {:.1f} (the profile's split_k rule: at least {:.0f}% faster)",
      name, best, own, tiles, tiles * best, static_cast<int64_t>(device.compute_units), tile.slots,
      best_us, own_us, rule.min_gain * 100);
  return out;
}

}  // namespace gemmtune
