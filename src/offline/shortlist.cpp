// SPDX-License-Identifier: Apache-2.0
#include "src/offline/shortlist.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <queue>
#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {

// Configurations kept (uniformly, by reservoir sampling) to choose the calibration sample from.
constexpr size_t kReservoir = 2000;

struct Candidate {
  double score = 0;
  Configuration config;
  bool operator<(const Candidate& o) const { return score > o.score; }  // min-heap on score
};

// Builds `configs` on `threads` threads; a configuration that does not build is left out (logged).
std::vector<AmdBuild> build_all(const AmdOfflineCompiler& compiler, const KernelSpec& spec,
                                const Problem& problem, const AmdTarget& target,
                                const std::vector<Configuration>& configs, int threads) {
  std::vector<AmdBuild> out;
  const size_t width = static_cast<size_t>(
      std::max(1, threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency())));
  for (size_t begin = 0; begin < configs.size(); begin += width) {
    std::vector<std::future<AmdBuild>> running;
    for (size_t i = begin; i < std::min(configs.size(), begin + width); ++i) {
      running.push_back(std::async(std::launch::async, [&, i] {
        return compiler.build(spec, problem, configs[i], target);
      }));
    }
    for (auto& f : running) {
      try {
        out.push_back(f.get());
      } catch (const Error& e) {
        if (e.code() == ErrorCode::kUnsupported) throw;  // the toolchain itself fails
        spdlog::warn("{}", e.what());
      }
    }
  }
  return out;
}

RegisterCalibration fit(const std::vector<std::pair<double, double>>& points) {
  RegisterCalibration c;
  c.samples = points.size();
  if (points.empty()) return c;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double n = double(points.size());
  const double det = n * sxx - sx * sx;
  if (points.size() >= 2 && det > 0) {
    c.slope = (n * sxy - sx * sy) / det;
    c.intercept = (sy - c.slope * sx) / n;
  } else {
    c.slope = sx > 0 ? sy / sx : 1;  // one point (or one estimate): a ratio
    c.intercept = 0;
  }
  for (const auto& [x, y] : points) {
    c.max_relative_error = std::max(c.max_relative_error, std::abs(c.predict(int64_t(x)) - y) / y);
  }
  return c;
}

}  // namespace

bool meets(const AmdBuild& build, const ShortlistCriteria& criteria) {
  if (build.launch_refused()) return false;
  if (!criteria.allow_spill && build.spills()) return false;
  return build.occupancy.waves >= criteria.min_waves;
}

