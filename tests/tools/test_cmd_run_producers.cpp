// SPDX-License-Identifier: Apache-2.0
// gemmtune run with producer rows (xgemm_fast's WSP): MDIMC * WSP more work-items move the K tiles
// into a ring of STAGES local buffers while the others multiply. Off NVIDIA the ring runs in
// lockstep under barrier(); NVIDIA's named-barrier form is checked on the GPU (results/h200/).
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_producers {

using gemmtune::test::run_gemmtune;

namespace {
const auto verified_run = gemmtune::test::verified_fast_run;
}  // namespace

TEST_CASE("run verifies producer rows in every order and transpose and with partial tiles",
          "[device][cli][run][producers]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  // As many producers as multipliers, and a quarter as many; two, three and four buffers; wide
  // loads, swizzle and padding; split-K in two launches; fewer K tiles than buffers (K 5).
  const std::string base = "MDIMC=8,NDIMC=8,VWM=2,VWN=2,PREFETCH=0,KWG=16,KWI=8,";
  for (const std::string& params : std::vector<std::string>{
           base + "MWG=32,NWG=32,WSP=8,STAGES=2", base + "MWG=32,NWG=32,WSP=4,STAGES=3,GLV=4",
           base + "MWG=32,NWG=64,WSP=4,STAGES=4,SWZ=1",
           base + "MWG=64,NWG=32,WSP=8,STAGES=3,PADA=2",
           base + "MWG=32,NWG=32,WSP=4,STAGES=2,SPLITK=3"}) {
    for (const std::string& problem :
         gemmtune::test::fast_run_problems({"-m 33 -n 20 -k 5 --order row --layout TN --beta 1"})) {
      const auto j = verified_run(params, problem);
      CHECK(j["config"]["WSP"] == params[params.find("WSP=") + 4] - '0');
      CHECK(j["launches"] == (params.find("SPLITK=3") != std::string::npos ? 2 : 1));
    }
  }
  // Double precision and half storage: the producers' registers hold the storage type.
  for (const std::string precision : {"64", "16acc32"}) {
    verified_run(base + "MWG=32,NWG=32,WSP=4,STAGES=3",
                 "-m 67 -n 45 -k 133 --precision " + precision);
  }
}

TEST_CASE("run refuses producer rows where the template cannot take them",
          "[cli][run][producers]") {
  const std::string ok = "MDIMC=16,NDIMC=8,STAGES=2,";
  auto r = run_gemmtune("run --kernel xgemm_fast --params " + ok +
                        "PREFETCH=0,WSP=2,KSL=2,KWG=16,KWI=4 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("producer rows fill a ring of local buffers by themselves"));
  r = run_gemmtune("run --kernel xgemm_fast --params " + ok +
                   "WSP=2,PREFETCH=1 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  r = run_gemmtune("run --kernel xgemm_fast --params " + ok +
                   "PREFETCH=0,WSP=1 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("whole warps of 32"));
  r = run_gemmtune("run --kernel xgemm_fast --params " + ok +
                   "PREFETCH=0,WSP=3 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("WSP=3 is not an allowed value"));
}

}  // namespace gemmtune_tests::tools_test_cmd_run_producers
