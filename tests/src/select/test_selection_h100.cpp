// SPDX-License-Identifier: Apache-2.0
// The selection model against what the H100 measured: the search journals of
// tests/data/h100/search* hold the same configuration measured at several shapes, so a
// configuration's speed at a shape can be predicted from its other shapes and compared with the
// measurement there.
//
// Held-out protocol, one fold per FP32 xgemm_fast shape T of the journals: the constants are
// calibrated without any measurement at T; the candidates are the configurations measured at T
// and at some other shape, each knowing only its measurements at the other shapes. The
// nearest-entry rule takes the fastest candidate at the shape nearest to T (log distance); the
// model ranks them (select_configuration). Both picks are then looked up in T's measurements.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "src/db/journal.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/policy.hpp"
#include "src/select/selection.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_select_test_selection_h100 {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

struct H100Data {
  ProfileSet profiles;
  DeviceModel device;
  std::map<std::string, KernelSpec> specs;
  std::vector<CalibrationSample> observations;

  const KernelSpec* spec(const std::string& kernel) {
    auto it = specs.find(kernel);
    if (it == specs.end()) {
      it = specs.emplace(kernel, KernelSpec::load_named(source_path("kernel_templates"), kernel))
               .first;
    }
    return &it->second;
  }
};

H100Data& h100() {
  static H100Data* data = [] {
    auto* d = new H100Data;
    d->profiles = ProfileSet::load_dir(source_path("devices"));
    const DeviceProfile* profile = d->profiles.find("sm_90", "NVIDIA H100 80GB HBM3");
    REQUIRE(profile);
    d->device = DeviceModel::of(profile, 132, 1980);
    std::vector<std::string> journals;
    for (const auto& dir : std::filesystem::directory_iterator(source_path("tests/data/h100"))) {
      if (dir.path().filename().string().rfind("search", 0) != 0) continue;
      for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
        if (f.path().extension() == ".jsonl") journals.push_back(f.path().string());
      }
    }
    std::sort(journals.begin(), journals.end());
    // The best result of each (configuration, problem) across all journals.
    std::map<std::string, CalibrationSample> best;
    for (const auto& j : journals) {
      for (auto& o : journal_observations(
               j, [d](const std::string& k) { return d->spec(k); }, d->device)) {
        const std::string key = problem_key(o.kernel, o.problem) + "|" + to_string(o.config);
        auto it = best.find(key);
        if (it == best.end() || it->second.gflops < o.gflops) best[key] = o;
      }
    }
    for (auto& [key, o] : best) d->observations.push_back(o);
    return d;
  }();
  return *data;
}

bool fp32_fast(const CalibrationSample& o) {
  const Problem& p = o.problem;
  return o.kernel == "xgemm_fast" && p.precision == Precision::kFP32 && p.batch == 1 &&
         p.order == Order::kRowMajor && p.layout() == "NN" && p.epilogue.none();
}

struct Fold {
  Shape target;
  size_t candidates = 0;
  Shape nearest_shape;
  double nearest = 0, model = 0, oracle = 0;
  double predicted = 0;  // the model's prediction for its pick
  double measured = 0;   // the pick of the chooser's measured step (0: it does not apply)
  double error = 0, unmodelled = 0;  // mean |log| error of transfers into the target
  size_t transfers = 0;
  ModelConstants constants;
};

