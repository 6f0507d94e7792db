// SPDX-License-Identifier: Apache-2.0
// The options the commands share (tools/common_options.cpp) through the binary: global options
// after the subcommand, numbers refused at parse time (one line, exit 2), problems too large for
// the kernels' indices, and the problem group on ab (--batch, --epilogue).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_common_options {

using gemmtune::test::line_count;
using gemmtune::test::run_gemmtune;

TEST_CASE("global options stand after the subcommand as before it", "[cli][options]") {
  auto r = run_gemmtune("space --kernel xgemm --json -q");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out).at("kernel") == "xgemm");

  r = run_gemmtune("space --kernel xgemm --log-level loud");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("loud"));
  CHECK(line_count(r.err) == 1);

  r = run_gemmtune("devices --devices /nonexistent-gemmtune");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("/nonexistent-gemmtune"));

  r = run_gemmtune("space --kernel nope --templates /nonexistent-gemmtune-templates");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("/nonexistent-gemmtune-templates"));

  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  r = run_gemmtune("run -m 16 -n 16 -k 16 --min-runs 1 --min-time-ms 0 --warmup 0 -v");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("[debug]"));
}

TEST_CASE("bad numbers are refused while parsing, in one line with exit 2", "[cli][options]") {
  // Each case: the arguments and what the one-line error must name.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"search -s 64 --max-evals -5", "--max-evals"},
      {"search -s 64 --max-evals 0", "--max-evals"},
      {"search -s 64 --time-budget -1", "--time-budget"},
      {"search -s 64 --time-budget nan", "--time-budget"},
      {"search -s 64 --space-fraction nan", "--space-fraction"},
      {"search -s 64 --eval-timeout 0", "--eval-timeout"},
      {"search -s 64 --compile-threads 0", "--compile-threads"},
      {"search -s 64 --lookahead -1", "--lookahead"},
      {"search -s 64 --seed -1", "--seed"},
      {"search -s 64 --alpha nan", "--alpha"},
      {"search -s 64 --batch 0", "--batch"},
      {"run --alpha nan", "--alpha"},
      {"run --beta inf", "--beta"},
      {"run -m 99999999999999999999", "-m"},
      {"run -m 0", "-m"},
      {"run --warmup -1", "--warmup"},
      {"run --min-runs 0", "--min-runs"},
      {"run --min-time-ms nan", "--min-time-ms"},
      {"run --seed 99999999999999999999999", "--seed"},
      {"ab -b KWI=2 -c KWI=4 -s 64 --beta -inf", "--beta"},
      {"ab -b KWI=2 -c KWI=4 -s 64 --min-pairs 0", "--min-pairs"},
      {"refine -b KWI=2 -s 64 --max-evals -1", "--max-evals"},
      {"compile --compile-threads 0", "--compile-threads"},
      {"bench-suite --reps 0", "--reps"},
      {"bench-suite --batch -2", "--batch"},
      {"bench x.json --data-seed -3", "seed: '-3'"},
      {"db lookup x.json -m 8 -n 8 -k 99999999999999999999", "-k"},
  };
  for (const auto& [args, needle] : cases) {
    INFO(args);
    const auto r = run_gemmtune(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(needle));
    CHECK(line_count(r.err) == 1);
  }
}

TEST_CASE("problems beyond the kernels' 32-bit indices are bad input", "[cli][options]") {
  const std::string dir = gemmtune::test::temp_dir("cli-too-large");
  const std::vector<std::string> cases = {
      "run -m 100000 -n 100000 -k 8",
      "run -m 1000 -n 1000 -k 8 --batch 3000",
      "ab -b KWI=2 -c KWI=4 -s 100000x8x100000",
      "search -s 8x100000x100000 --no-db -o " + dir + "/s.json",
  };
  for (const auto& args : cases) {
    INFO(args);
    const auto r = run_gemmtune(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("2^31"));
    CHECK(line_count(r.err) == 1);
  }
}

TEST_CASE("ab takes the batch and the epilogue of its problem", "[cli][options][ab][pocl]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const auto r = run_gemmtune(
      "ab -s 64x64x64 --kernel xgemm_fast --batch 2 --batch-layout offsets --epilogue relu,bias "
      "--baseline KWI=2 --change KWI=1 --min-pairs 3 --max-pairs 3 --min-runs 1 "
      "--min-time-ms 1 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("problem").at("batch") == 2);
  CHECK(j.at("problem").at("batch_layout") == "offsets");
  CHECK(j.at("problem").at("epilogue") == "bias,relu");
  CHECK(j.at("baseline").at("status") == "ok");
}

}  // namespace gemmtune_tests::tools_test_common_options
