// SPDX-License-Identifier: Apache-2.0
// The tuning loop over several devices (lanes): every configuration measured once, on whichever
// lane is free; budgets hold; an error of one lane ends the search and reaches the caller.
#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "search/strategies/strategies.hpp"
#include "search/tuning/tuner.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_tuning_test_tuner {

using namespace gemmtune;

namespace {

constexpr double kReplayDelayMs = 2.0;  // long enough for the lanes to overlap

const Journal& recording() {
  static const Journal j = [] {
    static const KernelSpec spec =
        KernelSpec::load(test::source_path("kernel_templates/xgemm.json"));
    const ParamSpace space(spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
    Problem p;
    p.shape = {256, 256, 256};
    return test::synthetic_gemm_journal(space, p, 5);
  }();
  return j;
}

// A device: answers from the recording and counts what it measured.
class CountingLane : public Evaluator {
 public:
  explicit CountingLane(bool fail_third = false)
      : replay_(recording(), kReplayDelayMs), fail_third_(fail_third) {}
  Result evaluate(const Problem& problem, const Configuration& config) override {
    if (fail_third_ && ++calls_ == 3) throw std::runtime_error("the device was lost");
    ++measured;
    return replay_.evaluate(problem, config);
  }
  std::string description() const override { return "counting lane"; }
  std::atomic<size_t> measured{0};

 private:
  ReplayEvaluator replay_;
  bool fail_third_;
  size_t calls_ = 0;
};

struct Fixture {
  Problem problem = ReplayEvaluator(recording()).problems().front();
  SearchSpace space =
      SearchSpace::from_configurations(ReplayEvaluator(recording()).configurations(problem));
};

}  // namespace

TEST_CASE("two lanes share one search: each configuration once, both lanes busy",
          "[search][tuner][lanes]") {
  Fixture f;
  const std::string journal = test::temp_dir("tuner-lanes") + "/j.jsonl";
  for (const char* strategy : {"random", "bayes", "anneal"}) {
    INFO(strategy);
    CountingLane a, b;
    auto searcher = make_searcher(strategy, f.space, 3, {});
    JournalWriter writer(journal, JournalOpen::kAppend);
    TuneSettings settings;
    settings.stop.max_evals = 30;
    settings.journal = &writer;
    const auto out = run_search({&a, &b}, f.problem, f.space, *searcher, settings);
    CHECK(out.evaluations == 30);
    CHECK(out.measured == 30);
    CHECK(a.measured + b.measured == 30);
    CHECK(a.measured > 0);
    CHECK(b.measured > 0);
    CHECK(out.stop_reason == "reached 30 evaluations");
    std::set<size_t> seen;
    for (const auto& o : searcher->history()) seen.insert(o.index);
    CHECK(seen.size() == 30);
    REQUIRE(out.best);
    CHECK(out.best->ok());
  }
  // The journal holds every result once: 90 lines of three searches, none twice within one.
  CHECK(read_journal(journal).entries.size() == 90);
}

TEST_CASE("a proposer thread keeps the lanes fed: each configuration once, budgets hold",
          "[search][tuner][lanes]") {
  Fixture f;
  for (size_t lanes : {1, 2}) {
    for (const char* strategy : {"random", "bayes"}) {
      INFO(lanes << " lanes, " << strategy);
      CountingLane a, b;
      std::vector<Evaluator*> devices{&a, &b};
      devices.resize(lanes);
      auto searcher = make_searcher(strategy, f.space, 5, {});
      TuneSettings settings;
      settings.stop.max_evals = 25;
      settings.lookahead = 6;
      settings.propose_while_measuring = true;
      const auto out = run_search(devices, f.problem, f.space, *searcher, settings);
      CHECK(out.evaluations == 25);
      CHECK(a.measured + b.measured == 25);
      CHECK(out.stop_reason == "reached 25 evaluations");
      std::set<size_t> seen;
      for (const auto& o : searcher->history()) seen.insert(o.index);
      CHECK(seen.size() == 25);
      CHECK(out.max_in_flight <= settings.lookahead + lanes - 1);
    }
  }
}

namespace {

// A device that notes the hint each measurement gets and the best time before it.
class HintedLane : public Evaluator {
 public:
  explicit HintedLane(double flops) : replay_(recording()), flops_(flops) {}
  Result evaluate(const Problem& problem, const Configuration& config) override {
    return evaluate_hinted(problem, config, {});
  }
  Result evaluate_hinted(const Problem& problem, const Configuration& config,
                         const EvaluationHint& hint) override {
    hints.push_back(hint.stop_above_ms);
    best_before.push_back(best_ms);
    Result r = replay_.evaluate(problem, config);
    const double t = result_time_ms(r, flops_);
    if (r.ok() && t > 0) best_ms = std::min(best_ms, t);
    return r;
  }
  std::string description() const override { return "hinted lane"; }
  std::vector<double> hints, best_before;
  double best_ms = std::numeric_limits<double>::infinity();

