// SPDX-License-Identifier: Apache-2.0
#include "src/select/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/int_math.hpp"
#include "src/core/problem_key.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/gemm_view.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

namespace {

// The kernel's view of a problem's sizes, batch and element size.
struct Sizes {
  double m, n, k, batch, elem;
  int64_t im, in, ik, ibatch;
};

Sizes sizes_of(const Problem& p) {
  const KernelView v = kernel_view(p);
  return {double(v.m),
          double(v.n),
          double(v.k),
          double(std::max<int64_t>(v.batch, 1)),
          double(element_bytes(p.precision)),
          v.m,
          v.n,
          v.k,
          std::max<int64_t>(v.batch, 1)};
}

struct Terms {
  double flops, padding, waves, depth, memory_ms, fixed_ms, rounds;
  int64_t groups;
};

Terms terms(const TileGeometry& g, const Problem& p, const DeviceModel& d,
            const ModelConstants& c) {
  const Sizes s = sizes_of(p);
  Terms t{};
  t.flops = 2.0 * s.m * s.n * s.k * s.batch;
  const int64_t tm = ceil_div(s.im, g.mwg), tn = ceil_div(s.in, g.nwg);
  const int64_t iterations = ceil_div(ceil_div(s.ik, g.split_k), g.kwg);
  const double tiled =
      double(tm * g.mwg) * double(tn * g.nwg) * double(g.split_k) * double(iterations * g.kwg);
  const double useful = s.m * s.n * s.k;
  t.padding = std::pow(useful / tiled, g.host_padded ? 1.0 : c.edge_cost);
  t.groups = tm * tn * g.split_k * s.ibatch;
  const double units = d.units();
  const double busiest = busiest_unit_time(t.groups, units, g.slots, c.saturation_groups);
  t.waves = (double(t.groups) / units) / busiest;
  t.rounds = std::ceil(double(t.groups) / units) / double(g.slots);
  t.depth = double(iterations) / (double(iterations) + c.group_overhead);
  double bytes = s.elem * s.batch * (s.m * s.k + s.k * s.n + s.m * s.n);
  int launches = 1;
  if (g.split_k > 1) {
    bytes += s.elem * s.batch * (2.0 * double(g.split_k) + 1.0) * s.m * s.n;
    ++launches;
  }
  if (g.host_padded && tiled > useful) {
    // A, B and C copied to and from their padded forms.
    bytes += 2.0 * s.elem * s.batch *
             (double(tm * g.mwg) * double(iterations * g.kwg * g.split_k) +
              double(iterations * g.kwg * g.split_k) * double(tn * g.nwg) +
              double(tm * g.mwg) * double(tn * g.nwg));
    launches += 3;
  }
  t.memory_ms = d.bandwidth_gbs > 0 && c.bandwidth_efficiency > 0
                    ? bytes / (d.bandwidth_gbs * c.bandwidth_efficiency) * 1e-6
                    : 0.0;
  t.fixed_ms = launches * c.launch_us * 1e-3;
  return t;
}

double efficiency(const Terms& t) {
  return std::max(t.padding * t.waves * t.depth, 1e-9);
}

// Says `message` once per `key` (a kernel, a set of parameter names), not once per prediction.
void warn_once(const std::string& key, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (!warned.insert(key).second) return;
  }
  spdlog::warn("{}", message);
}

// A configuration whose template is not at hand and that has none of the conventional tile names
// either is modelled as a 1x1 tile.
void warn_untiled(const Configuration& config) {
  std::string names;
  for (const auto& [name, value] : config) names += (names.empty() ? "" : ",") + name;
  warn_once("config:" + names,
            fmt::format("no kernel declaration for a configuration of {{{}}} and no conventional "
                        "tile parameter in it: the model takes it as a 1x1 tile",
                        names));
}