Fold run_fold(const Shape& target) {
  H100Data& d = h100();
  Fold f;
  f.target = target;
  std::vector<CalibrationSample> training;
  for (const auto& o : d.observations) {
    if (!(fp32_fast(o) && o.problem.shape == target)) training.push_back(o);
  }
  f.constants = calibrate(training, d.device, CalibrationGrid::standard()).constants;

  // Per configuration: the GFLOPS at the target, and the measurements elsewhere.
  std::map<std::string, double> at_target;
  std::map<std::string, SelectionCandidate> others;
  for (const auto& o : d.observations) {
    if (!fp32_fast(o)) continue;
    const std::string id = to_string(o.config);
    if (o.problem.shape == target) {
      at_target[id] = o.gflops;
      continue;
    }
    auto& c = others[id];
    c.kernel = o.kernel;
    c.parameters = o.config;
    Measurement m;
    m.problem = o.problem;
    m.gflops = o.gflops;
    m.source = MeasurementSource::kJournal;
    m.origin = "results/h100";
    m.entry = o.problem.shape.to_string();
    c.measurements.push_back(m);
  }
  std::vector<SelectionCandidate> candidates;
  for (auto& [id, c] : others) {
    if (at_target.count(id)) candidates.push_back(c);
  }
  f.candidates = candidates.size();
  if (candidates.empty()) return f;

  Problem problem;
  problem.shape = target;
  // The nearest-entry rule: the shape nearest to the target, its fastest candidate.
  double best_distance = 0;
  bool first = true;
  for (const auto& c : candidates) {
    for (const auto& m : c.measurements) {
      const double dist = log_distance(m.problem, problem);
      if (first || dist < best_distance) {
        best_distance = dist;
        f.nearest_shape = m.problem.shape;
        first = false;
      }
    }
  }
  double nearest_measured = -1;
  for (const auto& c : candidates) {
    for (const auto& m : c.measurements) {
      if (m.problem.shape == f.nearest_shape && m.gflops > nearest_measured) {
        nearest_measured = m.gflops;
        f.nearest = at_target.at(to_string(c.parameters));
      }
    }
    f.oracle = std::max(f.oracle, at_target.at(to_string(c.parameters)));
  }

  SelectOptions options;
  options.constants = f.constants;
  options.measured.neighbours = 0;  // the model alone: these journals are cross-measurements too
  options.specs = [&d](const std::string& k) { return d.spec(k); };
  const Selection s = select_configuration(candidates, EntryKey::of("xgemm_fast", problem), problem,
                                           d.device, options);
  REQUIRE(s.kind == Selection::Kind::kModel);
  f.model = at_target.at(to_string(s.chosen->parameters));
  f.predicted = s.chosen->estimate.gflops;
  // The same candidates through the chooser's measured step (MeasuredRule): these journals measured
  // many configurations at each of their shapes.
  SelectOptions measured_step = options;
  measured_step.measured = SelectionPolicy::defaults().measured;
  const Selection sm = select_configuration(candidates, EntryKey::of("xgemm_fast", problem),
                                            problem, d.device, measured_step);
  if (sm.kind == Selection::Kind::kMeasured) {
    f.measured = at_target.at(to_string(sm.chosen->parameters));
  }

  // How well the transfers into the target are predicted.
  for (const auto& c : candidates) {
    const double measured = at_target.at(to_string(c.parameters));
    for (const auto& m : c.measurements) {
      const TileGeometry g =
          TileGeometry::of(d.spec(c.kernel), c.parameters, m.problem.precision, m.usage, d.device);
      const Estimate e = transfer(g, m.problem, m.gflops, problem, d.device, f.constants);
      f.error += std::abs(std::log(e.gflops / measured));
      f.unmodelled += std::abs(std::log(m.gflops / measured));
      ++f.transfers;
    }
  }
  f.error /= double(f.transfers);
  f.unmodelled /= double(f.transfers);
  return f;
}

}  // namespace

TEST_CASE("the shipped model constants are the calibration on the H100 journals",
          "[select][h100]") {
  H100Data& d = h100();
  REQUIRE(d.observations.size() > 2000);
  const Calibration c = calibrate(d.observations, d.device, CalibrationGrid::standard());
  std::cout << fmt::format(
      "H100 calibration: {} transfer pairs, mean |log error| {:.3f} (unmodelled {:.3f}); "
      "saturation {} groups, group overhead {}, edge cost {}, bandwidth efficiency {}, launch {} "
      "us, rate cap {}, distance penalty {:.3f}\n",
      c.pairs, c.mean_abs_log_error, c.unmodelled_mean_abs_log_error, c.constants.saturation_groups,
      c.constants.group_overhead, c.constants.edge_cost, c.constants.bandwidth_efficiency,
      c.constants.launch_us, c.constants.rate_cap, c.constants.distance_penalty);
  // The constants the chooser uses on the H100: its profile's selection policy.
  const ModelConstants shipped = SelectionPolicy::of(d.device.profile).model;
  CHECK(c.constants.saturation_groups == shipped.saturation_groups);
  CHECK(c.constants.group_overhead == shipped.group_overhead);
  CHECK(c.constants.edge_cost == shipped.edge_cost);
  CHECK(c.constants.bandwidth_efficiency == shipped.bandwidth_efficiency);
  CHECK(c.constants.launch_us == shipped.launch_us);
  CHECK(c.constants.rate_cap == shipped.rate_cap);
  CHECK(c.constants.distance_penalty == Approx(shipped.distance_penalty).margin(0.0005));
  // The model explains the change between shapes: its error is well under the error of taking a
  // configuration's GFLOPS to be the same at every shape.
  CHECK(c.mean_abs_log_error < 0.6 * c.unmodelled_mean_abs_log_error);
}