 private:
  ReplayEvaluator replay_;
  double flops_;
};

}  // namespace

TEST_CASE("each measurement is told to stop above a multiple of the best so far",
          "[search][tuner]") {
  Fixture f;
  constexpr double kFactor = 1.5;
  for (bool proposer : {false, true}) {
    INFO("proposer thread " << proposer);
    HintedLane lane(f.problem.flops());
    auto searcher = make_searcher("bayes", f.space, 2, {});
    const std::string journal = test::temp_dir("tuner-hint") + "/j.jsonl";
    JournalWriter writer(journal, JournalOpen::kCreate);
    TuneSettings settings;
    settings.stop.max_evals = 20;
    settings.lookahead = 4;
    settings.propose_while_measuring = proposer;
    settings.stop_above_best = kFactor;
    settings.journal = &writer;
    const auto out = run_search(lane, f.problem, f.space, *searcher, settings);
    REQUIRE(lane.hints.size() == 20);
    CHECK(lane.hints.front() == 0);  // nothing to compare with yet
    for (size_t i = 1; i < lane.hints.size(); ++i) {
      INFO(i);
      CHECK(lane.hints[i] == Approx(kFactor * lane.best_before[i]));
    }
    CHECK(read_journal(journal).entries.size() == 20);
    CHECK(out.evaluations == 20);
  }
  // Off: no hint.
  HintedLane lane(f.problem.flops());
  auto searcher = make_searcher("random", f.space, 2, {});
  TuneSettings settings;
  settings.stop.max_evals = 5;
  run_search(lane, f.problem, f.space, *searcher, settings);
  for (double h : lane.hints) CHECK(h == 0);
}

TEST_CASE("with two lanes an exhaustive search of a small space ends when it is measured",
          "[search][tuner][lanes]") {
  Fixture f;
  std::vector<Configuration> few;
  for (size_t i = 0; i < 7; ++i) few.push_back(f.space.config(i));
  const SearchSpace small = SearchSpace::from_configurations(few);
  // With or without a proposer thread, the strategy running dry ends the search.
  for (bool proposer : {false, true}) {
    INFO("proposer thread " << proposer);
    CountingLane a, b;
    auto searcher = make_searcher("exhaustive", small, 1, {});
    TuneSettings settings;
    settings.stop.max_evals = 100;
    settings.propose_while_measuring = proposer;
    const auto out = run_search({&a, &b}, f.problem, small, *searcher, settings);
    CHECK(out.evaluations == 7);
    CHECK(a.measured + b.measured == 7);
  }
}

TEST_CASE("an error of one lane stops the search and is thrown", "[search][tuner][lanes]") {
  Fixture f;
  CountingLane good, lost(true);
  auto searcher = make_searcher("random", f.space, 1, {});
  TuneSettings settings;
  settings.stop.max_evals = 200;
  CHECK_THROWS_WITH(run_search({&good, &lost}, f.problem, f.space, *searcher, settings),
                    Catch::Contains("the device was lost"));
  CHECK(good.measured < 200);
}

namespace {

// A device whose builds take `compile_ms` and whose measurements take `measuring_ms`, as the
// results report them (no time passes). It notes how many proposals are in flight while it
// measures, once the search is past its start (before any result the pace is unknown).
class PacedLane : public Evaluator {
 public:
  PacedLane(double compile_ms, double measuring_ms, const Searcher& searcher)
      : replay_(recording()),
        compile_ms_(compile_ms),
        measuring_ms_(measuring_ms),
        searcher_(searcher) {}
  Result evaluate(const Problem& problem, const Configuration& config) override {
    // One lane: the loop changes nothing while this runs, so reading the searcher is safe.
    if (searcher_.history().size() >= kSettled) {
      late_in_flight = std::max(late_in_flight, searcher_.pending_count());
    }
    Result r = replay_.evaluate(problem, config);
    r.compile_ms = compile_ms_;
    r.time.runs = kRuns;
    r.time.mean_ms = measuring_ms_ / kRuns;
    return r;
  }
  std::string description() const override { return "paced lane"; }
  size_t late_in_flight = 0;

