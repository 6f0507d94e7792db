// SPDX-License-Identifier: Apache-2.0
// Which split of K a configuration served at a shape it was not measured at takes there (a
// template's launch.split_k parameter): the policy's SplitKRule at the problem. The chooser asks
// it for every choice but an exact one, before the other rules.
#pragma once

#include <string>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/model.hpp"
#include "src/select/policy.hpp"

namespace gemmtune {

struct SplitKFitDecision {
  Configuration config;  // the configuration with the split the rule weighs fastest
  std::string note;      // why, where the split changed ("" otherwise)
};

// `config` of `spec` (measured with `usage`, predicted at `predicted_gflops` for the problem)
// with the split factor of the rule's values that it weighs fastest at the problem, where that
// is at least min_gain faster than the configuration's own; otherwise `config` as it is. Only
// where the rule is on, the configuration splits K with a reduce launch (not in the main
// kernel), the problem is one GEMM, the device's compute units are known and the template takes
// the new factor.
SplitKFitDecision decide_split_k(const KernelSpec& spec, const Configuration& config,
                                 const ResourceUsage& usage, const Problem& problem,
                                 double predicted_gflops, const DeviceModel& device,
                                 const SplitKRule& rule);

}  // namespace gemmtune
