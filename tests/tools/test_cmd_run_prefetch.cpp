// SPDX-License-Identifier: Apache-2.0
// gemmtune run with xgemm_fast's PREFETCH=2: the global loads of K tile t+2 are issued before the
// FMAs of tile t, into the second of two register sets, and stored a tile later.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_prefetch {

using gemmtune::test::run_gemmtune;

namespace {
const auto verified_run = gemmtune::test::verified_fast_run;
}  // namespace

TEST_CASE("run verifies two tiles of prefetch in every order and transpose and at short K",
          "[device][cli][run][prefetch]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  // One and two local buffers; wide and single loads; swizzle, K slices and split-K in either
  // form. K of 1, 16 and 17 make one and two tiles, where the second set loads nothing or once.
  const std::string tiles = "MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,KWG=16,KWI=4,PREFETCH=2,";
  for (const std::string& params : std::vector<std::string>{
           tiles + "STAGES=1", tiles + "STAGES=2,GLV=4", tiles + "STAGES=1,GLV=4,SWZ=1",
           tiles + "STAGES=2,KSL=2", tiles + "STAGES=2,SPLITK=3",
           tiles + "STAGES=1,SPLITK=2,KREDUCE=1"}) {
    for (const std::string& problem :
         gemmtune::test::fast_run_problems({"-m 33 -n 40 -k 1 --order col --layout TN",
                                            "-m 33 -n 40 -k 16", "-m 33 -n 40 -k 17"})) {
      const auto j = verified_run(params, problem);
      CHECK(j["config"]["PREFETCH"] == 2);
    }
  }
  // Double precision and half storage: the register sets hold the storage type.
  for (const std::string precision : {"64", "16acc32"}) {
    verified_run(tiles + "STAGES=2,GLV=4", "-m 67 -n 45 -k 133 --precision " + precision);
  }
}

TEST_CASE("run refuses two tiles of prefetch where the template cannot take them",
          "[cli][run][prefetch]") {
  // The multistage copies have their own depth.
  auto r = run_gemmtune(
      "run --kernel xgemm_fast --params PREFETCH=2,ASYNC=1,STAGES=3 -m 8 -n 8 -k 8 --cache-dir "
      "none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("two register sets"));
  // 128x128 tiles of K 32 on 64 work-items: 64 + 64 loads a set.
  r = run_gemmtune(
      "run --kernel xgemm_fast --params "
      "PREFETCH=2,MWG=128,NWG=128,KWG=32,MDIMC=8,NDIMC=8,STAGES=2 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("A_LOADS + B_LOADS <= 32"));
}

}  // namespace gemmtune_tests::tools_test_cmd_run_prefetch
