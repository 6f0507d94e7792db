// SPDX-License-Identifier: Apache-2.0
// The CLI's error paths across commands: one line naming what was wrong, a non-zero exit, never
// a crash; and the version and help options.
#include <catch2/catch.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli {

using gemmtune::test::line_count;
using gemmtune::test::run_gemmtune;

TEST_CASE("CLI errors are one line with a non-zero exit", "[cli]") {
  SECTION("no subcommand") {
    auto r = run_gemmtune("");
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
  }
  SECTION("unknown subcommand") {
    auto r = run_gemmtune("frobnicate");
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("frobnicate"));
  }
  SECTION("bad log level") {
    auto r = run_gemmtune("--log-level loud devices");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("loud"));
    CHECK(line_count(r.err) == 1);
  }
  SECTION("missing devices folder") {
    auto r = run_gemmtune("--devices /nonexistent-gemmtune devices");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("/nonexistent-gemmtune"));
    CHECK(line_count(r.err) == 1);
  }
  SECTION("malformed profile folder") {
    const auto dir = gemmtune::test::temp_dir("cli-profiles");
    std::system(("echo '{\"name\": 1}' > " + dir + "/x.json").c_str());
    auto r = run_gemmtune("--devices " + dir + " devices");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("x.json") && Catch::Contains("'name'"));
    CHECK(line_count(r.err) == 1);
  }
}

TEST_CASE("version and help options succeed", "[cli]") {
  CHECK(run_gemmtune("--version").exit_code == 0);
  auto h = run_gemmtune("--help");
  CHECK(h.exit_code == 0);
  CHECK_THAT(h.out, Catch::Contains("devices"));
}

}  // namespace gemmtune_tests::tools_test_cli