 private:
  static constexpr int kRuns = 10;
  static constexpr size_t kSettled = 12;
  ReplayEvaluator replay_;
  double compile_ms_, measuring_ms_;
  const Searcher& searcher_;
};

}  // namespace

TEST_CASE("bayes keeps as many proposals in flight as keep the device busy",
          "[search][tuner][bayes]") {
  Fixture f;
  constexpr size_t kLookahead = 9;
  auto in_flight = [&](double compile_ms, double measuring_ms, OptionValues options) {
    auto searcher = make_searcher("bayes", f.space, 4, options);
    PacedLane lane(compile_ms, measuring_ms, *searcher);
    TuneSettings settings;
    settings.stop.max_evals = 30;
    settings.lookahead = kLookahead;
    const auto out = run_search(lane, f.problem, f.space, *searcher, settings);
    CHECK(out.evaluations == 30);
    return lane.late_in_flight;
  };
  // Builds 50 times longer than a measurement: the whole lookahead is in flight.
  CHECK(in_flight(500, 10, {}) == kLookahead);
  // Builds shorter than a measurement: one building, one waiting and the one measured.
  CHECK(in_flight(5, 10, {}) == 3);
  // A fixed batch is kept whatever the pace.
  CHECK(in_flight(500, 10, {{"batch", "2"}}) == 2);
}

namespace {

// A device whose builds run elsewhere: a configuration is ready once another with the same
// built-in value A was measured (R is the runtime parameter), and each measurement is noted.
class BuildingLane : public Evaluator {
 public:
  Result evaluate(const Problem& problem, const Configuration& config) override {
    std::lock_guard<std::mutex> lock(mutex_);
    order.push_back(config);
    built_.insert(config.at("A"));
    Result r;
    r.config = config;
    r.time.runs = 1;
    r.time.calls = 1;
    r.time.mean_ms = r.time.median_ms = 1.0 + double(config.at("A") % 5) + 0.1 * config.at("R");
    r.gflops = problem.flops() / (r.time.median_ms * 1e6);
    return r;
  }
  bool ready(const Problem&, const Configuration& config) override {
    std::lock_guard<std::mutex> lock(mutex_);
    return built_.count(config.at("A")) > 0;
  }
  std::string description() const override { return "building lane"; }
  std::vector<Configuration> order;

 private:
  std::mutex mutex_;
  std::set<int64_t> built_;
};

}  // namespace

namespace {

// A device whose builds run elsewhere, scripted: `built` says which configurations are built when
// asked for, `ms` how long each runs; each measurement is noted.
class ScriptedLane : public Evaluator {
 public:
  ScriptedLane(std::function<bool(const Configuration&)> built,
               std::function<double(const Configuration&)> ms)
      : built_(std::move(built)), ms_(std::move(ms)) {}
  Result evaluate(const Problem& problem, const Configuration& config) override {
    order.push_back(config);
    Result r;
    r.config = config;
    r.time.runs = r.time.calls = 1;
    r.time.mean_ms = r.time.median_ms = ms_(config);
    r.gflops = problem.flops() / (r.time.median_ms * 1e6);
    return r;
  }
  bool ready(const Problem&, const Configuration& config) override { return built_(config); }
  std::string description() const override { return "scripted lane"; }
  std::vector<Configuration> order;

