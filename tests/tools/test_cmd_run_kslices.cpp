// SPDX-License-Identifier: Apache-2.0
// gemmtune run with K slices (xgemm_fast's KSL): KSL groups of work-items multiply the same tiles,
// each its share of every K tile, and slice 0 adds their sums in local memory and stores.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_kslices {

using gemmtune::test::run_gemmtune;

namespace {
const auto verified_run = gemmtune::test::verified_fast_run;
}  // namespace

TEST_CASE("run verifies K slices in every order and transpose and with partial tiles",
          "[device][cli][run][kslices]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  // Two and four slices; 32x32 tiles with GLV 4 and four slices, where half the work-items have
  // no piece of a tile to load; split-K in two launches; the multistage copies; the swizzle.
  const std::string small = "MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,GLV=4,";
  for (const std::string& params : std::vector<std::string>{
           "KSL=2,KWG=16,KWI=4", "KSL=4,KWG=16,KWI=4", small + "KSL=2,KWG=32,KWI=8,STAGES=1",
           small + "KSL=4,KWG=16,KWI=2,STAGES=1", small + "KSL=2,KWG=16,KWI=8,SPLITK=3",
           small + "KSL=2,KWG=16,KWI=4,ASYNC=1,STAGES=3", small + "KSL=2,KWG=16,KWI=4,SWZ=1"}) {
    for (const std::string& problem : gemmtune::test::fast_run_problems({})) {
      const auto j = verified_run(params, problem);
      CHECK(j["config"]["KSL"] == params[params.find("KSL=") + 4] - '0');
      CHECK(j["launches"] == (params.find("SPLITK=3") != std::string::npos ? 2 : 1));
    }
  }
  // Double precision and half storage: the slices' sums travel in the arithmetic type.
  for (const std::string precision : {"64", "16acc32"}) {
    verified_run(small + "KSL=2,KWG=16,KWI=4", "-m 67 -n 45 -k 133 --precision " + precision);
  }
}

TEST_CASE("run refuses K slices where the template cannot take them", "[cli][run][kslices]") {
  auto r = run_gemmtune(
      "run --kernel xgemm_fast --params KSL=2,SPLITK=2,KREDUCE=1 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("slice 0 alone stores"));
  r = run_gemmtune(
      "run --kernel xgemm_fast --params KSL=2,KWG=8,KWI=8 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("KWG % (KSL * KWI) == 0"));
  r = run_gemmtune("run --kernel xgemm_fast --params KSL=3 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("KSL=3 is not an allowed value"));
}

}  // namespace gemmtune_tests::tools_test_cmd_run_kslices
