// SPDX-License-Identifier: Apache-2.0
// scripts/entry-variants.py: the configuration a database serves each shape (gemmtune db lookup),
// varied in named parameters, written per shape as a --space-from file and a workload.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_entry_variants {

using namespace gemmtune;

namespace {

// One FP32 xgemm_fast entry at 64x64x64 for the CPU profile.
nlohmann::json database() {
  return {
      {"format", "gemmtune-database"},
      {"schema_version", 1},
      {"device", {{"id", "variants-test"}, {"name", "variants test"}, {"profile", "cpu-generic"}}},
      {"metadata", {{"gemmtune_version", "0.1.0"}}},
      {"entries",
       {{{"key",
          {{"kernel", "xgemm_fast"},
           {"precision", "32"},
           {"layout", "NN"},
           {"order", "row"},
           {"batch", 1},
           {"m", 64},
           {"n", 64},
           {"k", 64}}},
         {"parameters", {{"MWG", 32}, {"NWG", 32}, {"MDIMC", 8}, {"NDIMC", 8}, {"KWI", 4}}},
         {"gflops", 5.0}}}}};
}

test::CommandResult variants(const std::string& dir, const std::string& args) {
  return test::run_command_in("", std::string("GEMMTUNE=") + GEMMTUNE_BINARY,
                              "python3 " + test::source_path("scripts/entry-variants.py") + " " +
                                  dir + "/db.json " + dir + "/out " + args);
}

}  // namespace

TEST_CASE("entry-variants varies the served configuration of each shape", "[scripts]") {
  const std::string dir = test::temp_dir("entry-variants");
  std::ofstream(dir + "/db.json") << database().dump();
  const auto r = variants(dir, "64x64x64,100x90x80 --vary VWM=1,2 --vary KWI=4,8");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("8 configurations at 2 shapes") != std::string::npos);
  for (const std::string i : {"0", "1"}) {
    std::ifstream in(dir + "/out/variants-" + i + ".json");
    const auto db = nlohmann::json::parse(in);
    std::set<std::pair<int, int>> seen;
    for (const auto& e : db.at("entries")) {
      const auto& p = e.at("parameters");
      // The served configuration's other parameters are kept.
      CHECK(p.at("MWG") == 32);
      CHECK(p.at("MDIMC") == 8);
      seen.insert({p.at("VWM").get<int>(), p.at("KWI").get<int>()});
    }
    CHECK(seen == std::set<std::pair<int, int>>{{1, 4}, {1, 8}, {2, 4}, {2, 8}});
    // gemmtune reads the file as a database.
    const auto show = test::run_gemmtune("db show " + dir + "/out/variants-" + i + ".json");
    INFO(show.err);
    CHECK(show.exit_code == 0);
  }
  std::ifstream w(dir + "/out/workload-1.txt");
  std::stringstream text;
  text << w.rdbuf();
  CHECK(text.str() == "100x90x80 1\n");
}

TEST_CASE("entry-variants refuses a bad shape or variation with one line", "[scripts]") {
  const std::string dir = test::temp_dir("entry-variants-bad");
  std::ofstream(dir + "/db.json") << database().dump();
  const auto shape = variants(dir, "64x64 --vary VWM=1,2");
  CHECK(shape.exit_code != 0);
  CHECK(shape.err.find("'64x64' is not a shape MxNxK") != std::string::npos);
  const auto vary = variants(dir, "64x64x64 --vary VWM=one");
  CHECK(vary.exit_code != 0);
  CHECK(vary.err.find("--vary VWM: values must be integers") != std::string::npos);
}

TEST_CASE("entry-variants leaves out and counts what the template's constraints refuse",
          "[scripts]") {
  const std::string dir = test::temp_dir("entry-variants-constraints");
  std::ofstream(dir + "/db.json") << database().dump();
  // VWM 16 needs MWG to hold MDIMC * 16 = 128 rows; the served MWG is 32.
  const auto r = variants(dir, "64x64x64 --vary VWM=2,16 --vary KWI=4,8");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("2 configurations at 1 shapes, 2 left out by the template's constraints") !=
        std::string::npos);
  std::ifstream in(dir + "/out/variants-0.json");
  const auto db = nlohmann::json::parse(in);
  REQUIRE(db.at("entries").size() == 2);
  for (const auto& e : db.at("entries")) CHECK(e.at("parameters").at("VWM") == 2);
}

TEST_CASE("entry-variants refuses a parameter or value the kernel does not have with one line",
          "[scripts]") {
  const std::string dir = test::temp_dir("entry-variants-unknown");
  std::ofstream(dir + "/db.json") << database().dump();
  const auto value = variants(dir, "64x64x64 --vary REGCAP=255");
  CHECK(value.exit_code != 0);
  CHECK(value.err == "entry-variants: --vary: REGCAP=255 is not an allowed value\n");
  const auto name = variants(dir, "64x64x64 --vary FOO=1");
  CHECK(name.exit_code != 0);
  CHECK(name.err == "entry-variants: --vary: kernel xgemm_fast has no parameter FOO\n");
}

}  // namespace gemmtune_tests::scripts_test_entry_variants
