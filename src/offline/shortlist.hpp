// SPDX-License-Identifier: Apache-2.0
// The short list an AMD search starts from, made without the card: a template's space pruned by
// the real resources the LLVM AMDGPU backend gives its configurations (no spill, enough waves per
// SIMD, LDS within the limit) and ranked by a performance prediction fed those counts.
//
// Compiling a whole GPU space (~337k configurations at 0.2-1.3 s each) is out of reach, so the
// prune runs in two steps: a seeded sample spread over the template's register estimate is
// compiled, the estimate is calibrated on it (real VGPRs ~ slope x estimate + intercept), and the
// whole space is pruned by the calibrated estimate (a prediction, counted as such); then the best
// ranked survivors are compiled, and only those whose real counts meet the criteria are listed.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/offline/amd_offline.hpp"

namespace gemmtune {

struct ShortlistCriteria {
  int64_t min_waves = 2;  // waves per SIMD by the profile's register file and LDS
  bool allow_spill = false;
  size_t calibration_samples = 12;  // configurations compiled to calibrate the register estimate
  size_t length = 20;               // configurations listed, each compiled and meeting the criteria
  size_t max_compiles = 60;         // compiles spent on the list before it is given up short
  uint64_t seed = 1;
  int threads = 0;      // parallel compiles (0: the machine's cores)
  Configuration fixed;  // only configurations with these values (e.g. DOT2=1)
};

// real VGPRs ~ slope x estimate + intercept, fitted by least squares on `samples` compiles.
struct RegisterCalibration {
  double slope = 1, intercept = 0;
  size_t samples = 0;
  double max_relative_error = 0;  // of the fit on its own samples
  double predict(int64_t estimate) const { return slope * double(estimate) + intercept; }
};

// Predicted speed (GFLOPS, or any score where more is better) of a configuration with the given
// resources; the ranking's only input besides the criteria.
using SpeedPredictor = std::function<double(const Configuration&, const ResourceUsage&)>;

struct ShortlistEntry {
  AmdBuild build;
  double predicted = 0;  // by the predictor, fed the real counts
};

struct Shortlist {
  uint64_t valid = 0;          // configurations the template and the profile's limits allow
  uint64_t predicted_fit = 0;  // of those, meeting the criteria by the calibrated estimate
  RegisterCalibration calibration;
  size_t compiled = 0;                  // builds spent on the list (calibration excluded)
  std::vector<ShortlistEntry> entries;  // best first, every one meeting the criteria for real
};

// Whether a build meets the criteria.
bool meets(const AmdBuild& build, const ShortlistCriteria& criteria);

Shortlist make_shortlist(const AmdOfflineCompiler& compiler, const KernelSpec& spec,
                         const std::string& space_name, const Problem& problem,
                         const AmdTarget& target, const ShortlistCriteria& criteria,
                         const SpeedPredictor& predict);

}  // namespace gemmtune
