// SPDX-License-Identifier: Apache-2.0
#include "src/select/aligned_copy.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "src/kernel/gemm_view.hpp"

namespace gemmtune {

AlignedCopyDecision decide_aligned_copy(const KernelSpec& spec, const Configuration& config,
                                        const Problem& problem, const DeviceModel& device,
                                        const AlignedCopyRule& rule) {
  AlignedCopyDecision out{config, ""};
  const std::string& name = spec.launch().align_ld_parameter;
  const auto it = config.find(name);
  const double peak = device.peak_gflops(problem.precision);
  if (!rule.on() || name.empty() || it == config.end() || problem.batch != 1 || peak <= 0 ||
      device.bandwidth_gbs <= 0) {
    return out;
  }
  Configuration on = config;
  on[name] = 1;
  const KernelView view = kernel_view(problem);
  const int64_t elem = element_bytes(problem.precision);
  const std::optional<LaunchGeometry> found =
      try_launch_geometry(spec, on, Context{{"ELEM_BYTES", elem}}, view);
  if (!found) return out;  // the configuration's own check says why, where it runs
  const LaunchGeometry& geometry = *found;
  if (geometry.align_ld <= 1 || geometry.padded) return out;
  int copies = 0;
  double bytes = 0;
  for (const auto& [rows, cols] :
       {std::pair{view.a_rows(), view.a_cols()}, std::pair{view.b_rows(), view.b_cols()}}) {
    if (rows % geometry.align_ld == 0) continue;
    ++copies;
    bytes += static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(elem);
  }
  if (copies == 0) return out;
  // A read and a write of each copied operand; GB/s is bytes per microsecond over 1e3.
  const double copy_us = 2 * bytes / (device.bandwidth_gbs * 1e3) + rule.launch_us * copies;
  // The kernel's shortest possible time: a prediction can miss a small shape by far more.
  const double kernel_us = problem.flops() / (peak * 1e3);
  const int64_t want = copy_us <= rule.max_share * kernel_us ? 1 : 0;
  if (it->second == want) return out;
  out.config[name] = want;
  out.note = fmt::format(
      "{}={}: copying the {} operand{} whose leading dimension is no multiple of {} takes an "
      "estimated {:.1f} us, {:.3f} of the kernel's {:.1f} us at the device's peak (the copies run "
      "at most {:.3f})",
      name, want, copies, copies == 1 ? "" : "s", geometry.align_ld, copy_us, copy_us / kernel_us,
      kernel_us, rule.max_share);
  return out;
}

}  // namespace gemmtune
