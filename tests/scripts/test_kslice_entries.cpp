// SPDX-License-Identifier: Apache-2.0
// scripts/kslice-entries.py: a database's FP32 xgemm_fast entries with K slices, written as a
// database that `gemmtune bench` measures and verifies.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/scripts/entries_fixture.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_kslice_entries {

using namespace gemmtune;

namespace {

using test::fixture_entry;

// At M = 33 a 16x16 tile that takes two slices (its unroll of 8 lowered to 4); at 34 the same in
// one launch of split-K (no slices there); at 35 a 32x32 tile; at 36 a work-group of 512 that
// two slices would take above the default limit; at 37 another kernel. For the CPU profile.
nlohmann::json database() {
  const nlohmann::json tile = {{"MWG", 16},  {"NWG", 16}, {"MDIMC", 4},
                               {"NDIMC", 4}, {"KWG", 8},  {"KWI", 8}};
  nlohmann::json one_launch = tile;
  one_launch["SPLITK"] = 2;
  one_launch["KREDUCE"] = 1;
  nlohmann::json wide = tile;
  wide["MWG"] = 32;
  wide["NWG"] = 32;
  nlohmann::json many = tile;
  many["MDIMC"] = 32;
  many["NDIMC"] = 16;
  many["MWG"] = 128;
  many["NWG"] = 64;
  return test::fixture_database(
      "kslice-test",
      {fixture_entry("xgemm_fast", 33, tile), fixture_entry("xgemm_fast", 34, one_launch),
       fixture_entry("xgemm_fast", 35, wide), fixture_entry("xgemm_fast", 36, many),
       fixture_entry("xgemm_direct", 37, {{"WGD", 16}})});
}

test::CommandResult kslice_entries(const std::string& dir, const std::string& args) {
  return test::run_command_in("", std::string("GEMMTUNE=") + GEMMTUNE_BINARY,
                              "python3 " + test::source_path("scripts/kslice-entries.py") + " " +
                                  dir + "/db.json " + dir + "/out.json " + args);
}

}  // namespace

TEST_CASE("kslice-entries writes the entries with K slices for bench", "[scripts]") {
  const std::string dir = test::temp_dir("kslice-entries");
  std::ofstream(dir + "/db.json") << database().dump();
  const auto r = kslice_entries(dir, "--ksl 2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("2 entries with KSL=2, 1 left out") != std::string::npos);
  const nlohmann::json out = read_json_file(dir + "/out.json");
  REQUIRE(out.at("entries").size() == 2);
  CHECK(out.at("entries")[0].at("key").at("m") == 33);
  CHECK(out.at("entries")[1].at("key").at("m") == 35);
  for (const auto& e : out.at("entries")) {
    CHECK(e.at("parameters").at("KSL") == 2);
    CHECK(e.at("parameters").at("KWI") == 4);  // KWG 8 shared by two slices
  }
  CHECK(out.at("measurements").empty());
  CHECK(out.at("device") == database().at("device"));

  // A K tile and unroll given, small tiles only; and bench measures and verifies what was
  // written.
  REQUIRE(kslice_entries(dir, "--ksl 2 --kwg 16 --kwi 8 --max-tile 256").exit_code == 0);
  const nlohmann::json small = read_json_file(dir + "/out.json");
  REQUIRE(small.at("entries").size() == 1);
  CHECK(small.at("entries")[0].at("parameters").at("KWG") == 16);
  CHECK(small.at("entries")[0].at("parameters").at("KWI") == 8);
  CHECK(test::bench_single_entry(dir).at("parameters").at("KSL") == 2);
}

TEST_CASE("kslice-entries refuses a missing database or no entry that takes slices with one line",
          "[scripts]") {
  const std::string dir = test::temp_dir("kslice-entries-bad");
  const auto missing = kslice_entries(dir, "");
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("cannot read a database from") != std::string::npos);
  std::ofstream(dir + "/db.json") << database().dump();
  // Every work-group of two slices is above a limit of 16 work-items.
  const auto none = kslice_entries(dir, "--max-work-group 16");
  CHECK(none.exit_code != 0);
  CHECK(none.err.find("no entry of") != std::string::npos);
  CHECK(none.err.find("takes KSL=2 (3 left out)") != std::string::npos);
  const auto bad = kslice_entries(dir, "--ksl 3");
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("invalid choice") != std::string::npos);
}

}  // namespace gemmtune_tests::scripts_test_kslice_entries