 private:
  std::function<bool(const Configuration&)> built_;
  std::function<double(const Configuration&)> ms_;
};

// Configurations A = 1..as, each with every value of the runtime parameter R in `rs` (none:
// no R).
SearchSpace a_r_space(int64_t as, const std::vector<int64_t>& rs) {
  std::vector<Configuration> configs;
  for (int64_t a = 1; a <= as; ++a) {
    if (rs.empty()) configs.push_back({{"A", a}});
    for (int64_t r : rs) configs.push_back({{"A", a}, {"R", r}});
  }
  return SearchSpace::from_configurations(configs);
}

Problem small_problem() {
  Problem problem;
  problem.shape = {64, 64, 64};
  return problem;
}

}  // namespace

TEST_CASE("the siblings of the fastest measured configuration are measured first",
          "[search][tuner][runtime]") {
  // A 1 and A 2 are built when asked for, the rest still building; A 2 runs twice as fast.
  const SearchSpace space = a_r_space(4, {1, 4, 8});
  ScriptedLane lane([](const Configuration& c) { return c.at("A") <= 2; },
                    [](const Configuration& c) { return c.at("A") == 2 ? 0.5 : 1.0; });
  auto searcher = make_searcher("exhaustive", space, 7, {});
  TuneSettings settings;
  settings.stop.max_evals = 3;
  settings.lookahead = 1;
  settings.runtime_parameters = {{"R", {}}};
  const auto out = run_search(lane, small_problem(), space, *searcher, settings);
  CHECK(out.siblings == 4);
  // A 1 and A 2 (built, measured in turn), then while A 3 builds the siblings of A 2 (the faster)
  // before those of A 1, then A 3.
  const std::vector<Configuration> expected = {
      {{"A", 1}, {"R", 1}}, {{"A", 2}, {"R", 1}}, {{"A", 2}, {"R", 4}}, {{"A", 2}, {"R", 8}},
      {{"A", 1}, {"R", 4}}, {{"A", 1}, {"R", 8}}, {{"A", 3}, {"R", 1}}};
  CHECK(lane.order == expected);
}

TEST_CASE("a proposal whose build is done is measured before one still building",
          "[search][tuner][runtime]") {
  // Builds finish out of order: configurations with an even A are built, the others building.
  const SearchSpace space = a_r_space(12, {});
  ScriptedLane lane([](const Configuration& c) { return c.at("A") % 2 == 0; },
                    [](const Configuration&) { return 1.0; });
  auto searcher = make_searcher("exhaustive", space, 7, {});
  TuneSettings settings;
  settings.stop.max_evals = 8;
  settings.lookahead = 4;
  const auto out = run_search(lane, small_problem(), space, *searcher, settings);
  CHECK(out.evaluations == 8);
  // The queue holds A = 1..4 in the strategy's order: 2 and 4 go first, 1 waits for its build.
  REQUIRE(lane.order.size() == 8);
  CHECK(lane.order[0].at("A") == 2);
  CHECK(lane.order[1].at("A") == 4);
  CHECK(std::set<Configuration>(lane.order.begin(), lane.order.end()).size() == 8);
}

TEST_CASE("a lane waiting for a build measures a runtime sibling of a measured configuration",
          "[search][tuner][runtime]") {
  std::vector<Configuration> configs;
  for (int64_t a = 1; a <= 12; ++a) {
    for (int64_t r : {1, 4, 8}) configs.push_back({{"A", a}, {"R", r}});
  }
  const SearchSpace space = SearchSpace::from_configurations(configs);
  Problem problem;
  problem.shape = {64, 64, 64};
  for (bool proposer : {false, true}) {
    for (const char* strategy : {"random", "bayes"}) {
      INFO(strategy << (proposer ? " with a proposer thread" : ""));
      BuildingLane lane;
      auto searcher = make_searcher(strategy, space, 7, {});
      TuneSettings settings;
      settings.stop.max_evals = 8;
      settings.propose_while_measuring = proposer;
      settings.runtime_parameters = {{"R", {}}};
      const auto out = run_search({&lane}, problem, space, *searcher, settings);
      // The strategy's eight proposals all ran; the siblings came beside them, not instead.
      CHECK(out.stop_reason == "reached 8 evaluations");
      CHECK(out.siblings > 0);
      CHECK(out.evaluations == 8 + out.siblings);
      CHECK(lane.order.size() == out.evaluations);
      // Each configuration once, and a sibling only after a configuration of its build.
      std::set<Configuration> seen(lane.order.begin(), lane.order.end());
      CHECK(seen.size() == lane.order.size());
      std::set<int64_t> built;
      size_t without_build = 0;
      for (const auto& c : lane.order) without_build += !built.insert(c.at("A")).second;
      CHECK(without_build >= out.siblings);
      std::set<size_t> told;
      for (const auto& o : searcher->history()) told.insert(o.index);
      CHECK(told.size() == out.evaluations);  // the strategy learnt every result
    }
  }
  // Without runtime parameters the loop measures the proposals alone; so it does where R's
  // values are built in but one (each a build of its own).
  for (const RuntimeParameters& runtime : {RuntimeParameters{}, RuntimeParameters{{"R", {1, 4}}}}) {
    BuildingLane lane;
    auto searcher = make_searcher("random", space, 7, {});
    TuneSettings settings;
    settings.stop.max_evals = 8;
    settings.runtime_parameters = runtime;
    const auto out = run_search({&lane}, problem, space, *searcher, settings);
    CHECK(out.siblings == 0);
    CHECK(lane.order.size() == 8);
  }
}

namespace {

// A strategy that proposes the rows with R = 4 in order and thinks long before each proposal
// but the first: the results of the first come in while it thinks about the second.
class SlowSearcher : public Searcher {
 public:
  static constexpr int kThinkMs = 300;
  using Searcher::Searcher;
  // One proposal at first, two in flight after it.
  size_t max_batch(size_t) const override { return proposed_ == 0 ? 1 : 2; }

