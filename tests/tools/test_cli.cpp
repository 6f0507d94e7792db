// The CLI's error paths: one line naming what was wrong, a non-zero exit, never a crash.
#include <catch2/catch.hpp>

#include <algorithm>

#include "tests/test_support.hpp"

using gemmtune::test::run_gemmtune;

namespace {
int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}
}  // namespace

TEST_CASE("gemmtune devices lists PoCL with the CPU profile", "[cli]") {
  auto r = run_gemmtune("devices");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("pthread") && Catch::Contains("cpu-generic"));
  auto j = run_gemmtune("devices --json");
  REQUIRE(j.exit_code == 0);
  CHECK_THAT(j.out, Catch::Contains("\"profile\": \"cpu-generic\""));
}

TEST_CASE("CLI errors are one line with a non-zero exit", "[cli]") {
  SECTION("no subcommand") {
    auto r = run_gemmtune("");
    CHECK(r.exit_code == 2);
    CHECK(lines(r.err) == 1);
  }
  SECTION("unknown subcommand") {
    auto r = run_gemmtune("frobnicate");
    CHECK(r.exit_code == 2);
    CHECK(lines(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("frobnicate"));
  }
  SECTION("bad log level") {
    auto r = run_gemmtune("--log-level loud devices");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("loud"));
    CHECK(lines(r.err) == 1);
  }
  SECTION("missing devices folder") {
    auto r = run_gemmtune("--devices /nonexistent-gemmtune devices");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("/nonexistent-gemmtune"));
    CHECK(lines(r.err) == 1);
  }
  SECTION("malformed profile folder") {
    const auto dir = gemmtune::test::temp_dir("cli-profiles");
    std::system(("echo '{\"name\": 1}' > " + dir + "/x.json").c_str());
    auto r = run_gemmtune("--devices " + dir + " devices");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("x.json") && Catch::Contains("'name'"));
    CHECK(lines(r.err) == 1);
  }
}

TEST_CASE("version and help options succeed", "[cli]") {
  CHECK(run_gemmtune("--version").exit_code == 0);
  auto h = run_gemmtune("--help");
  CHECK(h.exit_code == 0);
  CHECK_THAT(h.out, Catch::Contains("devices"));
}
