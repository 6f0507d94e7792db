// SPDX-License-Identifier: Apache-2.0
// The search job through its public entry, run_search_job, on a recorded space: what it writes
// and reports, a resume that measures nothing twice, a workload spread over two shapes, and the
// settings it refuses.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "search/job/search_job.hpp"
#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_job_test_search_job {

using namespace gemmtune;

namespace {

constexpr uint64_t kReplaySeed = 5;

// What a `written` report said, kept after the call.
struct Written {
  std::string kernel, output, journal, database;
  size_t measured = 0;
  std::vector<TuneOutcome> outcomes;
};

SearchJobReports recording(std::vector<Written>& into) {
  SearchJobReports reports;
  reports.written = [&into](const SearchWritten& w) {
    Written r{w.kernel, w.output, w.journal, w.database, w.measured, {}};
    for (const auto& o : w.outcomes) r.outcomes.push_back(o.outcome);
    into.push_back(r);
  };
  return reports;
}

SearchJobOptions replay_job(const std::string& dir, const std::vector<Shape>& shapes) {
  SearchJobOptions o;
  o.replay = test::write_xgemm_cpu_replay(dir + "/replay.jsonl", shapes, kReplaySeed);
  o.eval.templates_dir = test::source_path("kernel_templates");
  o.devices_dir = test::source_path("devices");
  o.strategy = "random";
  o.seed = 3;
  o.output = dir + "/out.json";
  return o;
}

}  // namespace

TEST_CASE(
    "the search job tunes a replay, reports what it wrote, and resumes without measuring "
    "twice",
    "[search][job][resume]") {
  const std::string dir = test::temp_dir("job-replay");
  SearchJobOptions o = replay_job(dir, {{256, 256, 256}});
  o.max_evals = 5;
  o.db = dir + "/tuned.json";
  std::vector<Written> written;
  run_search_job(o, recording(written));
  REQUIRE(written.size() == 1);
  const Written first = written[0];
  CHECK(first.kernel == "xgemm");
  CHECK(first.output == dir + "/out.json");
  CHECK(first.journal == dir + "/out.journal.jsonl");
  CHECK(first.database == dir + "/tuned.json");
  CHECK(first.measured == 5);
  REQUIRE(first.outcomes.size() == 1);
  REQUIRE(first.outcomes[0].best);
  CHECK(test::count_journal_results(first.journal) == 5);
  const auto results = read_json_file(first.output);
  CHECK(results.at("format") == "gemmtune-search");
  CHECK(results.at("results").at(0).at("evaluations") == 5);
  CHECK(std::filesystem::exists(dir + "/tuned-report.md"));

  // Resumed with a larger budget: the journal's settings (replay, strategy, output) apply, the
  // five results count as done and three more are measured.
  SearchJobOptions again;
  again.resume = first.journal;
  again.max_evals = 8;
  again.given = {"max-evals"};
  run_search_job(again, recording(written));
  REQUIRE(written.size() == 2);
  const TuneOutcome& resumed = written[1].outcomes.at(0);
  CHECK(resumed.resumed == 5);
  CHECK(resumed.measured == 3);
  CHECK(test::count_journal_results(first.journal) == 8);
}

TEST_CASE("the search job spreads a workload's budget and starts each shape from the others' best",
          "[search][job]") {
  const std::string dir = test::temp_dir("job-workload");
  SearchJobOptions o = replay_job(dir, {{256, 256, 256}, {128, 128, 128}});
  o.no_db = true;
  o.workload = dir + "/workload.txt";
  write_file_atomic(o.workload, "128x128x128 1\n256x256x256 3\n");
  o.max_evals = 12;
  std::vector<Written> written;
  run_search_job(o, recording(written));
  REQUIRE(written.size() == 1);
  CHECK(written[0].database.empty());
  const auto& outcomes = written[0].outcomes;
  REQUIRE(outcomes.size() == 2);
  // Heaviest first: 256^3 gets three quarters of the budget.
  CHECK(outcomes[0].evaluations == 9);
  CHECK(outcomes[1].evaluations == 3);
  CHECK(outcomes[1].warm_started == 1);
}

TEST_CASE("the search job refuses what it cannot do with one error", "[search][job]") {
  const std::string dir = test::temp_dir("job-refused");
  SearchJobOptions o = replay_job(dir, {{256, 256, 256}});
  o.max_evals = 2;

  SearchJobOptions auto_kernel = o;
  auto_kernel.kernel = "auto";
  CHECK_THROWS_WITH(run_search_job(auto_kernel), Catch::Contains("a replay holds one template"));

  SearchJobOptions other_shape = o;
  other_shape.shapes = {{64, 64, 64}};
  CHECK_THROWS_AS(run_search_job(other_shape), Error);

  SearchJobOptions refine = o;
  refine.refine = true;
  refine.refine_evals = 1;
  CHECK_THROWS_WITH(run_search_job(refine),
                    Catch::Contains("is less than one A/B comparison needs"));

  SearchJobOptions strategy_option = o;
  strategy_option.strategy_options = {"bayes.batch=4"};
  CHECK_THROWS_WITH(run_search_job(strategy_option),
                    Catch::Contains("is for strategy bayes, not random"));
  // Nothing was written by a refused job.
  CHECK_FALSE(std::filesystem::exists(dir + "/out.journal.jsonl"));
}

}  // namespace gemmtune_tests::search_job_test_search_job