TEST_CASE("on held-out H100 shapes the model's pick is at least as fast as the nearest entry's",
          "[select][h100]") {
  std::set<Shape> targets;
  for (const auto& o : h100().observations) {
    if (fp32_fast(o)) targets.insert(o.problem.shape);
  }
  std::vector<Fold> folds;
  for (const auto& t : targets) {
    Fold f = run_fold(t);
    if (f.candidates > 0) folds.push_back(f);
  }
  // Every FP32 shape but 2048^3 (measured by one search only) has candidates.
  REQUIRE(folds.size() == targets.size() - 1);
  size_t not_slower = 0, faster = 0;
  double log_sum = 0, error = 0, unmodelled = 0;
  size_t measured_folds = 0;
  double measured_log_sum = 0, model_log_sum = 0;
  for (const auto& f : folds) {
    const double ratio = f.model / f.nearest;
    std::cout << fmt::format(
        "held out {:>14}: {:3} candidates; nearest rule ({}) {:6.0f}, model {:6.0f} (predicted "
        "{:6.0f}), best {:6.0f} GFLOPS; model/nearest {:.3f}; transfers into it: mean |log "
        "error| {:.3f} (unmodelled {:.3f})\n",
        f.target.to_string(), f.candidates, f.nearest_shape.to_string(), f.nearest, f.model,
        f.predicted, f.oracle, ratio, f.error, f.unmodelled);
    // Equal within the 1 % the journals' repeated measurements of one configuration differ by.
    if (ratio >= 0.99) ++not_slower;
    if (ratio > 1.05) ++faster;
    log_sum += std::log(ratio);
    if (f.measured > 0) {
      ++measured_folds;
      measured_log_sum += std::log(f.measured / f.oracle);
      model_log_sum += std::log(f.model / f.oracle);
    }
    error += f.error;
    unmodelled += f.unmodelled;
  }
  const double geomean = std::exp(log_sum / double(folds.size()));
  std::cout << fmt::format("model/nearest: not slower on {} of {}, faster on {}, geomean {:.3f}\n",
                           not_slower, folds.size(), faster, geomean);
  const double measured_geomean =
      std::exp(measured_log_sum / double(std::max<size_t>(1, measured_folds)));
  const double model_geomean =
      std::exp(model_log_sum / double(std::max<size_t>(1, measured_folds)));
  std::cout << fmt::format(
      "measured step on {} folds: pick/best geomean {:.3f}, the model's on the same folds "
      "{:.3f}\n",
      measured_folds, measured_geomean, model_geomean);
  // Measured (the same journals): the measured step applies on 4 folds (the shapes whose
  // neighbours are near enough) and keeps 0.994 of the best there, the model 0.982. Kept: it
  // applies on 3 at least and is not worse than the model by more than the 1 % of repeated
  // measurements.
  CHECK(measured_folds >= 3);
  CHECK(measured_geomean >= model_geomean - 0.01);
  // Measured (the 2026-11 journals): not slower on 6 of 7 folds, faster by 23 % and 25 % on
  // 128x4096x1024 and 8192x64x8192, 5 % slower on 1024^3 (1000^3's entry carries over better than
  // the model says), geomean 1.056. The thresholds keep one fold of margin on each: most shapes
  // (5 of 7) not slower, a gain over 5 % on one at least, a geometric mean of 1.02 at least. The
  // nearest rule itself would fail the last two (no gain, mean 1.0).
  CHECK(not_slower >= 5);
  CHECK(faster >= 1);
  CHECK(geomean >= 1.02);
  // Held-out predictions are better than assuming a configuration's GFLOPS carry over.
  CHECK(error < unmodelled);
}

}  // namespace gemmtune_tests::src_select_test_selection_h100
