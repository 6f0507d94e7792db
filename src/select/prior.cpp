// SPDX-License-Identifier: Apache-2.0
#include "src/select/prior.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/int_math.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/gemm_view.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

namespace {

// Bytes one local-memory bank delivers per clock (NVIDIA and AMD alike).
constexpr double kLdsBankBytes = 4;
// The widest load one work-item issues (LDS.128 on NVIDIA, ds_read_b128 on AMD): a wider vector
// takes as many instructions per byte.
constexpr int64_t kWidestLoadBytes = 16;
// A peak taken where the profile knows none: the prediction is then on a relative scale.
constexpr double kUnknownPeakGflops = 1;

}  // namespace

PriorConstants fitted_prior_constants() {
  // fit_prior() at the 0.9 quantile over PriorGrid::standard() on
  // tests/data/h100/search3/gpu128.jsonl (xgemm_fast, 128x4096x1024 FP32 on the H100, 396 measured
  // configurations with ptxas's register and spill counts): `gemmtune rank --journal
  // tests/data/h100/search3/gpu128.jsonl --fit`. tests/src/select/test_prior_h100.cpp checks that
  // the fit gives them.
  PriorConstants c;
  c.efficiency = 1.059;
  c.latency_cycles = 16;
  c.spill_cost = 1;
  c.lds_cost = 0.25;
  c.tile_traffic_cost = 0.2;
  c.issue_cost = 0.5;
  return c;
}

PriorFeatures prior_features(const KernelSpec* spec, const Configuration& config,
                             const Problem& problem, const ResourceUsage& usage,
                             const DeviceModel& device) {
  const int64_t elem = element_bytes(problem.precision);
  const Context ctx{{"ELEM_BYTES", elem}};
  const RoleValues roles(spec, config, ctx);
  auto positive = [&](Role role, int64_t otherwise) {
    const std::optional<int64_t> v = roles.get(role);
    return v && *v > 0 ? *v : otherwise;
  };
  const DeviceProfile* profile = device.profile;
  PriorFeatures f;

  // Resources: the usage's counts, else the declaration's estimates, capped as a compiler caps.
  if (usage.registers && *usage.registers > 0) {
    f.registers = *usage.registers;
    f.spills = std::max<int64_t>(usage.spills.value_or(0), 0);
    f.measured_registers = true;
  } else {
    const int64_t estimate = spec ? spec->registers(config, ctx).value_or(0) : 0;
    int64_t cap = 0;
    if (spec && !spec->register_cap_parameter().empty()) {
      cap = std::max<int64_t>(
          spec->value_of(spec->register_cap_parameter(), config, ctx).value_or(0), 0);
    }
    const auto most = profile ? profile->figure_if("max_registers_per_thread") : std::nullopt;
    if (most && *most > 0) cap = cap > 0 ? std::min<int64_t>(cap, int64_t(*most)) : int64_t(*most);
    f.registers = cap > 0 ? std::min(estimate, cap) : estimate;
    f.spills = std::max<int64_t>(estimate - f.registers, usage.spills.value_or(0));
  }
  if (usage.local_mem_bytes) {
    f.local_mem_bytes = *usage.local_mem_bytes;
  } else if (spec) {
    f.local_mem_bytes = spec->local_mem_bytes(config, ctx).value_or(0);
  }
  ResourceUsage resolved = usage;
  if (f.registers > 0) resolved.registers = f.registers;
  resolved.local_mem_bytes = f.local_mem_bytes;
  f.geometry = TileGeometry::of(spec, config, problem.precision, resolved, device);

  // The register tile, its reuse and its loads.
  const TileGeometry& g = f.geometry;
  const int64_t mwi = positive(Role::kRegisterTileM,
                               std::max<int64_t>(g.mwg / positive(Role::kThreadsM, g.mwg), 1));
  const int64_t nwi = positive(Role::kRegisterTileN,
                               std::max<int64_t>(g.nwg / positive(Role::kThreadsN, g.nwg), 1));
  f.accumulators = double(mwi * nwi);
  const double register_reuse = double(mwi * nwi) / double(mwi + nwi);
  const double tile_reuse = double(g.mwg * g.nwg) / double(g.mwg + g.nwg);
  const int64_t widest = std::max<int64_t>(1, kWidestLoadBytes / elem);
  const int64_t vwm = std::min(positive(Role::kVectorM, 1), widest),
                vwn = std::min(positive(Role::kVectorN, 1), widest);
  f.issue_ratio = (double(mwi) / double(vwm) + double(nwi) / double(vwn)) / f.accumulators;
  f.spill_ratio = double(f.spills) / f.accumulators;

  // The device: peak, FMA lanes per compute unit, occupancy.
  f.peak_gflops = device.peak_gflops(problem.precision);
  if (f.peak_gflops <= 0) f.peak_gflops = device.peak_gflops(Precision::kFP32);
  if (f.peak_gflops <= 0) f.peak_gflops = kUnknownPeakGflops;
  int64_t wavefront = 1, simds = 1;
  if (profile) {
    if (!profile->wavefront_sizes.empty()) wavefront = profile->wavefront_sizes.front();
    simds = std::max<int64_t>(1, int64_t(profile->figure_if("simds_per_cu").value_or(1)));
  }
  // FMA lanes of one compute unit: from the peak where the clock and units are known, else one
  // wave instruction per SIMD per clock.
  double lanes = double(wavefront * simds);
  if (device.compute_units > 0 && device.clock_mhz > 0 && f.peak_gflops > kUnknownPeakGflops) {
    lanes = f.peak_gflops * 1e3 / (2.0 * device.compute_units * device.clock_mhz);
  }
  // The groups resident on a compute unit: what fits (the geometry's slots), but no more than the
  // problem gives each unit. The hiding below then sees the occupancy this problem reaches, and
  // the model's wave term no longer counts an unfilled slot as lost time a second time.
  const KernelView view = kernel_view(problem);
  const int64_t groups = ceil_div(view.m, f.geometry.mwg) * ceil_div(view.n, f.geometry.nwg) *
                         f.geometry.split_k * std::max<int64_t>(view.batch, 1);
  const auto per_unit = int64_t(std::ceil(double(groups) / device.units()));
  f.geometry.slots = std::max<int64_t>(1, std::min(f.geometry.slots, per_unit));
  const int64_t waves_per_group = ceil_div(g.work_group_size, wavefront);
  f.waves_per_simd = double(g.slots * waves_per_group) / double(simds);
  if (profile && profile->match_type != "cpu") {
    try {
      const Occupancy o = estimate_occupancy(*profile, std::max<int64_t>(f.registers, 1),
                                             f.local_mem_bytes, g.work_group_size, wavefront);
      const auto group_lds = profile->figure_if("lds_per_workgroup_bytes");
      if (group_lds && *group_lds > 0 && double(f.local_mem_bytes) > *group_lds) {
        f.fits = false;
        f.misfit = fmt::format("{} bytes of local memory per work-group, the device has {}",
                               f.local_mem_bytes, int64_t(*group_lds));
      } else if (waves_per_group > o.waves * simds) {
        f.fits = false;
        f.misfit = fmt::format(
            "a work-group of {} work-items needs {} waves, {} (by {}: {} registers, {} bytes of "
            "local memory) allows {} per compute unit",
            g.work_group_size, waves_per_group, profile->name, o.limiter, f.registers,
            f.local_mem_bytes, o.waves * simds);
      }
    } catch (const Error&) {
      // A profile without the occupancy figures: every group fits, one per unit.
    }
    const double banks = profile->figure_if("lds_banks").value_or(0);
    if (banks > 0) f.lds_ratio = lanes * double(elem) / (banks * kLdsBankBytes) / register_reuse;
  }
  f.hiding_work = f.waves_per_simd * f.accumulators * double(wavefront * simds) / lanes;
  if (device.bandwidth_gbs > 0 && f.peak_gflops > kUnknownPeakGflops) {
    f.traffic_ratio = f.peak_gflops / 2.0 * double(elem) / device.bandwidth_gbs / tile_reuse;
  }
  return f;
}

