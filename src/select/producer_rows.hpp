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
  // The producer form with the K-major B tile too (BKM 1), where the rule also takes that: the
  // form to serve first, `config` where the template or the device refuses it.
  std::optional<Configuration> k_major_b;
  std::string k_major_b_note;  // why BKM is 1 there
};

// `config` of `spec` with producer rows (WSP = NDIMC, PREFETCH 0, ASYNC 0, STAGES as the rule
// says) where the rule is on, the template has the parameter and allows that value, `config` has
// none, the problem is a single GEMM and the launch makes at most the rule's work-groups per
// compute unit; otherwise `config` as it is. Where the rule states a K tile from which the
// producer form takes the K-major B tile, the template has BKM and its constraints take it, that
// form is `k_major_b`. Whether the device takes either is the caller's to check.
ProducerRowsDecision decide_producer_rows(const KernelSpec& spec, const Configuration& config,
                                          const Problem& problem, const DeviceModel& device,
                                          const ProducerRowsRule& rule);

}  // namespace gemmtune
