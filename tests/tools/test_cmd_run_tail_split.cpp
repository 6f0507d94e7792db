// SPDX-License-Identifier: Apache-2.0
// gemmtune run with xgemm_fast's tail split (TAIL): the tiles past the last multiple of TAIL x the
// compute units are split SPLITK ways along K and added in the same launch, the others take all
// of K. 35 tiles leave a tail on any device of fewer than 35 units that is no divisor of 35.
// Verified in both orders, with transposes, alpha, beta, a batch, an epilogue and rasterization.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_tail_split {

namespace {
const auto verified_run = gemmtune::test::verified_fast_run;
const std::string kTiles = "MWG=16,NWG=16,KWG=8,MDIMC=8,NDIMC=8,VWM=2,VWN=2,";
}  // namespace

TEST_CASE("run verifies the tail split in one launch", "[device][cli][run][splitk]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  // 7 x 5 tiles of 16 (the last ones partial), K 301 in parts of whole K tiles; K 20 with 5
  // parts, where the last parts multiply nothing.
  const std::vector<std::string> problems = {
      "-m 100 -n 75 -k 301 --order row --layout NN --beta 0",
      "-m 75 -n 100 -k 301 --order col --layout TN --alpha 2 --beta -1",
      "-m 100 -n 75 -k 20 --order row --layout NT --beta 0.5 --batch 3",
      "-m 100 -n 75 -k 301 --order row --layout TT --epilogue bias,relu"};
  size_t turn = 0;
  for (const int tail : {1, 2}) {
    for (const int split : {2, 5}) {
      for (const int groupm : {1, 4}) {
        const std::string params = kTiles + "KREDUCE=1,TAIL=" + std::to_string(tail) +
                                   ",SPLITK=" + std::to_string(split) +
                                   ",GROUPM=" + std::to_string(groupm);
        const auto j = verified_run(params, problems[turn++ % problems.size()]);
        CHECK(j["config"]["TAIL"] == tail);
        CHECK(j["launches"] == 1);
      }
    }
  }
}

TEST_CASE("run refuses the tail split without an in-kernel reduction", "[cli][run][splitk]") {
  const auto r = gemmtune::test::run_gemmtune("run --kernel xgemm_fast --params " + kTiles +
                                              "TAIL=1,SPLITK=4,KREDUCE=0 -m 64 -n 64 -k 64");
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("tail split") != std::string::npos);
}

}  // namespace gemmtune_tests::tools_test_cmd_run_tail_split