PriorEstimate prior_from_features(const PriorFeatures& f, const DeviceModel& device,
                                  const Problem& problem, const PriorConstants& c,
                                  const ModelConstants& model) {
  PriorEstimate e;
  e.fits = f.fits;
  e.misfit = f.misfit;
  e.registers = f.registers;
  e.spills = f.spills;
  e.local_mem_bytes = f.local_mem_bytes;
  e.measured_registers = f.measured_registers;
  e.waves_per_simd = f.waves_per_simd;
  e.hiding = f.hiding_work / (f.hiding_work + c.latency_cycles);
  if (!(e.hiding > 0)) e.hiding = c.latency_cycles > 0 ? 0 : 1;
  e.spill_factor = 1.0 / (1.0 + c.spill_cost * f.spill_ratio);
  e.lds_overhead = c.lds_cost * f.lds_ratio;
  e.traffic_overhead = c.tile_traffic_cost * f.traffic_ratio;
  e.issue_overhead = c.issue_cost * f.issue_ratio;
  if (!f.fits) return e;
  e.rate = f.peak_gflops * c.efficiency * e.hiding * e.spill_factor /
           (1.0 + e.lds_overhead + e.traffic_overhead + e.issue_overhead);
  if (!(e.rate > 0)) return e;
  e.at = estimate_at(f.geometry, problem, e.rate, device, model);
  e.gflops = e.at.gflops;
  return e;
}

