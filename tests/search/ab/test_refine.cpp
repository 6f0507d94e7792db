// SPDX-License-Identifier: Apache-2.0
// Automatic refinement on a replay file: it must stop at a configuration that no single change
// improves, which is checked against the replay file itself.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <catch2/catch.hpp>

#include "search/ab/refine.hpp"
#include "src/core/error.hpp"
#include "src/db/journal.hpp"
#include "src/device/binary_cache.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_ab_test_refine {

using namespace gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {

// A made-up recording of every valid configuration of `space` (not a measurement of a device): a
// smooth preference for mid-sized tiles and wide vectors times a rugged per-configuration factor,
// so that single changes meet local optima, near-ties and a few wrong results.
std::string write_replay(const ParamSpace& space, const Problem& problem, const std::string& path) {
  std::ofstream out(path);
  nlohmann::json header = {
      {"type", "header"}, {"kernel", space.spec().name()}, {"space", space.name()}};
  out << header.dump() << "\n";
  for (const auto& c : space.enumerate()) {
    const uint64_t h = fnv1a64(to_string(c));
    Result r;
    r.config = c;
    if (h % 29 == 0) {
      r = Result::failure(c, Status::kWrongResult, "made-up wrong result");
      r.max_error = 1;
      r.tolerance = 1e-4;
    } else {
      const double tile = std::abs(std::log2(double(c.at("MWG") * c.at("NWG"))) - 10.0);
      const double vec = 2.0 / double(c.at("VWM") + c.at("VWN"));
      // Steps of 1% so that some neighbours tie within the threshold.
      const double rugged = 1.0 + 0.01 * double((h >> 8) % 25);
      r.time.median_ms = (1.0 + 0.15 * tile + 0.3 * vec) * rugged;
      r.gflops = problem.flops() / (r.time.median_ms * 1e6);
    }
    out << nlohmann::json(JournalEntry{space.spec().name(), problem, r, 0.0}).dump() << "\n";
  }
  return path;
}

struct Fixture {
  KernelSpec spec = KernelSpec::load(source_path("kernel_templates/xgemm.json"));
  Problem problem;
  Fixture() { problem.shape = Shape{128, 128, 128}; }
};

}  // namespace

