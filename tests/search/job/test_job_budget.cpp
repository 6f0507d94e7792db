// SPDX-License-Identifier: Apache-2.0
// How the search job shares its budget: by weight over a workload's shapes (heaviest first), the
// same for every shape otherwise, and how it splits over shards.
#include <catch2/catch.hpp>

#include "search/job/job_parts.hpp"
#include "src/core/error.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_job_test_job_budget {

using namespace gemmtune;

namespace {

Problem square(int64_t n) {
  Problem p;
  p.shape = {n, n, n};
  return p;
}

}  // namespace

TEST_CASE("a workload's budget is spread by weight, heaviest shape first", "[search][job]") {
  const std::vector<WorkloadShape> workload = {{{64, 64, 64}, 1}, {{512, 512, 512}, 3}};
  SearchJobOptions a;
  a.workload = "workload.txt";  // named only: its shapes are passed in, already read
  a.max_evals = 100;
  std::vector<Problem> problems = {square(64), square(512)};
  auto stops = shape_budgets(a, workload, problems);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].shape == Shape{512, 512, 512});
  REQUIRE(stops.size() == 2);
  CHECK(stops[0].max_evals == 75);
  CHECK(stops[1].max_evals == 25);

  // Without a budget, 100 evaluations per shape of the workload, spread the same way.
  a.max_evals = 0;
  problems = {square(64), square(512)};
  stops = shape_budgets(a, workload, problems);
  CHECK(a.max_evals == 200);
  CHECK(stops[0].max_evals == 150);
  CHECK(stops[1].max_evals == 50);

  // A shard keeps its own shapes, and the whole budget goes to them.
  a.max_evals = 0;
  problems = {square(64)};
  stops = shape_budgets(a, workload, problems);
  REQUIRE(stops.size() == 1);
  CHECK(stops[0].max_evals == 100);

  // A time budget is spread too; a shape gets no evaluation limit then.
  a.max_evals = 0;
  a.time_budget_s = 40;
  problems = {square(64), square(512)};
  stops = shape_budgets(a, workload, problems);
  CHECK(stops[0].time_budget_s == Approx(30));
  CHECK(stops[0].max_evals == 0);
}

TEST_CASE("without a workload every shape gets the same budget, 100 evaluations by default",
          "[search][job]") {
  SearchJobOptions a;
  std::vector<Problem> problems = {square(64), square(128), square(256)};
  auto stops = shape_budgets(a, {}, problems);
  REQUIRE(stops.size() == 3);
  CHECK(stops[2].max_evals == 100);
  CHECK(a.max_evals == 100);  // as the journal then records it

  // An exhaustive search without a budget measures the whole space.
  SearchJobOptions exhaustive;
  exhaustive.strategy = "exhaustive";
  stops = shape_budgets(exhaustive, {}, problems);
  CHECK(stops[0].max_evals == 0);
  CHECK(stops[0].eval_limit(1234) == 1234);
}

TEST_CASE("model-based strategies shard by shape, the others by configuration",
          "[search][job][shard]") {
  CHECK(shards_split_space("exhaustive"));
  CHECK(shards_split_space("random"));
  CHECK_FALSE(shards_split_space("bayes"));
  CHECK_FALSE(shards_split_space("anneal"));

  const std::vector<Problem> problems = {square(64), square(128), square(256)};
  const auto second = shard_problems(problems, Shard::parse("1/2"));
  REQUIRE(second.size() == 1);
  CHECK(second[0].shape == Shape{128, 128, 128});
  CHECK(shard_problems(problems, Shard::parse("0/2")).size() == 2);
  // More shards than shapes leave one without work: refused, naming the most that can be used.
  CHECK_THROWS_WITH(shard_problems(problems, Shard::parse("3/4")),
                    Catch::Contains("--shard 3/4") && Catch::Contains("at most 3 shards"));
}

}  // namespace gemmtune_tests::search_job_test_job_budget
