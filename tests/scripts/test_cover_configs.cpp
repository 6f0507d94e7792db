// SPDX-License-Identifier: Apache-2.0
// scripts/cover-configs.py: the configurations that cover the shapes a database cross-measured,
// chosen greedily, written as a --space-from file that gemmtune reads as a database.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_cover_configs {

using namespace gemmtune;

namespace {

// Three configurations (MWG 16, 32, 64) measured at three shapes. Within 3% of each shape's
// fastest: 100x100x100 MWG 16 and 32; 200x200x200 MWG 32 and 64; 300x300x300 MWG 16 alone.
nlohmann::json database() {
  auto measured = [](int mwg, const std::vector<double>& gflops) {
    nlohmann::json figures = nlohmann::json::array();
    for (size_t i = 0; i < gflops.size(); ++i) {
      const int side = 100 * static_cast<int>(i + 1);
      figures.push_back({side, side, side, gflops[i]});
    }
    return nlohmann::json{{"key",
                           {{"kernel", "xgemm_fast"},
                            {"precision", "32"},
                            {"layout", "NN"},
                            {"order", "row"},
                            {"batch", 1}}},
                          {"parameters", {{"MWG", mwg}, {"MDIMC", 8}, {"VWM", 2}}},
                          {"gflops", figures}};
  };
  return {
      {"format", "gemmtune-database"},
      {"schema_version", 1},
      {"device", {{"id", "cover-test"}, {"name", "cover test"}, {"profile", "cpu-generic"}}},
      {"metadata", {{"gemmtune_version", "0.1.0"}}},
      {"entries", nlohmann::json::array()},
      {"measurements",
       {measured(16, {100, 50, 100}), measured(32, {99, 100, 10}), measured(64, {50, 100, 10})}}};
}

struct Cover {
  test::CommandResult run;
  std::vector<int> mwg;  // the written configurations' MWG, in order
};

Cover cover(const std::string& dir, const std::string& db, const std::string& options) {
  Cover c;
  c.run = test::run_command_in("", "",
                               "python3 " + test::source_path("scripts/cover-configs.py") + " " +
                                   dir + "/cover.json " + db + " " + options);
  if (c.run.exit_code != 0) return c;
  std::ifstream in(dir + "/cover.json");
  const auto written = nlohmann::json::parse(in);
  for (const auto& e : written.at("entries"))
    c.mwg.push_back(e.at("parameters").at("MWG").get<int>());
  return c;
}

}  // namespace

TEST_CASE("cover-configs takes configurations greedily until every shape is covered", "[scripts]") {
  const std::string dir = test::temp_dir("cover-configs");
  const std::string db = dir + "/db.json";
  std::ofstream(db) << database().dump();

  // MWG 16 covers two shapes (the lower index wins the tie with MWG 32), then 200x200x200 is
  // left, which MWG 32 covers first.
  const auto two = cover(dir, db, "--count 2");
  INFO(two.run.out << two.run.err);
  REQUIRE(two.run.exit_code == 0);
  CHECK(two.mwg == std::vector<int>{16, 32});
  CHECK(two.run.err.find("2 cover all 3 shapes within 0.03") != std::string::npos);
  // A larger count adds the rest by the shapes they cover.
  CHECK(cover(dir, db, "--count 5").mwg == std::vector<int>{16, 32, 64});
  // Within 60%, MWG 16 covers all three shapes alone.
  const auto loose = cover(dir, db, "--count 1 --within 0.6");
  CHECK(loose.mwg == std::vector<int>{16});
  CHECK(loose.run.err.find("1 cover all 3 shapes within 0.6") != std::string::npos);

  // The file is a database gemmtune reads: one entry per placeholder shape.
  const auto show = test::run_gemmtune("db show " + dir + "/cover.json");
  INFO(show.err);
  CHECK(show.exit_code == 0);
  // The same database twice pools each configuration once.
  CHECK(cover(dir, db + " " + db, "--count 5").mwg == std::vector<int>{16, 32, 64});
}

TEST_CASE("cover-configs refuses a database without measurements of the kernel", "[scripts]") {
  const std::string dir = test::temp_dir("cover-configs-bad");
  const std::string db = dir + "/db.json";
  auto d = database();
  d["measurements"] = nlohmann::json::array();
  std::ofstream(db) << d.dump();
  const auto c = cover(dir, db, "");
  CHECK(c.run.exit_code != 0);
  CHECK(c.run.err.find("has no measurements of xgemm_fast") != std::string::npos);
}

}  // namespace gemmtune_tests::scripts_test_cover_configs
