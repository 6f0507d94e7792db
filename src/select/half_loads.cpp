// SPDX-License-Identifier: Apache-2.0
#include "src/select/half_loads.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "src/kernel/gemm_view.hpp"

namespace gemmtune {

HalfLoadsDecision decide_half_loads(const KernelSpec& spec, const Configuration& config,
                                    const Problem& problem, const HalfLoadsRule& rule) {
  HalfLoadsDecision out{config, ""};
  const std::string& name = spec.launch().half_ld_parameter;
  if (!rule.on() || name.empty() || !config.count(name) || config.at(name) == 1) return out;
  const Context context{{"ELEM_BYTES", element_bytes(problem.precision)}};
  for (const std::string& other : rule.without) {
    if (spec.value_of(other, config, context).value_or(0) != 0) return out;
  }
  const KernelView view = kernel_view(problem);
  // The operand laid along K: A transposed or B not, in the kernel's view.
  if (!view.trans_a && view.trans_b) return out;
  const std::optional<LaunchGeometry> found = try_launch_geometry(spec, config, context, view);
  if (!found) return out;  // the configuration's own check says why, where it runs
  const LaunchGeometry& geometry = *found;
  if (geometry.align_ld > 1 || geometry.padded) return out;  // the copies align the operands
  Configuration on = config;
  on[name] = 1;
  if (spec.check(on, DeviceLimits{}, context)) return out;  // the template refuses it
  const std::optional<int64_t> width = spec.evaluate(spec.launch().half_ld_width, on, context);
  const int64_t k = view.k;
  if (!width || *width < 2 || k < rule.min_k || k % *width == 0 || k % (*width / 2) != 0) {
    return out;
  }
  out.config = std::move(on);
  out.note = fmt::format(
      "{}=1: K = {} is a multiple of {} but not of the {}-wide loads, so the operand laid along K "
      "loads as {}-wide halves (the profile's half_loads rule: K at least {})",
      name, k, *width / 2, *width, *width / 2, rule.min_k);
  return out;
}

}  // namespace gemmtune
