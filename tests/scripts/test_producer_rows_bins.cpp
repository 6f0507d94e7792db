// SPDX-License-Identifier: Apache-2.0
// scripts/producer-rows-bins.py: producer-row figures against the same configuration's
// cross-measurements, binned by the work-groups the launch gives each compute unit.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_producer_rows_bins {

using namespace gemmtune;

namespace {

test::CommandResult bins(const std::string& args) {
  return test::run_command_in(
      "", "", "python3 " + test::source_path("scripts/producer-rows-bins.py") + " " + args);
}

}  // namespace

TEST_CASE("producer-rows-bins bins the producer form's ratios by work-groups a unit", "[scripts]") {
  const std::string dir = test::temp_dir("producer-rows-bins");
  const nlohmann::json plain = {{"MWG", 64}, {"NWG", 64}, {"NDIMC", 8}, {"PREFETCH", 1}};
  nlohmann::json producer = plain;
  producer.update({{"WSP", 8}, {"PREFETCH", 0}, {"STAGES", 2}});
  // 128x128: 2 x 2 = 4 work-groups (1 a unit of 4); 512x512: 64 (16 a unit).
  std::ofstream(dir + "/db.json")
      << nlohmann::json{{"measurements",
                         {{{"parameters", plain},
                           {"gflops", {{128, 128, 64, 100.0}, {512, 512, 64, 400.0}}}}}}}
             .dump();
  std::ofstream(dir + "/figures.json")
      << nlohmann::json{{"sets",
                         {{{"name", "s2"},
                           {"configurations",
                            {{{"parameters", producer},
                              {"figures",
                               {{128, 128, 64, 120.0, 1.0}, {512, 512, 64, 300.0, 1.0}}}}}}}}}}
             .dump();
  const auto r = bins(dir + "/db.json " + dir + "/figures.json --compute-units 4 --bins 2");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("| s2 | 0 - 2 | 1 | 1.200 | 1.200 | 1 | 0 |"));
  CHECK_THAT(r.out, Catch::Contains("| s2 | over 2 | 1 | 0.750 | 0.750 | 0 | 1 |"));
  const auto bad = bins(dir + "/db.json " + dir + "/figures.json --bins two");
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--bins wants numbers"));
}

}  // namespace gemmtune_tests::scripts_test_producer_rows_bins