// A declaration that leaves out a role of the tile the model reads. A tile in N alone is a
// kernel untiled in M by design (xgemm_skinny); none at all, or tile_m without the others, reads
// as an omission, so the model says what it assumes instead.
void warn_missing_tile_roles(const KernelSpec& spec) {
  const Role tile[] = {Role::kTileM, Role::kTileN, Role::kTileK};
  if (!spec.declares(Role::kTileM) && !spec.declares(Role::kTileN)) {
    warn_once("kernel:" + spec.name(),
              fmt::format("kernel '{}' declares no work-group tile (roles tile_m, tile_n, tile_k "
                          "in its json): the model takes it as untiled (a 1x1 tile) and "
                          "predicts it only on skinny shapes",
                          spec.name()));
    return;
  }
  if (!spec.declares(Role::kTileM)) return;
  std::string missing;
  for (Role r : tile) {
    if (!spec.declares(r)) missing += (missing.empty() ? "" : ", ") + role_name(r);
  }
  if (missing.empty()) return;
  warn_once("kernel:" + spec.name(),
            fmt::format("kernel '{}' declares tile_m but not {} (roles in its json): the model "
                        "takes each of them as 1",
                        spec.name(), missing));
}

}  // namespace

const std::vector<std::pair<const char*, double ModelConstants::*>>& model_constant_fields() {
  static const std::vector<std::pair<const char*, double ModelConstants::*>> fields = {
      {"saturation_groups", &ModelConstants::saturation_groups},
      {"group_overhead", &ModelConstants::group_overhead},
      {"edge_cost", &ModelConstants::edge_cost},
      {"bandwidth_efficiency", &ModelConstants::bandwidth_efficiency},
      {"launch_us", &ModelConstants::launch_us},
      {"rate_cap", &ModelConstants::rate_cap},
      {"rate_inflation", &ModelConstants::rate_inflation},
      {"distance_penalty", &ModelConstants::distance_penalty}};
  return fields;
}

DeviceModel DeviceModel::of(const DeviceProfile* profile, double compute_units, double clock_mhz) {
  DeviceModel d;
  d.profile = profile;
  d.compute_units = compute_units;
  d.clock_mhz = clock_mhz;
  if (profile) {
    if (d.compute_units <= 0) d.compute_units = profile->figure_if("compute_units").value_or(0);
    if (d.clock_mhz <= 0) d.clock_mhz = profile->figure_if("boost_clock_mhz").value_or(0);
    d.bandwidth_gbs = profile->figure_if("memory_bandwidth_gbs").value_or(0);
  }
  return d;
}

double DeviceModel::peak_gflops(Precision precision) const {
  if (!profile) return 0;
  return gemmtune::peak_gflops(*profile, precision, compute_units, clock_mhz).value_or(0);
}

TileGeometry TileGeometry::of(const KernelSpec* spec, const Configuration& config,
                              Precision precision, const ResourceUsage& usage,
                              const DeviceModel& device) {
  const Context ctx{{"ELEM_BYTES", element_bytes(precision)}};
  const RoleValues roles(spec, config, ctx);
  auto positive = [&](Role role) -> int64_t {
    const std::optional<int64_t> v = roles.get(role);
    return v && *v > 0 ? *v : 1;
  };
  TileGeometry g;
  g.tiled = roles.get(Role::kTileM).has_value();
  if (!spec && !g.tiled) warn_untiled(config);
  if (spec) warn_missing_tile_roles(*spec);
  g.mwg = positive(Role::kTileM);
  g.nwg = positive(Role::kTileN);
  g.kwg = positive(Role::kTileK);
  g.split_k = positive(Role::kSplitK);
  if (spec) g.host_padded = spec->launch().padded;
  std::optional<int64_t> wg = spec ? spec->work_group_size(config, ctx) : std::nullopt;
  if (!wg) wg = positive(Role::kThreadsM) * positive(Role::kThreadsN);
  g.work_group_size = std::max<int64_t>(*wg, 1);
  if (device.profile && device.profile->match_type != "cpu") {
    std::optional<int64_t> regs = usage.registers;
    if (!regs && spec) regs = spec->registers(config, ctx);
    std::optional<int64_t> lds = usage.local_mem_bytes;
    if (!lds && spec) lds = spec->local_mem_bytes(config, ctx);
    try {
      const Occupancy o = estimate_occupancy(*device.profile, regs.value_or(32), lds.value_or(0),
                                             g.work_group_size);
      const auto simds =
          std::max<int64_t>(1, int64_t(device.profile->figure_if("simds_per_cu").value_or(1)));
      const int64_t waves_per_group =
          ceil_div(g.work_group_size, std::max<int64_t>(o.wavefront, 1));
      g.slots = std::max<int64_t>(1, o.waves * simds / std::max<int64_t>(waves_per_group, 1));
      g.slots_limiter = o.limiter;
    } catch (const Error&) {
      g.slots = 1;  // a profile without the figures: one group per unit
    }
  }
  return g;
}