Shortlist make_shortlist(const AmdOfflineCompiler& compiler, const KernelSpec& spec,
                         const std::string& space_name, const Problem& problem,
                         const AmdTarget& target, const ShortlistCriteria& criteria,
                         const SpeedPredictor& predict) {
  // What would refuse every build is said once, before any.
  compiler.check_buildable(spec, target);
  const DeviceProfile& profile = *target.profile;
  const int64_t wave = target_wavefront(target);
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  const ParamSpace space(spec, space_name, offline_limits(profile), ctx);
  const auto register_file = static_cast<int64_t>(profile.figure("max_registers_per_thread"));
  Shortlist list;

  // 1. A uniform sample of the space, spread over the register estimate, compiled: the calibration.
  auto cap_of = [&](const Configuration& c) -> int64_t {
    const auto it = c.find(spec.register_cap_parameter());
    return it == c.end() ? 0 : it->second;
  };
  std::mt19937_64 rng(criteria.seed);
  std::vector<Configuration> reservoir;
  uint64_t uncapped = 0;
  auto excluded = [&](const Configuration& c) {
    for (const auto& [name, value] : criteria.fixed) {
      const auto it = c.find(name);
      if (it == c.end() || it->second != value) return true;
    }
    return false;
  };
  space.for_each([&](const Configuration& c) {
    if (excluded(c)) return true;
    ++list.valid;
    if (cap_of(c) != 0) return true;  // the calibration measures the estimate uncapped
    ++uncapped;
    if (reservoir.size() < kReservoir) {
      reservoir.push_back(c);
    } else {
      const uint64_t slot = std::uniform_int_distribution<uint64_t>(0, uncapped - 1)(rng);
      if (slot < kReservoir) reservoir[slot] = c;
    }
    return true;
  });
  if (list.valid == 0) return list;
  auto estimate = [&](const Configuration& c) { return spec.registers(c, ctx).value_or(0); };
  std::stable_sort(reservoir.begin(), reservoir.end(),
                   [&](const auto& a, const auto& b) { return estimate(a) < estimate(b); });
  std::vector<Configuration> sample;
  const size_t n = std::min(criteria.calibration_samples, reservoir.size());
  for (size_t i = 0; i < n; ++i) {
    sample.push_back(reservoir[n == 1 ? 0 : i * (reservoir.size() - 1) / (n - 1)]);
  }
  std::vector<std::pair<double, double>> points;
  // A spilling build says only that the estimate was too high for the register file, and a capped
  // one what the cap allowed: neither measures the estimate.
  for (const auto& b : build_all(compiler, spec, problem, target, sample, criteria.threads)) {
    if (!b.spills() && cap_of(b.config) == 0) {
      points.emplace_back(double(estimate(b.config)), double(b.vgprs));
    }
  }
  list.calibration = fit(points);

  // 2. The whole space pruned by the calibrated estimate; the best predicted kept for compiling.
  std::priority_queue<Candidate> best;
  space.for_each([&](const Configuration& c) {
    if (excluded(c)) return true;
    const auto regs = static_cast<int64_t>(std::ceil(list.calibration.predict(estimate(c))));
    const int64_t lds = spec.local_mem_bytes(c, ctx).value_or(0);
    const int64_t group = spec.work_group_size(c, ctx).value_or(1);
    // Under a cap the compiler keeps to it and spills what does not fit, as without one it
    // spills what exceeds the register file.
    const int64_t cap = cap_of(c);
    const int64_t limit = cap > 0 ? std::min(cap, register_file) : register_file;
    if (!criteria.allow_spill && regs > limit) return true;
    const Occupancy o = estimate_occupancy(profile, std::min(regs, limit), lds, group, wave);
    if (o.waves < criteria.min_waves) return true;
    ++list.predicted_fit;
    ResourceUsage usage;
    usage.registers = regs;
    usage.local_mem_bytes = lds;
    usage.spills = 0;
    usage.source = "calibrated estimate";
    best.push({predict(c, usage), c});
    if (best.size() > criteria.max_compiles) best.pop();
    return true;
  });
  std::vector<Candidate> ranked;
  for (; !best.empty(); best.pop()) ranked.push_back(best.top());
  std::reverse(ranked.begin(), ranked.end());  // best first

  // 3. The best compiled for real, in rounds, until the list is full or the compiles are spent.
  const size_t round = static_cast<size_t>(
      std::max(1, criteria.threads > 0 ? criteria.threads
                                       : static_cast<int>(std::thread::hardware_concurrency())));
  for (size_t next = 0; next < ranked.size() && list.entries.size() < criteria.length;) {
    std::vector<Configuration> batch;
    for (; next < ranked.size() && batch.size() < round; ++next)
      batch.push_back(ranked[next].config);
    list.compiled += batch.size();
    for (auto& b : build_all(compiler, spec, problem, target, batch, criteria.threads)) {
      if (!meets(b, criteria)) continue;
      ResourceUsage usage;
      usage.registers = b.vgprs;
      usage.local_mem_bytes = b.lds_bytes;
      usage.spills = b.vgpr_spills;
      usage.private_mem_bytes = b.scratch_bytes;
      usage.source = "AMDGPU metadata (offline)";
      const double score = predict(b.config, usage);
      list.entries.push_back({std::move(b), score});
    }
  }
  std::stable_sort(list.entries.begin(), list.entries.end(),
                   [](const auto& a, const auto& b) { return a.predicted > b.predicted; });
  if (list.entries.size() > criteria.length) list.entries.resize(criteria.length);
  return list;
}

}  // namespace gemmtune
