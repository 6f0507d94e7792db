// SPDX-License-Identifier: Apache-2.0
// The settings a search job's journal records, and how a resumed job takes back the ones not
// given again (older journals' spellings included).
#include <catch2/catch.hpp>

#include "search/job/job_parts.hpp"
#include "src/core/error.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_job_test_job_settings {

using namespace gemmtune;

namespace {

// A job with every recorded setting away from its default.
SearchJobOptions recorded_job() {
  SearchJobOptions a;
  a.kernel = "xgemm_fast";
  a.space = "ci";
  a.strategy = "anneal";
  a.strategy_options = {"anneal.t0=2"};
  a.max_evals = 40;
  a.time_budget_s = 30;
  a.seed = 9;
  a.problem.order = Order::kColMajor;
  a.problem.trans_a = true;
  a.problem.precision = Precision::kFP16Acc32;
  a.problem.batch = 4;
  a.problem.batch_layout = BatchLayout::kOffsets;
  a.problem.epilogue = parse_epilogue("bias,relu");
  a.problem.alpha = 2;
  a.problem.beta = 0.5;
  a.device = "pthread";
  a.db = "tuned.json";
  a.refine = true;
  a.eval_timeout_s = 30;
  a.shard = "1/3";
  return a;
}

const std::vector<Shape> kShapes = {{64, 32, 16}, {128, 128, 128}};

}  // namespace

TEST_CASE("a resumed job takes back the journal's settings that were not given again",
          "[search][job][resume]") {
  const nlohmann::json settings = settings_json(recorded_job(), kShapes);
  CHECK(settings.at("layout") == "TN");
  CHECK(settings.at("order") == "col");
  CHECK(settings.at("precision") == "16acc32");
  CHECK(settings.at("batch_layout") == "offsets");

  SearchJobOptions resumed;
  resumed.max_evals = 80;
  resumed.given = {"max-evals"};
  apply_journal_settings(resumed, JsonReader(settings));
  CHECK(resumed.max_evals == 80);  // given again: this command line's
  CHECK(resumed.kernel == "xgemm_fast");
  CHECK(resumed.strategy == "anneal");
  CHECK(resumed.seed == 9);
  CHECK(resumed.shard == "1/3");
  CHECK(resumed.shapes == kShapes);
  const Problem p = base_problem(resumed);
  CHECK(p.layout() == "TN");
  CHECK(p.order == Order::kColMajor);
  CHECK(p.precision == Precision::kFP16Acc32);
  CHECK(p.batch == 4);
  CHECK(p.batch_layout == BatchLayout::kOffsets);
  CHECK(to_string(p.epilogue) == "bias,relu");
  CHECK(p.alpha == 2);
  CHECK(p.beta == 0.5);
  // Recorded again, the settings are the journal's but for what was given.
  nlohmann::json expected = settings;
  expected["max_evals"] = 80;
  CHECK(settings_json(resumed, kShapes) == expected);
}

TEST_CASE("shapes and problem settings given again win over the journal's",
          "[search][job][resume]") {
  const nlohmann::json settings = settings_json(recorded_job(), kShapes);
  SearchJobOptions resumed;
  resumed.shapes = {{8, 8, 8}};
  resumed.problem.precision = Precision::kFP32;
  resumed.given = {"shapes", "precision"};
  apply_journal_settings(resumed, JsonReader(settings));
  CHECK(resumed.shapes == std::vector<Shape>{{8, 8, 8}});
  CHECK(resumed.problem.precision == Precision::kFP32);
  CHECK(resumed.problem.batch == 4);

  // A workload names the shapes: the journal's list is not taken then.
  nlohmann::json with_workload = settings;
  with_workload["workload"] = "w.txt";
  SearchJobOptions workload;
  apply_journal_settings(workload, JsonReader(with_workload));
  CHECK(workload.workload == "w.txt");
  CHECK(workload.shapes.empty());
}

TEST_CASE("older journals' spellings read back, and bad recorded values are refused",
          "[search][job][resume]") {
  nlohmann::json settings = settings_json(recorded_job(), kShapes);
  // Journals once kept the spelling given on the command line.
  settings["order"] = "col-major";
  settings["precision"] = "fp32";
  settings["epilogue"] = "relu,bias";
  SearchJobOptions resumed;
  apply_journal_settings(resumed, JsonReader(settings));
  CHECK(resumed.problem.order == Order::kColMajor);
  CHECK(resumed.problem.precision == Precision::kFP32);
  CHECK(to_string(resumed.problem.epilogue) == "bias,relu");

  nlohmann::json bad = settings;
  bad["batch_layout"] = "pointers";
  SearchJobOptions a;
  CHECK_THROWS_WITH(apply_journal_settings(a, JsonReader(bad)), Catch::Contains("pointers"));
  bad = settings;
  bad["batch"] = 0;
  SearchJobOptions b;
  apply_journal_settings(b, JsonReader(bad));
  CHECK_THROWS_WITH(base_problem(b), Catch::Contains("--batch must be at least 1"));
}

}  // namespace gemmtune_tests::search_job_test_job_settings
