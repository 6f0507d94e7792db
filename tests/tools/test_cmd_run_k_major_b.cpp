// SPDX-License-Identifier: Apache-2.0
// gemmtune run with the K-major B tile (xgemm_fast's BKM): B's local tile keeps the layout B has
// in global memory, one row of K values per column, read four values of k at a time. Every form
// that stores or copies that tile is verified: register staging, the multistage copies, producer
// rows, K slices, split-K in one launch, and B transposed (its slots then run across the rows).
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_k_major_b {

using gemmtune::test::run_gemmtune;

namespace {
const auto verified_run = gemmtune::test::verified_fast_run;
}  // namespace

TEST_CASE("run verifies the K-major B tile in every order and transpose and with partial tiles",
          "[device][cli][run][k_major_b]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string base = "MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,KWG=16,BKM=1,";
  for (const std::string& params : std::vector<std::string>{
           base + "KWI=16,GLV=4,STAGES=2,PREFETCH=1", base + "KWI=4,GLV=1,STAGES=1,PADB=4",
           base + "KWI=8,GLV=4,ASYNC=1,STAGES=3,PREFETCH=0",
           base + "KWI=8,GLV=2,ASYNC=1,STAGES=2,PREFETCH=1,PADB=8",
           base + "KWI=8,GLV=4,WSP=8,STAGES=2,PREFETCH=0", base + "KWI=4,GLV=4,KSL=2,STAGES=2",
           base + "KWI=8,GLV=4,SPLITK=3,KREDUCE=1"}) {
    for (const std::string& problem :
         gemmtune::test::fast_run_problems({"-m 33 -n 20 -k 5 --order row --layout TN --beta 1"})) {
      const auto j = verified_run(params, problem);
      CHECK(j["config"]["BKM"] == 1);
      CHECK(j["launches"] == 1);
    }
  }
  // Double precision and half storage: four values of k in one read of the storage type.
  for (const std::string precision : {"64", "16acc32"}) {
    verified_run(base + "KWI=8,GLV=4,STAGES=2", "-m 67 -n 45 -k 133 --precision " + precision);
  }
}

TEST_CASE("run refuses the K-major B tile where the template cannot take it",
          "[cli][run][k_major_b]") {
  const std::string ok = "MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,KWI=2,BKM=1,";
  // Padding that breaks the four-wide reads, and no local memory at all.
  for (const std::string bad : {"KWG=16,PADB=2", "KWG=16,LDS=0,STAGES=1,PREFETCH=0"}) {
    const auto r = run_gemmtune("run --kernel xgemm_fast --params " + ok + bad +
                                " -m 8 -n 8 -k 8 --cache-dir none");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("the K-major B tile is read 4 values of k at a time"));
  }
}

}  // namespace gemmtune_tests::tools_test_cmd_run_k_major_b
