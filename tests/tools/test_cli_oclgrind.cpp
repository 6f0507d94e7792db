// SPDX-License-Identifier: Apache-2.0
// Every template under Oclgrind's data-race and uninitialised-read checks, through `gemmtune run`:
// one small configuration each on an odd shape, with transposes, column-major storage, beta and
// split-K among them. Any report fails the test; a kernel with a planted race shows the checks
// bite. scripts/test.sh installs Oclgrind, so a missing one is a failure, never a skip.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_oclgrind {

using namespace gemmtune;

namespace {

// Oclgrind's uninitialised-value check cannot follow the optimizer's `freeze` instruction: the
// kernels are checked as the front end writes them.
const char* kOclgrind =
    "oclgrind --data-races --uninitialized --build-options -cl-opt-disable --log ";
const char* kRunOnce = " --min-runs 1 --min-time-ms 0 --warmup 0 --json";

// Runs `args` under Oclgrind; returns its report log (empty: nothing found) and the run.
std::pair<std::string, test::CommandResult> under_oclgrind(const std::string& dir,
                                                           const std::string& args) {
  const std::string log = dir + "/oclgrind.log";
  std::filesystem::remove(log);
  const auto r =
      test::run_command_in(dir, "GEMMTUNE_BINARY_CACHE=none",
                           std::string(kOclgrind) + log + " " + GEMMTUNE_BINARY + " " + args);
  return {std::filesystem::exists(log) ? read_text_file(log) : std::string(), r};
}

}  // namespace

TEST_CASE("every template runs clean under Oclgrind's race and uninitialised-read checks",
          "[cli][drivers][oclgrind]") {
  const std::string dir = test::temp_dir("oclgrind");
  const auto version = test::run_command_in(dir, "", "oclgrind --version");
  if (version.exit_code != 0) return test::unavailable("Oclgrind (oclgrind) is not installed");
  for (const test::SmallCase& c : test::kSmallCases) {
    INFO(c.kernel << " " << c.params << " " << c.problem);
    const auto [log, r] = under_oclgrind(dir, std::string("run --kernel ") + c.kernel + " -p " +
                                                  c.params + " " + c.problem + kRunOnce);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["device"].get<std::string>().find("Oclgrind") != std::string::npos);
    CHECK(j["status"] == "ok");
    CHECK(log.empty());
  }
}

TEST_CASE("Oclgrind's checks report a planted race that leaves the result right",
          "[cli][drivers][oclgrind]") {
  const std::string dir = test::temp_dir("oclgrind-race");
  const auto version = test::run_command_in(dir, "", "oclgrind --version");
  if (version.exit_code != 0) return test::unavailable("Oclgrind (oclgrind) is not installed");
  const std::string racy = "--templates " + test::source_path("tests/data") +
                           " run --kernel racy -m 9 -n 5 -k 3" + kRunOnce + " -p RACE=";
  const auto [clean_log, clean] = under_oclgrind(dir, racy + "0");
  REQUIRE(clean.exit_code == 0);
  CHECK(clean_log.empty());
  const auto [race_log, raced] = under_oclgrind(dir, racy + "1");
  REQUIRE(raced.exit_code == 0);  // the result is right: only the checker can tell
  CHECK(nlohmann::json::parse(raced.out)["status"] == "ok");
  CHECK_THAT(race_log, Catch::Contains("data race"));
}

}  // namespace gemmtune_tests::tools_test_cli_oclgrind
