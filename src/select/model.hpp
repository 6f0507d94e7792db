// SPDX-License-Identifier: Apache-2.0
// The performance model behind the selection of a configuration for a shape nobody tuned: a
// configuration measured at one shape is predicted at another from what changes between the two,
// as the kernel sees them (a row-major problem is the column-major one with M and N swapped):
//
//   padding   useful share of the tiled work: M N K / (ceil(M/MWG) MWG  ceil(N/NWG) NWG
//             SPLITK ceil(ceil(K/SPLITK)/KWG) KWG), raised to `edge_cost` (a kernel that guards its
//             edges skips part of the wasted work; one the host pads pays it in full)
//   waves     work-groups G = ceil(M/MWG) ceil(N/NWG) SPLITK batch spread over the compute units:
//             the busiest unit holds L = ceil(G/CUs) groups, run `slots` at a time (occupancy from
//             the device profile: registers, local memory, work-group size); a round of r groups
//             takes max(r, saturation_groups) units of time, so too few groups leave units idle
//             or starved (split-K helps there) and a last partial round costs a whole one
//   depth     k-iterations per group / (k-iterations + group_overhead)
//   compute   flops / (rate x padding x waves x depth), `rate` being the configuration's own speed
//             at full use, implied by its measurement: the same formula solved for it, bounded by
//             the measured GFLOPS below and by rate_cap x the profile's peak above (and by
//             rate_inflation x the measured GFLOPS, where that is set)
//   memory    bytes moved / (bandwidth_efficiency x the profile's bandwidth): A, B and C once,
//             and with split-K the partial products written and read back by the reduction
//   time      max(compute, memory) + launch_us per launch (main kernel, split-K reduction, and
//             the padding copies of a kernel the host pads)
//
// The constants are calibrated on search journals (calibrate(): configurations measured at
// several shapes predict each other; the grid point with the least mean |log error| wins); a
// device profile states its own (policy.hpp), else the defaults apply.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"

namespace gemmtune {

class KernelSpec;
struct DeviceProfile;

struct ModelConstants {
  double saturation_groups = 1;     // resident groups a compute unit needs to run at full rate
  double group_overhead = 0;        // fixed cost of a work-group, in k-iterations
  double edge_cost = 1;             // exponent of the padding share (guarded kernels)
  double bandwidth_efficiency = 1;  // share of the profile's bandwidth a GEMM streams at
  double launch_us = 0;             // fixed cost of one kernel launch
  double rate_cap = 1;              // a configuration's rate is at most this share of peak
  // ... and at most this many times the GFLOPS it was measured at (0: no such bound): a
  // measurement taken mostly by fixed costs (a launch, a few work-groups) says little of the rate
  // the configuration reaches on a large shape, and without the bound every such entry predicts
  // the cap there.
  double rate_inflation = 0;
  // Ranking: a prediction made from a measurement at log distance d counts
  // prediction x exp(-distance_penalty x sqrt(d)): far transfers are less certain.
  double distance_penalty = 0;
};

// The constants by their names in a profile's "selection.model" and in `db calibrate`'s output,
// in the order declared above.
const std::vector<std::pair<const char*, double ModelConstants::*>>& model_constant_fields();

// What the model knows of the device; a zero figure is unknown and its term is left out.
struct DeviceModel {
  double compute_units = 0;
  double clock_mhz = 0;
  double bandwidth_gbs = 0;
  const DeviceProfile* profile = nullptr;  // occupancy and peak; null: one group per unit

  // `compute_units` and `clock_mhz` are the device's (0: the profile's).
  static DeviceModel of(const DeviceProfile* profile, double compute_units, double clock_mhz);
  double peak_gflops(Precision precision) const;  // 0 when unknown
  double units() const { return compute_units > 0 ? compute_units : 1; }
};

// The shape-independent facts of one configuration.
struct TileGeometry {
  int64_t mwg = 1, nwg = 1, kwg = 1, split_k = 1;
  int64_t work_group_size = 1;
  bool host_padded = false;   // the host pads the operands to the tile (copies, full waste)
  int64_t slots = 1;          // work-groups resident per compute unit at once
  std::string slots_limiter;  // "registers", "LDS", "hardware" or "" (no profile)
  // Whether the kernel declares a work-group tile (the tile_m role). One that does not
  // (xgemm_skinny: all of the small side in one group) transfers to other shapes only within its
  // kind.
  bool tiled = true;

