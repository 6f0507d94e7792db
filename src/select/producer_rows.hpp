// SPDX-License-Identifier: Apache-2.0
// Whether a configuration served at a shape it was not measured at runs with producer rows
// (xgemm_fast's WSP: as many work-items again, which alone load the tiles): the policy's
// ProducerRowsRule weighed at the problem. The chooser asks it for every choice but an exact one.
#pragma once

#include <optional>
#include <string>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/model.hpp"
#include "src/select/policy.hpp"

namespace gemmtune {

struct ProducerRowsDecision {
  Configuration config;  // the configuration with its producer rows, where the rule takes them
  std::string note;      // why, where the configuration changed ("" otherwise)
  // The same producer form with B's tile as `config` had it, where the rule also made that tile
  // K-major (BKM 1): the form to take where the templates or the device refuse `config`.
  std::optional<Configuration> without_k_major_b;
};

// `config` of `spec` with producer rows (WSP = NDIMC, PREFETCH 0, ASYNC 0, STAGES as the rule
// says) where the rule is on, the template has the parameter and allows that value, `config` has
// none, the problem is a single GEMM and the launch makes at most the rule's work-groups per
// compute unit; otherwise `config` as it is. Where the rule states a K tile from which the
// producer form takes the K-major B tile, and the template has BKM, BKM is 1 too. Whether the
// template's constraints and the device take the result is the caller's to check.
ProducerRowsDecision decide_producer_rows(const KernelSpec& spec, const Configuration& config,
                                          const Problem& problem, const DeviceModel& device,
                                          const ProducerRowsRule& rule);

}  // namespace gemmtune
