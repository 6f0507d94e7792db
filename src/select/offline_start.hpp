// SPDX-License-Identifier: Apache-2.0
// The configuration for a problem on a device nobody tuned, where its profile declares starting
// configurations (the AMD profiles: chosen offline from real resources and a predicted speed,
// never measured). The chooser (chooser.hpp) takes it where no database entry applies, before a
// template's defaults, and a search measures the profile's list first.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/model.hpp"

namespace gemmtune {

struct OfflineStart {
  const KernelSpec* spec = nullptr;
  Configuration config;         // complete
  double predicted_gflops = 0;  // by the static prior, at the problem
  std::string source;           // "offline choice"
  std::string origin;           // the profile file
  std::string reason;           // "chosen offline for gfx1012, not measured: ..."
};

// The profile's starting configuration for `problem`: of those of the problem's precision whose
// kernel `specs` knows and that `unusable` accepts (""), the one the static prior (with the
// model's `constants`) predicts fastest at the problem (the profile's order on a tie). Nullopt
// when none applies.
std::optional<OfflineStart> offline_start(
    const DeviceProfile* profile, const Problem& problem, const DeviceModel& device,
    const ModelConstants& constants,
    const std::function<const KernelSpec*(const std::string&)>& specs,
    const std::function<std::string(const KernelSpec&, const Configuration&)>& unusable);

}  // namespace gemmtune