 protected:
  std::optional<size_t> propose() override {
    if (proposed_++ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(kThinkMs));
    for (size_t i = 0; i < space_.size(); ++i) {
      if (!seen(i) && space_.config(i).at("R") == 4) return i;
    }
    return std::nullopt;
  }

 private:
  int proposed_ = 0;
};

// A device that takes kMeasureMs a measurement, every build done.
class SleepingLane : public Evaluator {
 public:
  static constexpr int kMeasureMs = 40;
  Result evaluate(const Problem& problem, const Configuration& config) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(kMeasureMs));
    order.push_back(config);
    Result r;
    r.config = config;
    r.time.runs = r.time.calls = 1;
    r.time.mean_ms = r.time.median_ms = 1.0;
    r.gflops = problem.flops() / 1e6;
    return r;
  }
  std::string description() const override { return "sleeping lane"; }
  std::vector<Configuration> order;
};

}  // namespace

TEST_CASE("runtime siblings reach the lanes while the strategy is still thinking",
          "[search][tuner][runtime]") {
  // The first proposal is measured while the strategy thinks about the second (300 ms); its
  // siblings are measured in that time, not after the strategy's next answer.
  const SearchSpace space = a_r_space(4, {1, 4, 8});
  SleepingLane lane;
  SlowSearcher searcher(space, 7);
  TuneSettings settings;
  settings.stop.max_evals = 2;
  settings.lookahead = 2;
  settings.propose_while_measuring = true;
  settings.runtime_parameters = {{"R", {}}};
  const auto out = run_search(lane, small_problem(), space, searcher, settings);
  CHECK(out.stop_reason == "reached 2 evaluations");
  const std::vector<Configuration> expected = {
      {{"A", 1}, {"R", 4}}, {{"A", 1}, {"R", 1}}, {{"A", 1}, {"R", 8}}, {{"A", 2}, {"R", 4}}};
  CHECK(lane.order == expected);
  CHECK(out.siblings == 2);
  // The strategy was told every result and never proposed a sibling.
  CHECK(searcher.history().size() == 4);
}

}  // namespace gemmtune_tests::search_tuning_test_tuner
