// SPDX-License-Identifier: Apache-2.0
#include "src/select/offline_start.hpp"

#include <fmt/format.h>

#include "src/select/prior.hpp"

namespace gemmtune {

std::optional<OfflineStart> offline_start(
    const DeviceProfile* profile, const Problem& problem, const DeviceModel& device,
    const ModelConstants& constants,
    const std::function<const KernelSpec*(const std::string&)>& specs,
    const std::function<std::string(const KernelSpec&, const Configuration&)>& unusable) {
  if (!profile) return std::nullopt;
  std::optional<OfflineStart> best;
  for (const auto& start : profile->starting_configurations) {
    if (start.precision != problem.precision) continue;
    const KernelSpec* spec = specs ? specs(start.kernel) : nullptr;
    if (!spec) continue;
    const Configuration config = spec->complete(start.parameters);
    if (unusable && !unusable(*spec, config).empty()) continue;
    ResourceUsage usage;
    usage.registers = start.registers;
    usage.local_mem_bytes = start.local_mem_bytes;
    usage.source = "offline build";
    const double predicted =
        prior_estimate(spec, config, problem, usage, device, fitted_prior_constants(), constants)
            .gflops;
    if (best && predicted <= best->predicted_gflops) continue;
    OfflineStart s;
    s.spec = spec;
    s.config = config;
    s.predicted_gflops = predicted;
    s.source = "offline choice";
    s.origin = profile->file;
    s.reason = fmt::format("chosen offline for {}, not measured{}", profile->name,
                           start.facts.empty() ? "" : " (" + start.facts + ")");
    best = std::move(s);
  }
  return best;
}

}  // namespace gemmtune