double implied_rate(const TileGeometry& g, const Problem& at, double gflops,
                    const DeviceModel& device, const ModelConstants& c) {
  const Terms t = terms(g, at, device, c);
  const double measured_ms = t.flops / (gflops * 1e6);
  const double compute_ms = std::max(measured_ms - t.fixed_ms, 0.05 * measured_ms);
  const double rate = t.flops / (compute_ms * 1e6) / efficiency(t);
  const double peak = device.peak_gflops(at.precision);
  double cap =
      peak > 0 ? std::max(c.rate_cap * peak, gflops) : std::numeric_limits<double>::infinity();
  // Tiled kernels only: an untiled one (the skinny kernel, streaming one operand) is predicted
  // only on skinny shapes, which its memory term rules, so its compute rate is never what an
  // extrapolation leans on.
  if (c.rate_inflation > 0 && g.tiled) {
    cap = std::min(cap, std::max(gflops, c.rate_inflation * gflops));
  }
  return std::clamp(rate, gflops, cap);
}

double busiest_unit_time(int64_t groups, double units, int64_t slots, double saturation) {
  const auto per_unit = static_cast<int64_t>(std::ceil(double(groups) / units));
  const int64_t full = per_unit / slots, rest = per_unit % slots;
  const double sat = std::max(1.0, std::min(saturation, double(slots)));
  return double(full) * std::max(double(slots), sat) + (rest ? std::max(double(rest), sat) : 0.0);
}

Estimate estimate_at(const TileGeometry& g, const Problem& target, double rate,
                     const DeviceModel& device, const ModelConstants& c) {
  const Terms t = terms(g, target, device, c);
  Estimate e;
  e.rate = rate;
  e.padding = t.padding;
  e.waves = t.waves;
  e.depth = t.depth;
  e.work_groups = t.groups;
  e.rounds = t.rounds;
  e.compute_ms = t.flops / (rate * efficiency(t) * 1e6);
  e.memory_ms = t.memory_ms;
  e.fixed_ms = t.fixed_ms;
  e.gflops = t.flops / ((std::max(e.compute_ms, e.memory_ms) + e.fixed_ms) * 1e6);
  return e;
}

std::string Estimate::describe(const DeviceModel& device) const {
  return fmt::format(
      "{} groups in {:.2g} rounds on {} CUs (waves {:.0f}%), tiles {:.0f}% used, depth {:.0f}%, "
      "{}-bound ({:.3g} ms compute, {:.3g} ms memory, {:.3g} ms launches)",
      work_groups, rounds, static_cast<int64_t>(device.units()), waves * 100, padding * 100,
      depth * 100, memory_bound() ? "memory" : "compute", compute_ms, memory_ms, fixed_ms);
}

double log_distance(const Problem& a, const Problem& b) {
  const Sizes x = sizes_of(a), y = sizes_of(b);
  const double d[] = {std::log(x.m / y.m), std::log(x.n / y.n), std::log(x.k / y.k),
                      std::log(x.batch / y.batch)};
  return std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + d[3] * d[3]);
}

CalibrationGrid CalibrationGrid::standard() {
  CalibrationGrid g;
  g.saturation_groups = {1, 1.25, 1.5, 2};
  g.group_overhead = {0, 1, 2};
  g.edge_cost = {0, 0.5, 1};
  g.bandwidth_efficiency = {0.4, 0.5, 0.7};
  g.launch_us = {2, 5, 10};
  g.rate_cap = {0.7, 0.8, 0.9};
  g.rate_inflation = {0, 2, 4, 8};
  return g;
}

namespace {

// The grid's constants and the values each takes.
using Axis = std::pair<double ModelConstants::*, const std::vector<double>*>;
std::vector<Axis> axes(const CalibrationGrid& g) {
  return {{&ModelConstants::saturation_groups, &g.saturation_groups},
          {&ModelConstants::group_overhead, &g.group_overhead},
          {&ModelConstants::edge_cost, &g.edge_cost},
          {&ModelConstants::bandwidth_efficiency, &g.bandwidth_efficiency},
          {&ModelConstants::launch_us, &g.launch_us},
          {&ModelConstants::rate_cap, &g.rate_cap},
          {&ModelConstants::rate_inflation, &g.rate_inflation}};
}

}  // namespace

