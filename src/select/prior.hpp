// SPDX-License-Identifier: Apache-2.0
// A static prior of a configuration's speed: what it should reach at a problem on a device,
// predicted from its structure and its resources alone, with no measurement of it anywhere. The
// selection model (model.hpp) transfers a measured rate to another shape; the prior supplies the
// rate of a configuration nobody measured, so that a space can be ranked before any timing (an
// AMD search starts from such a ranking; the AMD compiler gives the real resources offline).
//
// The rate at full use is the profile's peak times
//
//   efficiency        the scale of the prediction (fitted; times the factors below, the share of
//                     peak a structure reaches)
//   hiding            latency hiding: w x acc x wavefront x SIMDs / FMA lanes cycles of FMA work
//                     are in flight per SIMD between two loads (w resident waves per SIMD: the
//                     work-groups the registers, local memory and work-group size let a compute
//                     unit hold, but no more than the problem gives it; acc = MWI x NWI
//                     accumulators per work-item); a load of `latency_cycles` is hidden by that
//                     much work as work / (work + latency_cycles): more occupancy or a bigger
//                     tile never hurts
//   spills            1 / (1 + spill_cost x spilled words / accumulators): every spilled word
//                     costs a local-memory round trip inside the loop
//   1 / (1 + overheads), the overheads being, per FMA, relative to its issue slot:
//     local loads     lds_cost x (FMA lanes x element bytes / local-memory bytes per clock) /
//                     (MWI x NWI / (MWI + NWI)): the register tile's reuse of each value it loads
//     tile traffic    tile_traffic_cost x (peak FMAs/s x element bytes / bandwidth) /
//                     (MWG x NWG / (MWG + NWG)): the work-group tile's reuse of what it reads
//                     from global memory (through the caches: hence a fitted share)
//     issue           issue_cost x (MWI / VWM + NWI / VWN) / (MWI x NWI): vector loads feed
//                     the FMAs in fewer instructions (up to 16 bytes a load: a wider vector
//                     takes as many instructions)
//
// A work-group that does not fit on a compute unit (its waves exceed what the registers or the
// local memory allow, or its local memory exceeds a group's) is predicted 0: it cannot launch.
// That rate then goes through the selection model's estimate_at (tile padding, wave quantization
// over the compute units, depth, the memory roofline and launch costs) at the problem.
//
// Resources: the real counts where known (ResourceUsage: ptxas, the AMDGPU metadata, the offline
// AMD compiler), else the declaration's estimates. An estimate above the register cap (the
// template's register-cap parameter, or the profile's maximum per work-item) is taken as the cap
// with the excess spilled, as a compiler would.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"
#include "src/select/model.hpp"
#include "src/select/policy.hpp"

