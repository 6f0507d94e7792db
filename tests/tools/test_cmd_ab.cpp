// SPDX-License-Identifier: Apache-2.0
// gemmtune ab and gemmtune refine: on a small made-up replay file (each decision known in
// advance), on PoCL, and refusing bad input with one line.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "src/core/configuration.hpp"
#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_ab {

using namespace gemmtune;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {

// A recording of six xgemm configurations at 64x64x64 (made up, not measured): the defaults at
// 1 ms, KWI=4 25% faster, KWI=1 and KWI=8 slower, PADA=0 0.5% slower (a tie, simpler) and VWM=4
// wrong.
std::string write_small_replay(const std::string& dir) {
  const KernelSpec spec = KernelSpec::load(source_path("kernel_templates/xgemm.json"));
  Problem p;
  p.shape = Shape{64, 64, 64};
  const std::string path = dir + "/replay.jsonl";
  std::ofstream out(path);
  out << nlohmann::json{{"type", "header"}, {"kernel", "xgemm"}, {"device", {{"name", "made up"}}}}
             .dump()
      << "\n";
  auto add = [&](const std::string& change, double ms, Status status) {
    Result r;
    r.config = merge_configuration(spec.defaults(), parse_configuration(change), true);
    r.status = status;
    if (status == Status::kOk) {
      r.time.median_ms = ms;
      r.gflops = p.flops() / (ms * 1e6);
    } else {
      r.message = "made-up failure";
    }
    out << nlohmann::json(JournalEntry{"xgemm", p, r, 0.0}).dump() << "\n";
  };
  add("", 1.0, Status::kOk);
  add("KWI=4", 0.8, Status::kOk);
  add("KWI=1", 1.1, Status::kOk);
  add("PADA=0", 1.005, Status::kOk);
  add("KWI=8", 1.3, Status::kOk);
  add("VWM=4", 0.5, Status::kWrongResult);
  return path;
}

// The first line of `text` that contains `needle`.
std::string line_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return "";
}

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("ab decides on a replay file and logs each decision", "[cli][ab]") {
  const std::string dir = temp_dir("cmd-ab");
  const std::string replay = write_small_replay(dir);
  const std::string base = "ab --replay " + replay + " --baseline KWI=2 --log " + dir +
                           "/ab.jsonl --changelog " + dir + "/ab.md";

  auto r = run_gemmtune(base + " --change KWI=4");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("decision   KEEP: faster by 25.0%"));
  CHECK_THAT(r.out, Catch::Contains("change     KWI 2->4"));

  r = run_gemmtune(base + " --change VWM=4");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("REVERT: the change failed: wrong_result"));

  r = run_gemmtune(base + " --change KWI=8");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("REVERT: slower by"));

  r = run_gemmtune(base + " --change PADA=0 --json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("decision") == "KEEP");
  CHECK(j.at("reason") == "tie_simpler");
  CHECK(j.at("stats").at("pairs") == 5);
  CHECK(j.at("baseline").at("indicators").at("source") == "bottleneck report");
  CHECK(j.at("simplicity").at("rank") == "padding");

  // A 30% threshold turns the 25% win into a tie, and KWI=4 is not simpler.
  r = run_gemmtune(base + " --change KWI=4 --threshold 30%");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("REVERT") && Catch::Contains("not simpler"));

  const auto lines = read_lines(dir + "/ab.jsonl");
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].at("decision") == "KEEP");
  CHECK(lines[1].at("reason") == "change_failed");
  CHECK(lines[2].at("reason") == "slower");
  CHECK(lines[3].at("reason") == "tie_simpler");
  CHECK(lines[4].at("reason") == "tie_not_simpler");

  const std::string md = read_text_file(dir + "/ab.md");
  CHECK_THAT(md, Catch::StartsWith("# A/B comparison"));
  CHECK_THAT(md, Catch::Contains("- command: `gemmtune ab --replay"));
  CHECK_THAT(md, Catch::Contains("- device (recorded): made up"));
  CHECK_THAT(md, Catch::Contains("| `KWI 2->4` |") && Catch::Contains("**KEEP**: faster"));
  CHECK_THAT(md, Catch::Contains("**REVERT**: the change failed: wrong_result"));
}

