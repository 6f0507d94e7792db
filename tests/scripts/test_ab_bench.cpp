// SPDX-License-Identifier: Apache-2.0
// scripts/ab-bench.py end to end on the test device: two entry databases of the same problems
// benched in alternating rounds, compared row by row in OUTPUT/summary.md.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/scripts/entries_fixture.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_ab_bench {

using namespace gemmtune;

namespace {

// The entries at M = 33 and 34, with `change` set in each.
nlohmann::json database(const nlohmann::json& change) {
  return test::two_tile_entries("ab-test", change, change);
}

test::CommandResult ab_bench(const std::string& args) {
  return test::run_script("ab-bench.py", args);
}

}  // namespace

TEST_CASE("ab-bench benches two databases in alternating rounds and compares them row by row",
          "[scripts]") {
  const std::string dir = test::temp_dir("ab-bench");
  std::ofstream(dir + "/a.json") << database(nlohmann::json::object()).dump();
  std::ofstream(dir + "/b.json") << database({{"KWI", 2}}).dump();
  const auto r = ab_bench(dir + "/out " + dir + "/a.json " + dir + "/b.json --min-time-ms 1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("A / B, geometric mean over 2 problems"));
  const std::string summary = read_text_file(dir + "/out/summary.md");
  CHECK_THAT(summary, Catch::Contains("| 33x40x96 xgemm_fast fp32 row NN |"));
  CHECK_THAT(summary, Catch::Contains("| 34x40x96 xgemm_fast fp32 row NN |"));
  CHECK_THAT(summary, Catch::Contains("Failed on either side: 0"));
  CHECK_THAT(summary, Catch::Contains("A's first round over its second"));
  // Round 1 benches A first, round 2 B first: every side's output of both rounds is there, and
  // the second database ran with its change.
  const std::string b_first = "bench " + dir + "/b.json -o " + dir + "/out/b-r2.json";
  const std::string a_second = "bench " + dir + "/a.json -o " + dir + "/out/a-r2.json";
  REQUIRE(summary.find(b_first) != std::string::npos);
  CHECK(summary.find(b_first) < summary.find(a_second));
  const nlohmann::json b2 = read_json_file(dir + "/out/b-r2.json");
  CHECK(b2.at("entries")[0].at("parameters").at("KWI") == 2);
  CHECK(b2.at("entries")[0].at("status") == "ok");
}

TEST_CASE("ab-bench compares one database under two folders of device profiles", "[scripts]") {
  // B's profiles are the project's with a build option added to every profile: the A/B of a
  // profile change, each side's bench run with its own folder.
  const std::string dir = test::temp_dir("ab-bench-devices");
  const std::string profiles = dir + "/profiles";
  std::filesystem::copy(test::source_path("devices"), profiles);
  for (const auto& file : std::filesystem::directory_iterator(profiles)) {
    nlohmann::json profile = read_json_file(file.path().string());
    profile["build_options"] = profile.value("build_options", "") + " -cl-denorms-are-zero";
    std::ofstream(file.path()) << profile.dump(2);
  }
  std::ofstream(dir + "/a.json") << database(nlohmann::json::object()).dump();
  const auto r = ab_bench(dir + "/out " + dir + "/a.json " + dir + "/a.json --devices-b " +
                          profiles + " --rounds 1 --min-time-ms 1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string summary = read_text_file(dir + "/out/summary.md");
  CHECK_THAT(summary, Catch::Contains("--devices " + profiles + " bench " + dir + "/a.json -o " +
                                      dir + "/out/b-r1.json"));
  CHECK_THAT(summary, !Catch::Contains("--devices " + profiles + " bench " + dir + "/a.json -o " +
                                       dir + "/out/a-r1.json"));
  CHECK_THAT(summary, Catch::Contains("Failed on either side: 0"));
  // A folder that does not exist fails B's bench, named in one line.
  const auto bad = ab_bench(dir + "/out2 " + dir + "/a.json " + dir + "/a.json --devices-b " + dir +
                            "/missing --rounds 1 --min-time-ms 1");
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("gemmtune bench " + dir + "/a.json failed"));
  CHECK_THAT(bad.err, Catch::Contains("given for devices does not exist"));
}

TEST_CASE("ab-bench refuses different problems, a failed bench or no round with one line",
          "[scripts]") {
  const std::string dir = test::temp_dir("ab-bench-bad");
  std::ofstream(dir + "/a.json") << database(nlohmann::json::object()).dump();
  nlohmann::json one = database(nlohmann::json::object());
  one["entries"].erase(1);
  std::ofstream(dir + "/c.json") << one.dump();
  auto r = ab_bench(dir + "/out " + dir + "/a.json " + dir + "/c.json");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("hold different problems"));
  r = ab_bench(dir + "/out " + dir + "/a.json " + dir + "/a.json --templates-b " + dir +
               "/missing --rounds 1");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("gemmtune bench " + dir + "/a.json failed"));
  r = ab_bench(dir + "/out " + dir + "/a.json " + dir + "/a.json --rounds 0");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("--rounds must be at least 1"));
}

}  // namespace gemmtune_tests::scripts_test_ab_bench
