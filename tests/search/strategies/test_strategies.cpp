// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "search/strategies/strategies.hpp"
#include "search/tuning/strategy_eval.hpp"
#include "search/tuning/tuner.hpp"
#include "src/core/error.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_strategies_test_strategies {

using namespace gemmtune;

namespace {

// A synthetic replay over the xgemm `cpu` space (a few hundred configurations, some failing).
const Journal& small_journal() {
  static const Journal j = [] {
    static const KernelSpec spec =
        KernelSpec::load(test::source_path("kernel_templates/xgemm.json"));
    ParamSpace space(spec, "cpu", DeviceLimits{}, Context{{"ELEM_BYTES", 4}});
    Problem p;
    p.shape = {256, 256, 256};
    return test::synthetic_gemm_journal(space, p, 5);
  }();
  return j;
}

std::vector<size_t> run_sequence(const std::string& strategy, uint64_t seed, int evals,
                                 const OptionValues& options = {}) {
  ReplayEvaluator replay(small_journal());
  const Problem problem = replay.problems().front();
  const SearchSpace space = SearchSpace::from_configurations(replay.configurations(problem));
  auto searcher = make_searcher(strategy, space, seed, options);
  TuneSettings settings;
  settings.stop.max_evals = evals;
  settings.lookahead = 2;
  run_search(replay, problem, space, *searcher, settings);
  std::vector<size_t> seq;
  for (const auto& o : searcher->history()) seq.push_back(o.index);
  return seq;
}

}  // namespace

TEST_CASE("strategy registry and options", "[search][strategy]") {
  for (const char* name : {"exhaustive", "random", "bayes", "anneal"}) {
    CHECK(find_strategy(name).name == name);
  }
  CHECK_THROWS_WITH(find_strategy("genetic"), Catch::Contains("unknown strategy 'genetic'"));
  auto opts = parse_strategy_options({"bayes.acquisition=lcb", "bayes.kappa=3"});
  CHECK(opts["bayes"]["acquisition"] == "lcb");
  CHECK_THROWS_WITH(parse_strategy_options({"bayes.acquisitoin=lcb"}),
                    Catch::Contains("has no option 'acquisitoin'"));
  CHECK_THROWS_WITH(parse_strategy_options({"bayes=3"}), Catch::Contains("STRATEGY.NAME=VALUE"));
  CHECK_THROWS_WITH(parse_strategy_options({"nope.x=1"}), Catch::Contains("unknown strategy"));
  // A bad value is reported when the strategy reads it.
  const SearchSpace space = SearchSpace::from_configurations({{{"A", 1}}, {{"A", 2}}});
  CHECK_THROWS_WITH(make_searcher("bayes", space, 1, {{"acquisition", "ucb"}}),
                    Catch::Contains("bayes.acquisition=ucb"));
  CHECK_THROWS_WITH(make_searcher("anneal", space, 1, {{"cooling", "abc"}}),
                    Catch::Contains("anneal.cooling=abc"));
}

TEST_CASE("same seed, same sequence, and another seed, another sequence", "[search][strategy]") {
  for (const char* name : {"random", "bayes", "anneal", "exhaustive"}) {
    INFO(name);
    const int evals = std::string(name) == "bayes" ? 25 : 40;
    const auto a = run_sequence(name, 7, evals);
    const auto b = run_sequence(name, 7, evals);
    REQUIRE(a.size() == size_t(evals));
    CHECK(a == b);
    if (std::string(name) != "exhaustive") CHECK(run_sequence(name, 8, evals) != a);
    CHECK(std::set<size_t>(a.begin(), a.end()).size() == a.size());  // no repeats
  }
  const auto shuffled = run_sequence("exhaustive", 3, 30, {{"order", "shuffled"}});
  CHECK(shuffled != run_sequence("exhaustive", 3, 30));
}

TEST_CASE("every strategy finds the optimum of a small recorded space", "[search][strategy]") {
  ReplayEvaluator replay(small_journal());
  const Problem problem = replay.problems().front();
  const SearchSpace space = SearchSpace::from_configurations(replay.configurations(problem));
  const auto best = replay.best(problem);
  REQUIRE(best);
  for (const char* name : {"exhaustive", "random", "anneal", "bayes"}) {
    INFO(name);
    auto searcher = make_searcher(name, space, 1, {});
    TuneSettings settings;
    settings.stop.max_evals = int64_t(space.size());
    const auto out = run_search(replay, problem, space, *searcher, settings);
    REQUIRE(out.best);
    CHECK(out.best->config == best->config);
    // Nothing measured twice, nothing skipped: the whole space was seen.
    CHECK(out.evaluations == space.size());
    CHECK(searcher->unseen_count() == 0);
    CHECK(out.failed > 0);  // the failures in the recording did not stop the search
  }
}

