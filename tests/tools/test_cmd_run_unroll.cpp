// SPDX-License-Identifier: Apache-2.0
// gemmtune run with xgemm_fast's KWI=16: a 16-deep K tile unrolled whole, verified against the
// reference in every order and transpose, at K shorter than a tile and one past it, with one and
// two local buffers, K slices and split-K in both forms.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_unroll {

using gemmtune::test::run_gemmtune;

namespace {
const auto verified_run = gemmtune::test::verified_fast_run;
}  // namespace

TEST_CASE("run verifies a K tile of 16 unrolled whole in every order and transpose",
          "[device][cli][run][unroll]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string tile = "MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=4,KWG=16,KWI=16,";
  for (const std::string& params :
       std::vector<std::string>{tile + "STAGES=1", tile + "STAGES=2,GLV=4",
                                tile + "STAGES=1,SPLITK=3", tile + "STAGES=1,SPLITK=2,KREDUCE=1",
                                "MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=4,KWG=32,KWI=16,KSL=2"}) {
    for (const std::string& problem : gemmtune::test::fast_run_problems(
             {"-m 33 -n 40 -k 5 --order col --layout TN", "-m 33 -n 40 -k 17"})) {
      const auto j = verified_run(params, problem);
      CHECK(j["config"]["KWI"] == 16);
    }
  }
}

TEST_CASE("run refuses an unroll deeper than the K tile", "[cli][run][unroll]") {
  const auto r =
      run_gemmtune("run --kernel xgemm_fast --params KWG=8,KWI=16 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("KWG % KWI == 0"));
}

}  // namespace gemmtune_tests::tools_test_cmd_run_unroll