size_t CalibrationGrid::size() const {
  size_t n = 1;
  for (const Axis& a : axes(*this)) n *= a.second->size();
  return n;
}

Calibration calibrate(const std::vector<CalibrationSample>& observations, const DeviceModel& device,
                      const CalibrationGrid& grid) {
  // Pairs of observations of one configuration in one family.
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < observations.size(); ++i) {
    const CalibrationSample& o = observations[i];
    const Problem& p = o.problem;
    groups[fmt::format("{}|{}|{}", o.kernel, to_string(o.config),
                       ProblemKey(p, kFamily | kWithoutBatch).to_string())]
        .push_back(i);
  }
  std::vector<std::pair<size_t, size_t>> pairs;
  for (const auto& [key, members] : groups) {
    for (size_t a : members) {
      for (size_t b : members) {
        const Problem &pa = observations[a].problem, &pb = observations[b].problem;
        if (a != b && !(pa.shape == pb.shape && pa.batch == pb.batch)) pairs.emplace_back(a, b);
      }
    }
  }
  if (grid.size() == 0)
    throw invalid_argument("the calibration grid has a constant without values");
  if (pairs.empty()) {
    throw invalid_argument(
        "calibration needs one configuration measured at two shapes at least; the observations "
        "hold none");
  }
  auto error = [&](const ModelConstants& c, size_t a, size_t b) {
    const CalibrationSample &from = observations[a], &to = observations[b];
    const Estimate e = transfer(from.geometry, from.problem, from.gflops, to.problem, device, c);
    return std::abs(std::log(e.gflops / to.gflops));
  };
  // Every combination of the grid, each scored on every pair, on all cores: each thread takes
  // every threads-th combination and keeps its lowest mean; the lowest of those, the earliest
  // combination among equals, is the serial odometer's answer exactly (each mean sums the same
  // pairs in the same order).
  const std::vector<Axis> grid_axes = axes(grid);
  auto constants_at = [&](size_t n) {
    ModelConstants c;
    for (size_t i = grid_axes.size(); i-- > 0;) {  // the last constant changing fastest
      const std::vector<double>& values = *grid_axes[i].second;
      c.*grid_axes[i].first = values[n % values.size()];
      n /= values.size();
    }
    return c;
  };
  struct Lowest {
    double mean = std::numeric_limits<double>::infinity();
    size_t at = 0;
  };
  const size_t combinations = grid.size();
  const size_t threads =
      std::min<size_t>(combinations, std::max<size_t>(1, std::thread::hardware_concurrency()));
  std::vector<Lowest> lowest(threads);
  auto scan = [&](size_t first) {
    for (size_t n = first; n < combinations; n += threads) {
      const ModelConstants c = constants_at(n);
      double sum = 0;
      for (const auto& [a, b] : pairs) sum += error(c, a, b);
      const double mean = sum / double(pairs.size());
      if (mean < lowest[first].mean) lowest[first] = {mean, n};
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(scan, t);
  scan(0);
  for (auto& w : workers) w.join();
  Lowest overall;
  for (const Lowest& l : lowest) {
    if (l.mean < overall.mean || (l.mean == overall.mean && l.at < overall.at)) overall = l;
  }
  Calibration best;
  best.pairs = pairs.size();
  best.mean_abs_log_error = overall.mean;
  best.constants = constants_at(overall.at);
  double num = 0, den = 0, unmodelled = 0;
  for (const auto& [a, b] : pairs) {
    const double d = log_distance(observations[a].problem, observations[b].problem);
    num += error(best.constants, a, b) * std::sqrt(d);
    den += d;
    unmodelled += std::abs(std::log(observations[a].gflops / observations[b].gflops));
  }
  best.constants.distance_penalty = den > 0 ? num / den : 0;
  best.unmodelled_mean_abs_log_error = unmodelled / double(pairs.size());
  return best;
}

}  // namespace gemmtune