TEST_CASE("model-based and local strategies beat random on a small space", "[search][strategy]") {
  ReplayEvaluator replay(small_journal());
  const Problem problem = replay.problems().front();
  StrategyEvalSettings s;
  s.strategies = {"bayes", "anneal", "random"};
  s.seeds = 8;
  s.max_evals = 40;
  s.budgets = {20, 40};
  s.threads = 2;
  const auto report = evaluate_strategies(replay, problem, s);
  REQUIRE(report.strategies.size() == 3);
  const auto& bayes = report.strategies[0];
  const auto& random = report.strategies[2];
  CHECK(bayes.budgets[1].mean_fraction > random.budgets[1].mean_fraction);
  CHECK(bayes.budgets[1].mean_fraction >= 0.9);
}

TEST_CASE("budgets are respected", "[search][budget]") {
  ReplayEvaluator replay(small_journal());
  const Problem problem = replay.problems().front();
  const SearchSpace space = SearchSpace::from_configurations(replay.configurations(problem));
  SECTION("max evaluations") {
    auto searcher = make_searcher("random", space, 1, {});
    TuneSettings settings;
    settings.stop.max_evals = 13;
    settings.lookahead = 4;
    const auto out = run_search(replay, problem, space, *searcher, settings);
    CHECK(out.evaluations == 13);
    CHECK(out.measured == 13);
    CHECK(searcher->history().size() == 13);
    CHECK(out.stop_reason == "reached 13 evaluations");
  }
  SECTION("fraction of the space") {
    auto searcher = make_searcher("anneal", space, 1, {});
    TuneSettings settings;
    settings.stop.space_fraction = 0.1;
    const auto out = run_search(replay, problem, space, *searcher, settings);
    CHECK(out.evaluations == size_t(std::ceil(0.1 * space.size())));
  }
  SECTION("time budget") {
    ReplayEvaluator slow(small_journal(), 20.0);
    auto searcher = make_searcher("random", space, 1, {});
    TuneSettings settings;
    settings.stop.time_budget_s = 0.3;
    const auto out = run_search(slow, problem, space, *searcher, settings);
    CHECK(out.stop_reason == "time budget spent");
    CHECK(out.evaluations >= 5);
    CHECK(out.evaluations <= 16);
    CHECK(out.elapsed_s < 0.3 + 0.2);
  }
  SECTION("any of several limits: the first reached stops") {
    auto searcher = make_searcher("random", space, 1, {});
    TuneSettings settings;
    settings.stop.max_evals = 1000;
    settings.stop.space_fraction = 0.05;
    const auto out = run_search(replay, problem, space, *searcher, settings);
    CHECK(out.evaluations == size_t(std::ceil(0.05 * space.size())));
  }
}

TEST_CASE("known results are told, never measured again", "[search][resume]") {
  ReplayEvaluator replay(small_journal());
  const Problem problem = replay.problems().front();
  const SearchSpace space = SearchSpace::from_configurations(replay.configurations(problem));

  // A first run interrupted after 12 evaluations...
  std::vector<Result> first;
  {
    auto searcher = make_searcher("bayes", space, 4, {});
    TuneSettings settings;
    settings.stop.max_evals = 12;
    run_search(replay, problem, space, *searcher, settings);
    for (const auto& o : searcher->history()) {
      first.push_back(replay.evaluate(problem, space.config(o.index)));
    }
  }
  // ...continued to 30 with those 12 known.
  class Recording : public Evaluator {
   public:
    explicit Recording(Evaluator& inner) : inner_(inner) {}
    Result evaluate(const Problem& p, const Configuration& c) override {
      seen.push_back(to_string(c));
      return inner_.evaluate(p, c);
    }
    std::string description() const override { return "recording"; }
    std::vector<std::string> seen;

   private:
    Evaluator& inner_;
  } recording(replay);
  for (const char* name : {"bayes", "random", "anneal", "exhaustive"}) {
    INFO(name);
    recording.seen.clear();
    auto searcher = make_searcher(name, space, 4, {});
    TuneSettings settings;
    settings.stop.max_evals = 30;
    settings.known = first;
    const auto out = run_search(recording, problem, space, *searcher, settings);
    CHECK(out.resumed == 12);
    CHECK(out.measured == 18);
    CHECK(out.evaluations == 30);
    std::set<std::string> measured(recording.seen.begin(), recording.seen.end());
    CHECK(measured.size() == 18);
    for (const auto& r : first) CHECK(measured.count(to_string(r.config)) == 0);
  }
}

}  // namespace gemmtune_tests::search_strategies_test_strategies