TEST_CASE("ab takes its baseline from a journal", "[cli][ab]") {
  const std::string dir = temp_dir("cmd-ab");
  const std::string replay = write_small_replay(dir);
  // The fastest valid result is KWI=4 (VWM=4 is faster but wrong).
  auto r =
      run_gemmtune("ab --replay " + replay + " --baseline journal:" + replay + " --change KWI=2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("change     KWI 4->2"));
  CHECK_THAT(r.out, Catch::Contains("REVERT: slower by 20.0%"));
}

TEST_CASE("ab takes its baseline from a database entry", "[cli][ab]") {
  const std::string dir = temp_dir("cmd-ab");
  const std::string replay = write_small_replay(dir);
  Database db;
  db.device.id = "made-up";
  db.device.name = "made up";
  DatabaseEntry e;
  e.key.shape = Shape{64, 64, 64};
  e.parameters = {{"KWI", 8}};  // the rest takes the template's defaults
  e.gflops = 1;
  e.found.strategy = "test";
  db.put(e, false);
  db.save(dir + "/db.json");
  auto r =
      run_gemmtune("ab --replay " + replay + " --baseline db:" + dir + "/db.json --change KWI=4");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("change     KWI 8->4"));
  CHECK_THAT(r.out, Catch::Contains("KEEP: faster by 62.5%"));
  // No entry for another shape.
  r = run_gemmtune("ab --replay " + replay + " --baseline db:" + dir +
                   "/db.json --change KWI=4 -s 32x32x32");
  CHECK(r.exit_code == 2);
}

TEST_CASE("refine on a replay file ends where no single change wins", "[cli][ab][refine]") {
  const std::string dir = temp_dir("cmd-refine");
  const std::string replay = write_small_replay(dir);
  auto r = run_gemmtune("refine --replay " + replay + " --baseline KWI=2 --changelog " + dir +
                        "/refine.md --log " + dir + "/refine.jsonl");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("converged  yes"));
  CHECK_THAT(line_with(r.out, "KWI 2->1"), Catch::EndsWith("REVERT (slower)"));
  CHECK_THAT(line_with(r.out, "KWI 2->4"), Catch::EndsWith("KEEP (faster)"));
  CHECK_THAT(line_with(r.out, "KWI 4->2"), Catch::EndsWith("REVERT (slower)"));
  CHECK_THAT(line_with(r.out, "KWI 4->8"), Catch::EndsWith("REVERT (slower)"));
  CHECK_THAT(line_with(r.out, "MWG 64->32"), Catch::EndsWith("REVERT (change_failed)"));
  // Neither neighbour of KWI=4 in the recording (KWI=2 and KWI=8) is faster.
  CHECK_THAT(r.out, Catch::Contains("final      KWG=32,KWI=4,"));
  const std::string md = read_text_file(dir + "/refine.md");
  CHECK_THAT(md, Catch::Contains("Outcome: no single change wins"));
  const auto lines = read_lines(dir + "/refine.jsonl");
  REQUIRE(lines.size() >= 2);
  CHECK(lines.back().at("type") == "refine_summary");
  CHECK(lines.back().at("converged") == true);
}

TEST_CASE("ab and refine refuse bad input with one line", "[cli][ab]") {
  const std::string dir = temp_dir("cmd-ab");
  const std::string replay = write_small_replay(dir);
  const std::string base = "ab --replay " + replay + " --baseline KWI=2";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {base + " --change NOPE=1", "NOPE"},
      {base + " --change KWI=2", "leaves the baseline"},
      {base + " --change KWI=4 --threshold abc", "--threshold"},
      {base + " --change KWI=4 --threshold 150%", "--threshold"},
      {base + " --change KWI=4 --min-pairs 6 --max-pairs 5", "--max-pairs"},
      {"ab --replay " + replay + " --baseline db:" + dir + "/missing.json --change KWI=4",
       "missing.json"},
      {base + " --change KWI=4 -s 128x128x128", "128x128x128"},
      {"refine --replay " + replay + " --baseline KWI=2 --space nope", "nope"},
  };
  for (const auto& [args, needle] : cases) {
    INFO(args);
    auto r = run_gemmtune(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(needle));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("ab measures and verifies both sides on the OpenCL device", "[cli][ab][pocl]") {
  const std::string dir = temp_dir("cmd-ab-pocl");
  auto r = run_gemmtune(
      "ab -s 32x32x32 --baseline MWG=32,NWG=32,KWG=16,MDIMC=8,NDIMC=8,MDIMA=8,NDIMB=8 "
      "--change KWI=1 --min-pairs 3 --max-pairs 3 --min-runs 1 --min-time-ms 1 --cache-dir " +
      dir + " --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("baseline").at("status") == "ok");
  CHECK(j.at("changed").at("status") == "ok");
  CHECK(j.at("stats").at("pairs") == 3);
  CHECK(j.at("baseline").at("max_error").get<double>() <=
        j.at("baseline").at("tolerance").get<double>());
  CHECK(j.at("baseline").at("gflops").get<double>() > 0);
}

}  // namespace gemmtune_tests::tools_test_cmd_ab
