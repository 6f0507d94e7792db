// SPDX-License-Identifier: Apache-2.0
// scripts/splitk-entries.py: a database's FP32 xgemm_fast split-K entries of one launch form,
// written in the other as a database that `gemmtune bench` measures and verifies.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/scripts/entries_fixture.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_splitk_entries {

using namespace gemmtune;

namespace {

using test::fixture_entry;

// Split-K entries in two launches at M = 33 and 35, one in one launch, one without a split and
// one of another kernel, for the CPU profile.
nlohmann::json database() {
  const nlohmann::json tile = {{"MWG", 16}, {"NWG", 16}, {"MDIMC", 4}, {"NDIMC", 4}, {"KWG", 8}};
  auto split = [&](int64_t parts, int64_t kreduce) {
    nlohmann::json p = tile;
    p["SPLITK"] = parts;
    p["KREDUCE"] = kreduce;
    return p;
  };
  return test::fixture_database(
      "splitk-test",
      {fixture_entry("xgemm_fast", 33, split(2, 0)), fixture_entry("xgemm_fast", 34, split(3, 1)),
       fixture_entry("xgemm_fast", 35, split(3, 0)), fixture_entry("xgemm_fast", 36, tile),
       fixture_entry("xgemm_direct", 37, {{"WGD", 16}})});
}

test::CommandResult splitk_entries(const std::string& dir, const std::string& args) {
  return test::run_command_in("", "",
                              "python3 " + test::source_path("scripts/splitk-entries.py") + " " +
                                  dir + "/db.json " + dir + "/out.json " + args);
}

}  // namespace

TEST_CASE("splitk-entries writes the split-K entries in the other launch form for bench",
          "[scripts]") {
  const std::string dir = test::temp_dir("splitk-entries");
  std::ofstream(dir + "/db.json") << database().dump();
  const auto r = splitk_entries(dir, "--from 0 --to 1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json out = read_json_file(dir + "/out.json");
  REQUIRE(out.at("entries").size() == 2);
  CHECK(out.at("entries")[0].at("key").at("m") == 33);
  CHECK(out.at("entries")[1].at("key").at("m") == 35);
  for (const auto& e : out.at("entries")) CHECK(e.at("parameters").at("KREDUCE") == 1);
  CHECK(out.at("device") == database().at("device"));

  // Every second entry only; and bench measures and verifies what was written, in one launch.
  REQUIRE(splitk_entries(dir, "--every 2").exit_code == 0);
  CHECK(read_json_file(dir + "/out.json").at("entries").size() == 1);
  CHECK(test::bench_single_entry(dir).at("parameters").at("KREDUCE") == 1);
}

TEST_CASE("splitk-entries refuses a missing database or no split-K entry with one line",
          "[scripts]") {
  const std::string dir = test::temp_dir("splitk-entries-bad");
  const auto missing = splitk_entries(dir, "");
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("cannot read a database from") != std::string::npos);
  nlohmann::json unsplit = database();
  auto& entries = unsplit["entries"];
  entries.erase(entries.begin(), entries.begin() + 3);
  std::ofstream(dir + "/db.json") << unsplit.dump();
  const auto none = splitk_entries(dir, "");
  CHECK(none.exit_code != 0);
  CHECK(none.err.find("has no FP32 xgemm_fast split-K entry with KREDUCE=0") != std::string::npos);
  const auto bad = splitk_entries(dir, "--every 0");
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("--every must be at least 1") != std::string::npos);
}

}  // namespace gemmtune_tests::scripts_test_splitk_entries
