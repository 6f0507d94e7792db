// SPDX-License-Identifier: Apache-2.0
// gemmtune run and search with xgemm_skinny from the command line: one verified configuration,
// and a short search of a vector-matrix shape whose results are all verified.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_skinny {

using gemmtune::test::run_gemmtune;

TEST_CASE("run measures and verifies an xgemm_skinny configuration", "[device][cli][skinny]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const auto r = run_gemmtune(
      "run --kernel xgemm_skinny -m 3 -n 77 -k 45 --layout NT --alpha 2 --beta -1 "
      "--params SIDE=1,WGJ=4,WGK=8,VW=2 --min-runs 1 --min-time-ms 0 --cache-dir none --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["status"] == "ok");
  CHECK(j["gflops"].get<double>() > 0);
  CHECK(j["max_error"].get<double>() <= j["tolerance"].get<double>());
  CHECK(j["config"]["SIDE"] == 1);
  CHECK(j["config"]["MB"] == 4);  // a default
}

TEST_CASE("a short xgemm_skinny search of a vector-matrix shape verifies its results",
          "[device][cli][search][skinny]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string dir = gemmtune::test::temp_dir("cli-search-skinny");
  const auto r = run_gemmtune(
      "search --kernel xgemm_skinny -s 1x512x512 --max-evals 4 --fresh --no-db "
      "--cache-dir none --json -o " +
      dir + "/s.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& result = j.at("results").at(0);
  CHECK(result.at("evaluations") == 4);
  CHECK(result.at("failed") == 0);
  const auto& best = result.at("best");
  CHECK(best.at("status") == "ok");
  CHECK(best.at("max_error").get<double>() <= best.at("tolerance").get<double>());
}

TEST_CASE("xgemm_skinny splits K over work-groups and adds the parts", "[device][cli][skinny]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  // K = 333 in 3 parts of whole vectors leaves a short last part; both sides, both contiguous
  // dimensions of the streamed operand (NN and TT), alpha and beta applied once by the reduction:
  // the reduce kernel's (KREDUCE=0, two launches) or the last work-group's (KREDUCE=1, one).
  for (const std::string kreduce : {"0", "1"}) {
    for (const std::string side : {"0", "1"}) {
      for (const std::string layout : {"NN", "TT"}) {
        const std::string shape = side == "0" ? "-m 3 -n 77" : "-m 77 -n 3";
        const auto j = gemmtune::test::verified_kernel_run(
            "xgemm_skinny", "SIDE=" + side + ",WGJ=4,WGK=8,VW=4,SPLITK=3,KREDUCE=" + kreduce,
            shape + " -k 333 --layout " + layout + " --alpha 2 --beta -1");
        CHECK(j["config"]["SPLITK"] == 3);
        CHECK(j["launches"] == (kreduce == "1" ? 1 : 2));
      }
    }
  }
}

}  // namespace gemmtune_tests::tools_test_cmd_run_skinny