PriorEstimate prior_estimate(const KernelSpec* spec, const Configuration& config,
                             const Problem& problem, const ResourceUsage& usage,
                             const DeviceModel& device, const PriorConstants& constants,
                             const ModelConstants& model) {
  return prior_from_features(prior_features(spec, config, problem, usage, device), device, problem,
                             constants, model);
}

std::string PriorEstimate::describe(const DeviceModel& device) const {
  if (!fits) return "cannot run: " + misfit;
  return fmt::format(
      "rate {:.0f} GFLOPS at full use ({} registers {}, {} spilled; {:.3g} waves/SIMD: hiding "
      "{:.0f}%, spills {:.0f}%; overheads: local loads {:.0f}%, tile traffic {:.0f}%, issue "
      "{:.0f}%); {}",
      rate, registers, measured_registers ? "measured" : "estimated", spills, waves_per_simd,
      hiding * 100, spill_factor * 100, lds_overhead * 100, traffic_overhead * 100,
      issue_overhead * 100, at.describe(device));
}

std::vector<PriorRanked> rank_by_prior(const KernelSpec* spec,
                                       const std::vector<PriorCandidate>& candidates,
                                       const Problem& problem, const DeviceModel& device,
                                       const PriorConstants& constants,
                                       const ModelConstants& model) {
  std::vector<PriorRanked> out;
  out.reserve(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    out.push_back({i, prior_estimate(spec, candidates[i].config, problem, candidates[i].usage,
                                     device, constants, model)});
  }
  std::stable_sort(out.begin(), out.end(), [](const PriorRanked& a, const PriorRanked& b) {
    return a.estimate.gflops > b.estimate.gflops;
  });
  return out;
}

// ---- fitting ----

PriorGrid PriorGrid::standard() {
  PriorGrid g;
  g.latency_cycles = {0, 16, 32, 64, 128, 256};
  g.spill_cost = {0, 0.25, 0.5, 1, 2, 4};
  g.lds_cost = {0, 0.1, 0.25, 0.5};
  g.tile_traffic_cost = {0, 0.2, 0.4, 0.8};
  g.issue_cost = {0, 0.5, 1, 2};
  return g;
}

size_t PriorGrid::size() const {
  return latency_cycles.size() * spill_cost.size() * lds_cost.size() * tile_traffic_cost.size() *
         issue_cost.size();
}

PriorFit fit_prior(const std::vector<PriorSample>& samples, const DeviceModel& device,
                   const PriorGrid& grid, double quantile, const ModelConstants& model) {
  if (!(quantile > 0 && quantile < 1)) {
    throw invalid_argument(fmt::format("the fit's quantile must lie in (0, 1), not {}", quantile));
  }
  if (grid.size() == 0) throw invalid_argument("the prior's grid has a constant without values");
  std::vector<const PriorSample*> usable;
  for (const PriorSample& s : samples) {
    if (s.gflops > 0 && s.features.fits) usable.push_back(&s);
  }
  if (usable.empty()) {
    throw invalid_argument("the prior's fit needs a measured configuration that fits the device");
  }
  // For each grid point (efficiency 1), log(measured / predicted) of every sample; the efficiency
  // is then the quantile of those, so that that share of the configurations measures below its
  // prediction: the prior predicts what a structure reaches when its other parameters are right.
  PriorFit best;
  best.samples = usable.size();
  best.loss = std::numeric_limits<double>::infinity();
  std::vector<double> errors(usable.size());
  for (double latency : grid.latency_cycles) {
    for (double spill : grid.spill_cost) {
      for (double lds : grid.lds_cost) {
        for (double traffic : grid.tile_traffic_cost) {
          for (double issue : grid.issue_cost) {
            PriorConstants c;
            c.efficiency = 1;
            c.latency_cycles = latency;
            c.spill_cost = spill;
            c.lds_cost = lds;
            c.tile_traffic_cost = traffic;
            c.issue_cost = issue;
            for (size_t i = 0; i < usable.size(); ++i) {
              const PriorSample& s = *usable[i];
              const double p = prior_from_features(s.features, device, s.problem, c, model).gflops;
              errors[i] = std::log(s.gflops / std::max(p, 1e-9));
            }
            std::vector<double> sorted = errors;
            const size_t at = std::min(sorted.size() - 1, size_t(quantile * double(sorted.size())));
            std::nth_element(sorted.begin(), sorted.begin() + long(at), sorted.end());
            const double q = sorted[at];
            double loss = 0;
            for (double e : errors) loss += e >= q ? quantile * (e - q) : (quantile - 1) * (e - q);
            loss /= double(errors.size());
            if (loss < best.loss) {
              best.loss = loss;
              best.constants = c;
              best.constants.efficiency = std::exp(q);
            }
          }
        }
      }
    }
  }
  return best;
}

}  // namespace gemmtune