namespace gemmtune {

class KernelSpec;

struct PriorConstants {
  double efficiency = 1;         // scale: the share of peak before hiding and overheads
  double latency_cycles = 0;     // load latency the resident FMA work must cover
  double spill_cost = 0;         // rate lost per spilled word per accumulator
  double lds_cost = 0;           // weight of the register tile's local-memory traffic
  double tile_traffic_cost = 0;  // weight of the work-group tile's global traffic
  double issue_cost = 0;         // weight of the load instructions per FMA
};

// The constants shipped with gemmtune: fit_prior() on one H100 journal with ptxas's register and
// spill counts, tests/data/h100/search3/gpu128.jsonl; the other H100 journals and the H100 and H200
// replays are the validation (tests/src/select/test_prior_h100.cpp).
PriorConstants fitted_prior_constants();

// The prior's view of one configuration at one problem.
struct PriorEstimate {
  bool fits = true;    // false: the work-group cannot be resident (then gflops is 0)
  std::string misfit;  // why not, in words
  double gflops = 0;   // predicted at the problem
  double rate = 0;     // at full use, before padding, waves and depth
  Estimate at;         // estimate_at's terms at the problem
  int64_t registers = 0, spills = 0, local_mem_bytes = 0;
  bool measured_registers = false;  // from the usage, not the declaration's estimate
  double waves_per_simd = 0;        // resident, whole work-groups counted
  double hiding = 1, spill_factor = 1, lds_overhead = 0, traffic_overhead = 0, issue_overhead = 0;
  // "rate 41200 GFLOPS at full use (128 registers measured, ...); <the estimate's terms>"
  std::string describe(const DeviceModel& device) const;
};

// The prediction for `config` of `spec` (null: the parameters by name) at `problem` on `device`,
// with `usage` (empty fields: the declaration's estimates). A device without a profile gets the
// overheads that need none (occupancy, LDS and bandwidth terms are left out).
PriorEstimate prior_estimate(const KernelSpec* spec, const Configuration& config,
                             const Problem& problem, const ResourceUsage& usage,
                             const DeviceModel& device,
                             const PriorConstants& constants = fitted_prior_constants(),
                             const ModelConstants& model = SelectionPolicy::defaults().model);

// A configuration to rank and what is known of its resources.
struct PriorCandidate {
  Configuration config;
  ResourceUsage usage;
};

struct PriorRanked {
  size_t index = 0;  // in the list given
  PriorEstimate estimate;
};

// `candidates` best predicted first; equal predictions keep the order given (stable).
std::vector<PriorRanked> rank_by_prior(
    const KernelSpec* spec, const std::vector<PriorCandidate>& candidates, const Problem& problem,
    const DeviceModel& device, const PriorConstants& constants = fitted_prior_constants(),
    const ModelConstants& model = SelectionPolicy::defaults().model);

// ---- what the prediction is made of, and fitting its constants ----

// The constant-free facts of one configuration at one problem on one device.
struct PriorFeatures {
  bool fits = true;
  std::string misfit;
  int64_t registers = 0, spills = 0, local_mem_bytes = 0;
  bool measured_registers = false;
  TileGeometry geometry;
  double peak_gflops = 0;
  double accumulators = 1;  // MWI x NWI
  double waves_per_simd = 0;
  double hiding_work = 0;    // cycles of FMA work resident per SIMD between two loads
  double lds_ratio = 0;      // local-memory time per FMA time at the register tile's reuse
  double traffic_ratio = 0;  // global-memory time per FMA time at the work-group tile's reuse
  double issue_ratio = 0;    // load instructions per FMA
  double spill_ratio = 0;    // spilled words per accumulator
};

PriorFeatures prior_features(const KernelSpec* spec, const Configuration& config,
                             const Problem& problem, const ResourceUsage& usage,
                             const DeviceModel& device);
PriorEstimate prior_from_features(const PriorFeatures& features, const DeviceModel& device,
                                  const Problem& problem, const PriorConstants& constants,
                                  const ModelConstants& model = SelectionPolicy::defaults().model);

// One measured configuration the constants are fitted on.
struct PriorSample {
  Problem problem;
  Configuration config;
  double gflops = 0;
  PriorFeatures features;
};

// The values fit_prior() tries for each constant but the efficiency (every combination).
struct PriorGrid {
  std::vector<double> latency_cycles, spill_cost, lds_cost, tile_traffic_cost, issue_cost;
  static PriorGrid standard();
  size_t size() const;
};

struct PriorFit {
  PriorConstants constants;
  size_t samples = 0;  // measured configurations that fit the device
  double loss = 0;     // mean pinball loss of log(measured / predicted) at the quantile
};

// The grid point with the least pinball loss at `quantile` of log(measured / predicted) over the
// samples (the first one on a tie), the efficiency being that quantile: a `quantile` share of the
// configurations measures at or below its prediction, since the prior predicts what a structure
// reaches with the parameters it does not see set right. Throws Error(kInvalidArgument) without a
// usable sample.
PriorFit fit_prior(const std::vector<PriorSample>& samples, const DeviceModel& device,
                   const PriorGrid& grid = PriorGrid::standard(), double quantile = 0.9,
                   const ModelConstants& model = SelectionPolicy::defaults().model);

}  // namespace gemmtune