  // From the roles of the kernel's declaration (tile_m, tile_n, tile_k, split_k, threads_m,
  // threads_n; an undeclared one is 1, with a warning once per kernel where the declaration has
  // no tile at all or tile_m without tile_n and tile_k); without a declaration, from the
  // conventional parameter names (conventional_role), with a warning where they give no tile.
  // `usage` (measured registers and local memory) is preferred to the declaration's estimates
  // for the occupancy.
  static TileGeometry of(const KernelSpec* spec, const Configuration& config, Precision precision,
                         const ResourceUsage& usage, const DeviceModel& device);
};

// The model's view of one prediction.
struct Estimate {
  double gflops = 0;
  double rate = 0;  // the configuration's rate at full use (GFLOPS)
  double padding = 1, waves = 1, depth = 1;
  int64_t work_groups = 0;
  double rounds = 0;  // work-groups per compute unit divided by the slots
  double compute_ms = 0, memory_ms = 0, fixed_ms = 0;
  bool memory_bound() const { return memory_ms > compute_ms; }
  // "tiles 128x64 93% used, 1024 groups 1.9 rounds on 132 CUs (97%), depth 98%, compute-bound"
  std::string describe(const DeviceModel& device) const;
};

// The rate a measurement of `gflops` for `at` implies, and the estimate at `target` from it.
double implied_rate(const TileGeometry& g, const Problem& at, double gflops,
                    const DeviceModel& device, const ModelConstants& c);
Estimate estimate_at(const TileGeometry& g, const Problem& target, double rate,
                     const DeviceModel& device, const ModelConstants& c);
inline Estimate transfer(const TileGeometry& g, const Problem& from, double gflops,
                         const Problem& to, const DeviceModel& device, const ModelConstants& c) {
  return estimate_at(g, to, implied_rate(g, from, gflops, device, c), device, c);
}

// The busiest compute unit's time for `groups` work-groups on `units` units that hold `slots` at
// once, in units of one group at full rate: whole rounds of `slots`, and a last partial round of
// r groups taking max(r, saturation) (a unit with fewer groups than it needs to run at full
// rate runs each no faster).
double busiest_unit_time(int64_t groups, double units, int64_t slots, double saturation);

// Euclidean distance of (log M, log N, log K, log batch) of the kernel views of two problems.
double log_distance(const Problem& a, const Problem& b);

// One measured configuration, as calibration reads it (a sample of the transfer pairs).
struct CalibrationSample {
  std::string kernel;
  Configuration config;
  Problem problem;
  double gflops = 0;
  TileGeometry geometry;
};

// The best result of each (configuration, problem) of a journal's successful results.
std::vector<CalibrationSample> journal_observations(
    const std::string& journal_path,
    const std::function<const KernelSpec*(const std::string&)>& specs, const DeviceModel& device);

// The values calibrate() tries for each constant (every combination).
struct CalibrationGrid {
  std::vector<double> saturation_groups, group_overhead, edge_cost, bandwidth_efficiency, launch_us,
      rate_cap, rate_inflation;
  static CalibrationGrid standard();
  size_t size() const;
};

struct Calibration {
  ModelConstants constants;
  size_t pairs = 0;  // ordered pairs (measured at A, predicted at B) of one configuration
  double mean_abs_log_error = 0;
  // The same for "the GFLOPS measured at A hold at B", for comparison.
  double unmodelled_mean_abs_log_error = 0;
};

// Fits the constants to the pairs of observations of one configuration (kernel, parameters,
// precision, order, layout and epilogue equal; shape or batch different): the grid point with
// the least mean |log(predicted / measured)| (the first one on a tie), then distance_penalty as
// the least-squares slope of |log error| on sqrt(log distance). Throws Error(kInvalidArgument)
// when there is no pair.
Calibration calibrate(const std::vector<CalibrationSample>& observations, const DeviceModel& device,
                      const CalibrationGrid& grid);

}  // namespace gemmtune
