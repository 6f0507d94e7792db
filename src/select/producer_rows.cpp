// SPDX-License-Identifier: Apache-2.0
#include "src/select/producer_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "src/core/int_math.hpp"
#include "src/kernel/gemm_view.hpp"

namespace gemmtune {

namespace {

// xgemm_fast's names: the producer rows and the rows that multiply (as many producers as those).
// The producers replace the multipliers' prefetch (PREFETCH) and the multistage copies (ASYNC),
// and fill a ring of STAGES buffers.
constexpr const char* kRows = "WSP";
constexpr const char* kMultiplierRows = "NDIMC";
constexpr const char* kKMajorB = "BKM";

}  // namespace

ProducerRowsDecision decide_producer_rows(const KernelSpec& spec, const Configuration& config,
                                          const Problem& problem, const DeviceModel& device,
                                          const ProducerRowsRule& rule) {
  ProducerRowsDecision out{config, "", std::nullopt, ""};
  const Parameter* rows = spec.find_parameter(kRows);
  const auto current = config.find(kRows);
  const auto multipliers = config.find(kMultiplierRows);
  if (!rule.on() || !rows || current == config.end() || current->second != 0 ||
      multipliers == config.end() || !rows->accepts(multipliers->second) || problem.batch != 1 ||
      device.compute_units <= 0) {
    return out;
  }
  Configuration with = config;
  with[kRows] = multipliers->second;
  with["PREFETCH"] = 0;
  with["ASYNC"] = 0;
  with["STAGES"] = rule.stages;
  const Context context{{"ELEM_BYTES", element_bytes(problem.precision)}};
  const KernelView view = kernel_view(problem);
  const std::optional<LaunchGeometry> found = try_launch_geometry(spec, with, context, view);
  if (!found) return out;  // the configuration's own check says why, where it runs
  const LaunchGeometry& geometry = *found;
  double groups = 1;
  for (size_t d = 0; d < geometry.global.size() && d < geometry.local.size(); ++d) {
    if (geometry.local[d] == 0) return out;
    groups *= static_cast<double>(geometry.global[d] / geometry.local[d]);
  }
  const double per_unit = groups / device.compute_units;
  if (per_unit > rule.max_groups_per_cu) return out;
  // The K tiles of a work-group's split of K (the template's roles split_k and tile_k).
  const int64_t split = std::max<int64_t>(spec.role(Role::kSplitK, with, context).value_or(1), 1);
  const int64_t tile_k = std::max<int64_t>(spec.role(Role::kTileK, with, context).value_or(1), 1);
  const int64_t k_tiles = ceil_div(ceil_div(view.k, split), tile_k);
  if (k_tiles < rule.min_k_tiles) return out;
  out.note = fmt::format(
      "{}={} (producer rows, STAGES {}): {:.0f} work-groups, {:.2f} a compute unit (the rule "
      "takes them up to {:.2f}), {} K tiles each (at least {})",
      kRows, multipliers->second, rule.stages, groups, per_unit, rule.max_groups_per_cu, k_tiles,
      rule.min_k_tiles);
  const Parameter* k_major = spec.find_parameter(kKMajorB);
  const auto k_major_now = with.find(kKMajorB);
  if (rule.k_major_b_min_tile_k > 0 && tile_k >= rule.k_major_b_min_tile_k && k_major &&
      k_major->accepts(1) && (k_major_now == with.end() || k_major_now->second == 0)) {
    Configuration k_major_b = with;
    k_major_b[kKMajorB] = 1;
    // The template's own constraints (its padding, say); the device's limits are the caller's.
    if (!spec.check(spec.complete(k_major_b), DeviceLimits{}, context)) {
      out.k_major_b = std::move(k_major_b);
      out.k_major_b_note = fmt::format("{}=1 (the K-major B tile: K tile {}, the rule's from {})",
                                       kKMajorB, tile_k, rule.k_major_b_min_tile_k);
    }
  }
  out.config = std::move(with);
  return out;
}

}  // namespace gemmtune
