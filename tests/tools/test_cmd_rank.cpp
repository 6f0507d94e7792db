// SPDX-License-Identifier: Apache-2.0
// gemmtune rank as a user runs it, on tests/data/rank_h100_replay_sample.jsonl: 40 results of the
// H100 2048^3 replay (its 10 fastest and 30 others drawn with seed 1, 10 of which failed).
#include <fstream>

#include <catch2/catch.hpp>

#include "src/core/json_util.hpp"
#include "src/db/journal.hpp"
#include "src/select/rank_validation.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_rank {

using namespace gemmtune;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {

const std::string kSample = source_path("tests/data/rank_h100_replay_sample.jsonl");

std::vector<double> measured_ok() {
  std::vector<double> v;
  for (const auto& c : recorded_problems(read_journal(kSample)).at(0).configurations) {
    if (c.gflops > 0) v.push_back(c.gflops);
  }
  return v;
}

}  // namespace

TEST_CASE("rank scores the prior's head against the optimum and a random ranking", "[cli][rank]") {
  const auto r =
      run_gemmtune("rank --journal " + kSample + " --registers estimate --top 5,20 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["journals"].size() == 1);
  const auto& p = j["journals"][0];
  CHECK(p["profile"] == "sm_90 H100 SXM");
  CHECK(p["recorded"] == 40);
  CHECK(p["ranked"] == 30);
  CHECK(p["failed_left_out"] == 10);
  CHECK(p["registers"]["estimated"] == 30);
  const auto measured = measured_ok();
  REQUIRE(measured.size() == 30);
  CHECK(p["optimum"]["gflops"].get<double>() == Approx(40433.1).epsilon(1e-4));
  REQUIRE(p["top"].size() == 2);
  CHECK(p["top"][0]["k"] == 5);
  CHECK(p["top"][0]["random"].get<double>() == Approx(random_top_fraction(measured, 5)));
  CHECK(p["top"][1]["random"].get<double>() == Approx(random_top_fraction(measured, 20)));
  // On this sample the prior's first 5 hold a configuration within 5% of the optimum, where a
  // random five do not on average.
  CHECK(p["top"][0]["model"].get<double>() >= 0.95);
  CHECK(p["top"][0]["model"].get<double>() > p["top"][0]["random"].get<double>());
  CHECK(j["constants"]["spill_cost"].get<double>() > 0);

  const auto text = run_gemmtune("rank --journal " + kSample + " --registers estimate --show 3");
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out,
             Catch::Contains("ranked 30 of 40 recorded configurations, 10 failed left out"));
  CHECK_THAT(text.out, Catch::Contains("top   50:") && Catch::Contains("random ranking"));
  CHECK_THAT(text.out, Catch::Contains("#3 "));
  // Failures ranked as 0 when asked.
  const auto all =
      run_gemmtune("rank --journal " + kSample + " --registers estimate --include-failed --json");
  REQUIRE(all.exit_code == 0);
  CHECK(nlohmann::json::parse(all.out)["journals"][0]["ranked"] == 40);
}

TEST_CASE("rank with a resources file ranks what it holds with its counts", "[cli][rank]") {
  const auto dir = temp_dir("rank-resources");
  // Counts for the first six recorded configurations (made up for the test: 127 registers, the
  // first of them spilling 40 words).
  const auto rec = recorded_problems(read_journal(kSample)).at(0);
  {
    std::ofstream out(dir + "/resources.jsonl");
    for (size_t i = 0; i < 6; ++i) {
      out << nlohmann::json{{"kernel", "xgemm_fast"},
                            {"config", configuration_to_json(rec.configurations[i].config)},
                            {"registers", 127},
                            {"spills", i == 0 ? 40 : 0}}
                 .dump()
          << "\n";
    }
  }
  const auto r = run_gemmtune("rank --journal " + kSample + " --resources " + dir +
                              "/resources.jsonl --include-failed --json --show 6");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto p = nlohmann::json::parse(r.out)["journals"][0];
  CHECK(p["ranked"] == 6);
  CHECK(p["without_resources"] == 34);
  CHECK(p["registers"]["resources_file"] == 6);
  for (const auto& row : p["first"]) {
    CHECK(row["registers"] == 127);
    CHECK(row["registers_measured"] == true);
  }
  // The table's spills reach the prior.
  const auto spilled = configuration_to_json(rec.configurations[0].config);
  size_t spilling = 0;
  for (const auto& row : p["first"]) {
    if (row["config"] == spilled) CHECK(row["spills"] == 40);
    spilling += row["spills"].get<int64_t>() > 0;
  }
  CHECK(spilling == 1);
}

TEST_CASE("rank --fit fits the constants on the journal and ranks with them", "[cli][rank]") {
  const auto r = run_gemmtune("rank --journal " + kSample + " --registers estimate --fit");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("fitted on 30 measured configurations"));
  CHECK_THAT(r.out, Catch::Contains("top   20:"));
}

TEST_CASE("rank refuses bad input with one line and exit 2", "[cli][rank]") {
  const auto dir = temp_dir("rank-bad");
  auto r = run_gemmtune("rank --journal " + dir + "/absent.jsonl");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("absent.jsonl"));
  r = run_gemmtune("rank --journal " + kSample + " --top 0");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("top"));
  r = run_gemmtune("rank --journal " + kSample + " --registers guessed");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("registers"));
  r = run_gemmtune("rank --journal " + kSample + " --device-profile sm_99");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("sm_99"));
  std::ofstream(dir + "/res.jsonl") << "{\"kernel\": \"xgemm_fast\", \"config\": {\"MWG\": 64}, "
                                       "\"registers\": \"many\"}\n";
  r = run_gemmtune("rank --journal " + kSample + " --resources " + dir + "/res.jsonl");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("res.jsonl") && Catch::Contains("line 1"));
  // A resources file none of whose configurations was recorded leaves nothing to rank.
  std::ofstream(dir + "/other.jsonl") << "{\"kernel\": \"xgemm_fast\", \"config\": {\"MWG\": 64}, "
                                         "\"registers\": 64}\n";
  r = run_gemmtune("rank --journal " + kSample + " --resources " + dir + "/other.jsonl");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("nothing to rank"));
  // A journal with a header and no result.
  std::ofstream(dir + "/empty.jsonl")
      << read_text_file(kSample).substr(0, read_text_file(kSample).find('\n') + 1);
  r = run_gemmtune("rank --journal " + dir + "/empty.jsonl");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("no result"));
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}

}  // namespace gemmtune_tests::tools_test_cmd_rank
