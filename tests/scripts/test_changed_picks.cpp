// SPDX-License-Identifier: Apache-2.0
// scripts/changed-picks.py: the shapes whose `gemmtune db lookup` pick two databases disagree on,
// written as two entry databases for scripts/ab-bench.py.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/scripts/entries_fixture.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_changed_picks {

using namespace gemmtune;

namespace {

// Entries at M = 33 (as `change` says) and 34 (as stored).
nlohmann::json database(const nlohmann::json& change) {
  return test::two_tile_entries("picks-test", change, nlohmann::json::object());
}

test::CommandResult changed_picks(const std::string& args) {
  return test::run_script("changed-picks.py", args);
}

}  // namespace

TEST_CASE("changed-picks writes the shapes two databases pick differently", "[scripts]") {
  const std::string dir = test::temp_dir("changed-picks");
  std::ofstream(dir + "/old.json") << database(nlohmann::json::object()).dump();
  std::ofstream(dir + "/new.json") << database({{"KWI", 2}}).dump();
  std::ofstream(dir + "/shapes.txt") << "# two tuned shapes\n33x40x96\n34x40x96\n";
  const auto r =
      changed_picks(dir + "/old.json " + dir + "/new.json " + dir + "/shapes.txt " + dir + "/out");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("1 of the shapes picked differently"));
  const nlohmann::json old_picks = read_json_file(dir + "/out/old.json");
  const nlohmann::json new_picks = read_json_file(dir + "/out/new.json");
  REQUIRE(old_picks.at("entries").size() == 1);
  REQUIRE(new_picks.at("entries").size() == 1);
  CHECK(old_picks["entries"][0]["key"]["m"] == 33);
  CHECK(new_picks["entries"][0]["key"]["m"] == 33);
  CHECK(old_picks["entries"][0]["parameters"]["KWI"] != 2);
  CHECK(new_picks["entries"][0]["parameters"]["KWI"] == 2);
  CHECK(old_picks.at("measurements").empty());
  CHECK_THAT(read_text_file(dir + "/out/changed.txt"), Catch::StartsWith("33x40x96\txgemm_fast"));
}

TEST_CASE("changed-picks names a shape it cannot read", "[scripts]") {
  const std::string dir = test::temp_dir("changed-picks-bad");
  std::ofstream(dir + "/db.json") << database(nlohmann::json::object()).dump();
  std::ofstream(dir + "/shapes.txt") << "33x40\n";
  const auto r =
      changed_picks(dir + "/db.json " + dir + "/db.json " + dir + "/shapes.txt " + dir + "/out");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("line 1: expected MxNxK, got '33x40'"));
}

}  // namespace gemmtune_tests::scripts_test_changed_picks
