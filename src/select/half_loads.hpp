// SPDX-License-Identifier: Apache-2.0
// Whether a configuration served at a shape it was not measured at loads its operand laid along K
// as half-wide vectors (a template's launch.half_ld_parameter): the policy's HalfLoadsRule at
// the problem. The chooser asks it for every choice but an exact one, after the aligned copies.
#pragma once

#include <string>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/policy.hpp"

namespace gemmtune {

struct HalfLoadsDecision {
  Configuration config;  // the configuration with its half-load parameter set for the problem
  std::string note;      // why, where the parameter changed ("" otherwise)
};

// `config` of `spec` with the parameter at 1 where the rule is on, the template declares the
// parameter and takes it, K is at least the rule's min_k and a multiple of half the template's
// wide-load width but not of it, an operand lies along K, no aligned copies run and none of the
// rule's `without` parameters is non-zero; otherwise `config` as it is.
HalfLoadsDecision decide_half_loads(const KernelSpec& spec, const Configuration& config,
                                    const Problem& problem, const HalfLoadsRule& rule);

}  // namespace gemmtune
