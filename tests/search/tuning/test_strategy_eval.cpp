// SPDX-License-Identifier: Apache-2.0
// Hidden benchmarks of the strategies on the SYNTHETIC GPU-like space (run by hand with the
// [.tune] tag; not part of the suite because they take minutes).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "search/tuning/strategy_eval.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_tuning_test_strategy_eval {

using namespace gemmtune;

namespace {

void print(const StrategyEvalReport& r) {
  std::cout << fmt::format("space {} ({} valid), optimum {:.4f} ms\n", r.space_size, r.valid,
                           r.optimum_ms);
  for (const auto& e : r.strategies) {
    std::cout << fmt::format("{:<8} {:6.1f}s", e.strategy, e.seconds);
    for (const auto& t : e.thresholds) {
      std::cout << fmt::format("  {:.0f}%: {} [{}-{}] {:.0f}%", t.threshold * 100, t.median, t.q1,
                               t.q3, t.reached * 100);
    }
    std::cout << "\n        ";
    for (const auto& b : e.budgets) {
      std::cout << fmt::format("  N={}: {:.3f} ({:.0f}%)", b.budget, b.mean_fraction,
                               b.reached_95 * 100);
    }
    std::cout << "\n";
  }
}

}  // namespace

TEST_CASE("strategies on the synthetic GPU-like space", "[.tune]") {
  const Journal j = test::synthetic_xgemm_gpu_journal(1);
  ReplayEvaluator replay(j);
  StrategyEvalSettings s;
  const char* strategies = std::getenv("TUNE_STRATEGIES");
  s.strategies.clear();
  std::string list = strategies ? strategies : "bayes,random,anneal";
  size_t pos = 0;
  while (pos != std::string::npos) {
    const size_t comma = list.find(',', pos);
    s.strategies.push_back(list.substr(pos, comma == std::string::npos ? comma : comma - pos));
    pos = comma == std::string::npos ? comma : comma + 1;
  }
  static const KernelSpec spec = KernelSpec::load(test::source_path("kernel_templates/xgemm.json"));
  if (!std::getenv("TUNE_NO_FEATURES")) s.spec = &spec;
  s.seeds = std::getenv("TUNE_SEEDS") ? std::atoi(std::getenv("TUNE_SEEDS")) : 20;
  s.max_evals = 100;
  s.threads = 2;
  if (const char* opts = std::getenv("TUNE_OPTIONS")) {
    std::vector<std::string> items;
    std::string o = opts;
    size_t p = 0;
    while (p != std::string::npos) {
      const size_t sp = o.find(' ', p);
      items.push_back(o.substr(p, sp == std::string::npos ? sp : sp - p));
      p = sp == std::string::npos ? sp : sp + 1;
    }
    s.options = parse_strategy_options(items);
  }
  const StrategyEvalReport report = evaluate_strategies(replay, replay.problems().front(), s);
  print(report);
  // The figures printed mean something only if the comparison ran as asked: every strategy for
  // every seed, each trajectory a fraction of an optimum that lies in the space.
  REQUIRE(report.strategies.size() == s.strategies.size());
  CHECK(report.valid > 0);
  CHECK(report.optimum_ms > 0);
  for (const auto& e : report.strategies) {
    INFO(e.strategy);
    CHECK(e.trajectories.size() == static_cast<size_t>(s.seeds));
    for (const auto& trajectory : e.trajectories) {
      // 0 until the first valid measurement, then optimum / best so far: never down, never past 1.
      REQUIRE(!trajectory.empty());
      CHECK(trajectory.back() > 0);
      CHECK(std::is_sorted(trajectory.begin(), trajectory.end()));
      CHECK((trajectory.front() >= 0 && trajectory.back() <= 1));
    }
    for (const auto& b : e.budgets) {
      CHECK((b.reached_95 >= 0 && b.reached_95 <= 1));
    }
  }
  if (const char* out = std::getenv("TUNE_WRITE_REPLAY")) {
    JournalWriter w(out);
    w.write_header(j.headers.front());
    for (const auto& e : j.entries) w.append(e.kernel, e.problem, e.result, 0);
  }
}

}  // namespace gemmtune_tests::search_tuning_test_strategy_eval
