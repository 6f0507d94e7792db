// SPDX-License-Identifier: Apache-2.0
// Whether a configuration served at a shape it was not measured at copies its unaligned operands
// into aligned scratch first (a template's launch.align_ld_parameter): the policy's
// AlignedCopyRule weighed at the problem. The chooser asks it for every choice but an exact one.
#pragma once

#include <string>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/model.hpp"
#include "src/select/policy.hpp"

namespace gemmtune {

struct AlignedCopyDecision {
  Configuration config;  // the configuration with its aligned-copy parameter set for the problem
  std::string note;      // why, where the parameter changed ("" otherwise)
};

// `config` of `spec` with the parameter set where the rule is on, the template declares the
// parameter, the problem is a single GEMM, an operand's dense leading dimension is no multiple of
// the alignment the copies give, and the device's bandwidth and peak are known; otherwise
// `config` as it is.
AlignedCopyDecision decide_aligned_copy(const KernelSpec& spec, const Configuration& config,
                                        const Problem& problem, const DeviceModel& device,
                                        const AlignedCopyRule& rule);

}  // namespace gemmtune
