// SPDX-License-Identifier: Apache-2.0
// scripts/served-entries.py: the configurations a bench-suite run served, at their rows' shapes,
// written as a database that `gemmtune bench` measures and verifies.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/scripts/entries_fixture.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_served_entries {

using namespace gemmtune;

namespace {

const nlohmann::json kTile = {{"MWG", 16},  {"NWG", 16}, {"MDIMC", 4},
                              {"NDIMC", 4}, {"KWG", 8},  {"VWM", 1}};

// One row of a bench-suite result: `shape` served `params` of xgemm_fast.
nlohmann::json row(int64_t m, const nlohmann::json& params, int64_t batch = 1,
                   bool epilogue = false) {
  return {{"shape", {{"m", m}, {"n", 40}, {"k", 96}}},
          {"precision", "32"},
          {"batch", batch},
          {"epilogue", epilogue},
          {"chosen", {{"kernel", "xgemm_fast"}, {"parameters", params}}}};
}

// Rows at M = 33 (split in three), 34 (no split), 35 (a batch), 36 (an epilogue) and 33 again
// with another configuration; the suite names the database in DIR.
nlohmann::json suite(const std::string& dir) {
  nlohmann::json split = kTile;
  split["SPLITK"] = 3;
  return {{"format", "gemmtune-bench-suite"},
          {"databases", {dir + "/db.json"}},
          {"rows",
           {row(33, split), row(34, kTile), row(35, kTile, 2), row(36, kTile, 1, true),
            row(33, kTile)}}};
}

test::CommandResult served_entries(const std::string& args) {
  return test::run_command_in(
      "", std::string("GEMMTUNE=") + GEMMTUNE_BINARY,
      "python3 " + test::source_path("scripts/served-entries.py") + " " + args);
}

std::string write_inputs(const std::string& name) {
  const std::string dir = test::temp_dir(name);
  std::ofstream(dir + "/db.json")
      << test::fixture_database("served-test", nlohmann::json::array()).dump();
  std::ofstream(dir + "/suite.json") << suite(dir).dump();
  return dir;
}

}  // namespace

TEST_CASE("served-entries writes each served one-GEMM row's configuration once for bench",
          "[scripts]") {
  const std::string dir = write_inputs("served-entries");
  const auto r = served_entries(dir + "/out.json " + dir + "/suite.json --set KWI=2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json out = read_json_file(dir + "/out.json");
  CHECK(out.at("device").at("id") == "served-test");
  const auto& entries = out.at("entries");
  REQUIRE(entries.size() == 2);  // the batch, the epilogue and the repeated shape left out
  CHECK(entries[0].at("key").at("m") == 33);
  CHECK(entries[0].at("parameters").at("SPLITK") == 3);  // the shape's first row
  CHECK(entries[1].at("key").at("m") == 34);
  for (const auto& e : entries) {
    CHECK(e.at("key").at("layout") == "NN");
    CHECK(e.at("key").at("order") == "row");
    CHECK(e.at("parameters").at("KWI") == 2);
  }

  // The rows of one kernel only: every row here is xgemm_fast's.
  REQUIRE(served_entries(dir + "/out.json " + dir + "/suite.json --kernel xgemm_fast").exit_code ==
          0);
  CHECK(read_json_file(dir + "/out.json").at("entries").size() == 2);
  const auto skinny =
      served_entries(dir + "/out.json " + dir + "/suite.json --kernel xgemm_skinny");
  CHECK(skinny.exit_code != 0);
  CHECK(skinny.err.find("no served row to write") != std::string::npos);

  // The split-K rows only; and bench measures and verifies what was written.
  REQUIRE(served_entries(dir + "/out.json " + dir + "/suite.json --split-k").exit_code == 0);
  CHECK(read_json_file(dir + "/out.json").at("entries").size() == 1);
  CHECK(test::bench_single_entry(dir).at("parameters").at("SPLITK") == 3);
}

TEST_CASE("served-entries leaves out what the template refuses and errs on what it lacks",
          "[scripts]") {
  const std::string dir = write_inputs("served-entries-bad");
  const std::string io = dir + "/out.json " + dir + "/suite.json";
  // KWI=32 is no value of the template: the user's mistake, one line.
  auto r = served_entries(io + " --set KWI=32");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("KWI=32 is not an allowed value") != std::string::npos);
  r = served_entries(io + " --set NOPE=1");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("has no parameter NOPE") != std::string::npos);
  // Two K slices of an 8-deep tile unrolled by 8 have no equal share each: every row refused.
  r = served_entries(io + " --set KSL=2 --set KWI=8");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("no served row to write (2 refused by the template)") != std::string::npos);
  r = served_entries(dir + "/out.json " + dir + "/missing.json");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("cannot read a bench-suite result from") != std::string::npos);
  std::ofstream(dir + "/suite.json") << nlohmann::json{{"rows", nlohmann::json::array()}}.dump();
  r = served_entries(io);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("names no database: give --database") != std::string::npos);
}

}  // namespace gemmtune_tests::scripts_test_served_entries
