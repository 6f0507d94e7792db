// SPDX-License-Identifier: Apache-2.0
// gemmtune run with the split factors of K that divide no power of two (5, 6, 7, 10 and 12),
// which the chooser's split_k rule serves where a split leaves a partial round of work-groups:
// each part takes a whole number of K tiles, so the last parts of a short K multiply nothing.
// Verified with the reduce kernel and in the main kernel (one launch), in both orders, with
// transposes, beta and a batch.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_split_factors {

namespace {
const auto verified_run = gemmtune::test::verified_fast_run;
}  // namespace

TEST_CASE("run verifies split factors of K that divide no power of two",
          "[device][cli][run][splitk]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string tiles = "MWG=16,NWG=16,KWG=8,MDIMC=8,NDIMC=8,VWM=2,VWN=2,";
  // K 301 in parts of 8 K tiles (5-7 parts), 5 parts of 7 tiles (10 and 12: 4 and 6 parts
  // multiply nothing), and K 20, where only the first three parts of any split multiply.
  const std::vector<std::string> problems = {
      "-m 37 -n 29 -k 301 --order row --layout NN --beta 0",
      "-m 37 -n 29 -k 301 --order col --layout TN --alpha 2 --beta -1",
      "-m 45 -n 7 -k 20 --order row --layout NT --beta 0.5 --batch 3"};
  // Each build runs one problem (a build takes seconds on a CPU device), the problems in turn.
  size_t turn = 0;
  for (const int split : {5, 6, 7, 10, 12}) {
    for (const int in_kernel : {0, 1}) {
      const std::string params =
          tiles + "SPLITK=" + std::to_string(split) + ",KREDUCE=" + std::to_string(in_kernel);
      const auto j = verified_run(params, problems[turn++ % problems.size()]);
      CHECK(j["config"]["SPLITK"] == split);
      CHECK(j["launches"] == (in_kernel ? 1 : 2));
    }
  }
}

}  // namespace gemmtune_tests::tools_test_cmd_run_split_factors