TEST_CASE("single changes: one parameter to a neighbouring value, valid only", "[refine]") {
  Fixture f;
  const ParamSpace space(f.spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
  const auto all = space.enumerate();
  REQUIRE(all.size() > 100);
  const Configuration start = all[all.size() / 3];
  const auto changes = single_changes(space, start);
  REQUIRE_FALSE(changes.empty());
  size_t expected = 0;
  for (const auto& p : space.parameters()) {
    const auto& v = p.values;
    const auto at = std::find(v.begin(), v.end(), start.at(p.name)) - v.begin();
    for (auto i : {at - 1, at + 1}) {
      if (i < 0 || i >= static_cast<long>(v.size())) continue;
      Configuration c = start;
      c[p.name] = v[i];
      if (!space.check(c)) ++expected;
    }
  }
  CHECK(changes.size() == expected);
  for (const auto& c : changes) {
    CHECK_FALSE(space.check(c));
    int differing = 0;
    for (const auto& [name, value] : c) differing += value != start.at(name);
    CHECK(differing == 1);
  }
  // A value outside the space's list still has its nearest neighbour.
  const auto mwg = std::find_if(space.parameters().begin(), space.parameters().end(),
                                [](const Parameter& p) { return p.name == "MWG"; });
  REQUIRE(mwg != space.parameters().end());
  const int64_t largest = *std::max_element(mwg->values.begin(), mwg->values.end());
  Configuration odd = start;
  odd["MWG"] = 2 * largest;
  bool found_largest = false;
  for (const auto& c : single_changes(space, odd)) found_largest |= c.at("MWG") == largest;
  CHECK(found_largest);
}

TEST_CASE("refine stops where no single change wins, checked against the replay file", "[refine]") {
  Fixture f;
  const ParamSpace space(f.spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
  const std::string path = write_replay(space, f.problem, temp_dir("refine") + "/replay.jsonl");

  // The recording as read back from the file, independently of the evaluator.
  std::map<Configuration, Result> recorded;
  for (const auto& e : read_journal(path).entries) recorded[e.result.config] = e.result;
  const auto all = space.enumerate();
  REQUIRE(recorded.size() == all.size());

  RefineOptions options;  // default protocol: 2%, 5 to 20 pairs
  for (size_t start_index : {size_t{0}, all.size() / 2, all.size() - 1}) {
    Configuration start = all[start_index];
    if (!recorded.at(start).ok()) start = all[start_index + 1];
    REQUIRE(recorded.at(start).ok());
    ReplayEvaluator ev(path);
    std::vector<AbRecord> seen;
    options.on_decision = [&](const AbRecord& r) { seen.push_back(r); };
    const RefineResult res = refine(ev, f.problem, space, start, options);
    INFO("start " << to_string(start) << " final " << to_string(res.best));
    CHECK(res.converged);
    CHECK(res.stop_reason == "no single change wins");
    CHECK(seen.size() == res.decisions.size());
    CHECK(res.evaluations == static_cast<int64_t>(ev.evaluations()));
    REQUIRE(res.best_measurement);

    // Every valid neighbour of the final configuration is not faster beyond the threshold.
    const Result& best = recorded.at(res.best);
    REQUIRE(best.ok());
    CHECK(res.best_measurement->median_ms == Approx(best.time.median_ms));
    size_t calls_of_best = 0;
    for (const auto& d : res.decisions) {
      if (d.baseline.config == res.best) calls_of_best += d.baseline.times_ms.size();
      if (d.changed.config == res.best) calls_of_best += d.changed.times_ms.size();
    }
    CHECK(res.best_measurement->times_ms.size() == calls_of_best);
    CHECK(calls_of_best >= 5);
    size_t neighbours = 0;
    for (const auto& c : single_changes(space, res.best)) {
      const Result& r = recorded.at(c);
      if (!r.ok()) continue;
      ++neighbours;
      CHECK(best.time.median_ms / r.time.median_ms - 1 <= options.ab.threshold + 1e-12);
    }
    CHECK(neighbours > 0);
    CHECK(best.time.median_ms <= recorded.at(start).time.median_ms * std::pow(1.02, res.kept));

    // Each decision agrees with the recording.
    for (const auto& d : res.decisions) {
      const Result& a = recorded.at(d.baseline.config);
      const Result& b = recorded.at(d.changed.config);
      if (!b.ok()) {
        CHECK(d.reason == DecisionReason::kChangeFailed);
        continue;
      }
      const double gain = a.time.median_ms / b.time.median_ms - 1;
      CHECK(d.stats.gain == Approx(gain));
      CHECK(d.stats.pairs == 5);
      if (gain > 0.02) CHECK(d.reason == DecisionReason::kFaster);
      if (gain < -0.02) CHECK(d.reason == DecisionReason::kSlower);
      if (std::abs(gain) < 0.0199) {
        if (d.reason == DecisionReason::kTieRevisit) {
          CHECK(d.simplicity.order < 0);
          CHECK(d.decision == Decision::kRevert);
        } else {
          CHECK(d.decision == (d.simplicity.order < 0 ? Decision::kKeep : Decision::kRevert));
        }
      }
    }
  }
}

TEST_CASE("refine on recorded replay files stops where no recorded single change wins",
          "[refine]") {
  // Real recordings: an exhaustive run of the xgemm cpu space on PoCL, and a (partial) exhaustive
  // run of the xgemm_fast replay space on an H200. Neighbours that were not recorded are
  // reverted as not in the recorded space; every recorded one is checked against the file.
  for (const std::string file : {"tests/data/replay/xgemm-cpu-pocl-256.jsonl",
                                 "tests/data/replay/replay_xgemm_fast_h200_2048.jsonl.gz"}) {
    INFO(file);
    const std::string path = source_path(file);
    ReplayEvaluator ev(path);
    REQUIRE(ev.problems().size() == 1);
    const Problem problem = ev.problems().front();
    const KernelSpec spec =
        KernelSpec::load(source_path("kernel_templates/" + ev.kernel() + ".json"));
    // The template may have gained parameters since the recording: they ran at their defaults.
    ev.set_defaults(spec.defaults());
    const ParamSpace space(spec, ev.header().at("space").get<std::string>(), DeviceLimits{},
                           Context{{"ELEM_BYTES", 4}});
    std::map<Configuration, Result> recorded;
    std::vector<Configuration> ok_configs;
    for (const auto& c : ev.configurations(problem)) {
      const Configuration r = spec.complete(c);
      const Result res = ev.evaluate(problem, r);
      recorded[r] = res;
      if (res.ok() && !space.check(r)) ok_configs.push_back(r);
    }
    REQUIRE(ok_configs.size() > 100);
    for (size_t start_index : {size_t{0}, ok_configs.size() / 2, ok_configs.size() - 1}) {
      const Configuration start = ok_configs[start_index];
      const RefineResult res = refine(ev, problem, space, start, RefineOptions{});
      INFO("start " << to_string(start) << " final " << to_string(res.best));
      CHECK(res.converged);
      const Result& best = recorded.at(res.best);
      REQUIRE(best.ok());
      // Each kept change is faster beyond 2% or a tie (within 2%) that is simpler.
      CHECK(best.time.median_ms <= recorded.at(start).time.median_ms * std::pow(1.02, res.kept));
      size_t checked = 0;
      for (const auto& c : single_changes(space, res.best)) {
        auto it = recorded.find(c);
        if (it == recorded.end() || !it->second.ok()) continue;
        ++checked;
        CHECK(best.time.median_ms / it->second.time.median_ms - 1 <= 0.02 + 1e-12);
      }
      CHECK(checked > 0);
    }
  }
}

namespace {

// Times by configuration; one configuration is fast for its first calls only (a measurement that
// later calls contradict).
class ScriptedEvaluator : public Evaluator {
 public:
  std::map<Configuration, double> ms;
  double other_ms = 1.5;
  Configuration fading;
  int fading_fast_calls = 0;
  double fading_fast_ms = 0, fading_late_ms = 0;

  Result evaluate(const Problem& problem, const Configuration& config) override {
    Result r;
    r.config = config;
    if (config == fading) {
      r.time.median_ms = fading_fast_calls-- > 0 ? fading_fast_ms : fading_late_ms;
    } else {
      auto it = ms.find(config);
      r.time.median_ms = it == ms.end() ? other_ms : it->second;
    }
    r.gflops = problem.flops() / (r.time.median_ms * 1e6);
    return r;
  }
  std::string description() const override { return "scripted"; }
};

}  // namespace

TEST_CASE("refine does not go back on a tie to a configuration left for a win", "[refine]") {
  Fixture f;
  const ParamSpace space(f.spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
  Configuration start;
  for (const auto& c : space.enumerate()) {
    if (c.at("VWM") == 4) {
      Configuration wide = c;
      wide["VWM"] = 8;
      if (!space.check(wide)) {
        start = c;
        break;
      }
    }
  }
  REQUIRE_FALSE(start.empty());
  Configuration wide = start;
  wide["VWM"] = 8;
  ScriptedEvaluator ev;
  ev.ms[start] = 1.0;
  ev.fading = wide;
  ev.fading_fast_calls = 5;  // one A/B: 10% faster
  ev.fading_fast_ms = 0.9;
  ev.fading_late_ms = 1.005;  // afterwards a tie with the (simpler) start
  const RefineResult res = refine(ev, f.problem, space, start, RefineOptions{});
  CHECK(res.converged);
  CHECK(res.best == wide);
  bool revisit = false;
  for (const auto& d : res.decisions) {
    if (d.changed.config == start) {
      CHECK(d.reason == DecisionReason::kTieRevisit);
      CHECK(parse_decision_reason(to_string(d.reason)) == DecisionReason::kTieRevisit);
      CHECK(d.decision == Decision::kRevert);
      CHECK(d.explanation.find("a tie does not undo") != std::string::npos);
      revisit = true;
    }
  }
  CHECK(revisit);
}

TEST_CASE("refine keeps to its budget", "[refine]") {
  Fixture f;
  const ParamSpace space(f.spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
  const std::string path = write_replay(space, f.problem, temp_dir("refine") + "/replay.jsonl");
  const auto all = space.enumerate();
  ReplayEvaluator ev(path);
  RefineOptions options;
  options.max_evals = 35;
  const RefineResult res = refine(ev, f.problem, space, all[1], options);
  CHECK_FALSE(res.converged);
  CHECK(res.stop_reason.find("evaluation budget") != std::string::npos);
  CHECK(res.evaluations <= 35);
  CHECK(ev.evaluations() <= 35);

  options.max_evals = 9;  // less than one comparison
  CHECK_THROWS_WITH(refine(ev, f.problem, space, all[1], options),
                    Catch::Contains("--max-evals 9"));
  options.max_evals = 0;
  Configuration partial = all[1];
  partial.erase("KWI");
  CHECK_THROWS_WITH(refine(ev, f.problem, space, partial, options), Catch::Contains("KWI"));
}

}  // namespace gemmtune_tests::search_ab_test_refine
