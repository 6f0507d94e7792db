// SPDX-License-Identifier: Apache-2.0
// scripts/figure-entries.py: configurations measured at grid shapes, each written at the shapes
// where a rule of the given bounds serves it, as a database that `gemmtune bench` measures.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/scripts/entries_fixture.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_figure_entries {

using namespace gemmtune;

namespace {

test::CommandResult figure_entries(const std::string& args) {
  return test::run_command_in(
      "", std::string("GEMMTUNE=") + GEMMTUNE_BINARY,
      "python3 " + test::source_path("scripts/figure-entries.py") + " " + args);
}

// Set "s2": a 32x32 configuration with a 16-deep K tile, and the same with an 8-deep one. On 4
// compute units, 64x64 is 4 work-groups (1 a unit), 128x128 16 (4 a unit); K 64 is 4 tiles of
// 16, K 32 is 2.
std::string write_inputs(const std::string& name) {
  const std::string dir = test::temp_dir(name);
  const nlohmann::json deep = {{"MWG", 32}, {"NWG", 32}, {"MDIMC", 8}, {"NDIMC", 8},
                               {"KWG", 16}, {"VWM", 2},  {"VWN", 2},   {"KWI", 8}};
  nlohmann::json shallow = deep;
  shallow["KWG"] = 8;
  const nlohmann::json figures = {{64, 64, 64, 100.0, 5.0},
                                  {128, 128, 64, 100.0, 5.0},
                                  {64, 64, 32, 100.0, 5.0},
                                  {64, 32, 64, 100.0, 2.0}};
  std::ofstream(dir + "/figures.json")
      << nlohmann::json{{"sets",
                         {{{"name", "s2"},
                           {"configurations",
                            {{{"parameters", deep}, {"figures", figures}},
                             {{"parameters", shallow}, {"figures", figures}}}}}}}}
             .dump();
  std::ofstream(dir + "/db.json")
      << test::fixture_database("figure-test", nlohmann::json::array()).dump();
  return dir;
}

}  // namespace

TEST_CASE("figure-entries writes the shapes a rule's bounds serve, once each, for bench",
          "[scripts]") {
  const std::string dir = write_inputs("figure-entries");
  const std::string io = dir + "/out.json " + dir + "/figures.json " + dir + "/db.json";
  // The deep configuration: of its four figures only 64x64x64 has 1 work-group a unit, 4 K
  // tiles and 5 µs (128x128: 4 a unit; K 32: 2 tiles; 64x32x64: 2 µs).
  auto r = figure_entries(io + " --set-name s2 --where KWG=16 --compute-units 4 --assign BKM=1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json out = read_json_file(dir + "/out.json");
  CHECK(out.at("device").at("id") == "figure-test");
  REQUIRE(out.at("entries").size() == 1);
  const auto& e = out.at("entries")[0];
  CHECK(e.at("key").at("m") == 64);
  CHECK(e.at("key").at("k") == 64);
  CHECK(e.at("parameters").at("KWG") == 16);
  CHECK(e.at("parameters").at("BKM") == 1);
  // Looser bounds take more shapes; the measured file is what bench runs.
  r = figure_entries(io + " --set-name s2 --where KWG=16 --compute-units 4 --max-groups-per-cu 4 " +
                     "--min-k-tiles 2 --min-us 1");
  REQUIRE(r.exit_code == 0);
  CHECK(read_json_file(dir + "/out.json").at("entries").size() == 4);
  // Both configurations: one drawn a shape; --sample draws shapes.
  r = figure_entries(io + " --set-name s2 --compute-units 4 --max-groups-per-cu 4 " +
                     "--min-k-tiles 2 --min-us 1 --sample 2");
  REQUIRE(r.exit_code == 0);
  CHECK(read_json_file(dir + "/out.json").at("entries").size() == 2);
}

TEST_CASE("figure-entries leaves out what the template refuses and errs on what it lacks",
          "[scripts]") {
  const std::string dir = write_inputs("figure-entries-bad");
  const std::string io = dir + "/out.json " + dir + "/figures.json " + dir + "/db.json";
  const std::string at = " --set-name s2 --where KWG=16 --compute-units 4";
  // Padding of 2 breaks the K-major tile's four-wide reads: the one shape refused.
  auto r = figure_entries(io + at + " --assign BKM=1 --assign PADB=2");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("no shape to write (1 refused by the template)"));
  r = figure_entries(io + at + " --assign NOPE=1");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("has no parameter NOPE"));
  r = figure_entries(io + " --set-name s3");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("no set 's3'") && Catch::Contains("it has: s2"));
  r = figure_entries(io + at + " --assign BKM");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Catch::Contains("wants NAME=INTEGER"));
}

}  // namespace gemmtune_tests::scripts_test_figure_entries
