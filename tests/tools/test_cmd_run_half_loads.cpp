// SPDX-License-Identifier: Apache-2.0
// gemmtune run with xgemm_fast's half-wide loads (GLH=1): where K is even but no multiple of GLV
// (4), the tile slots along k load as two 2-wide vectors instead of element by element. Every
// form that loads through load_tile is verified with K so, in every order and transpose (the
// operand laid along K is A or B as the transposes make it), batched at per-matrix offsets, in
// double precision and with half storage.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_half_loads {

namespace {
const auto verified_run = gemmtune::test::verified_fast_run;

// K, and the other leading dimensions, even and no multiple of 4, with partial tiles at every
// edge.
const std::vector<std::string> kHalfAlignedProblems = {
    "-m 66 -n 70 -k 46 --order row --layout NN --beta 0",
    "-m 70 -n 38 -k 54 --order col --layout NN --alpha 2 --beta -1",
    "-m 42 -n 66 -k 74 --order row --layout TT --beta 0.5",
    "-m 38 -n 70 -k 46 --order row --layout TN --batch 3 --batch-layout offsets"};
}  // namespace

TEST_CASE("run verifies half-wide loads where K is even and no multiple of 4",
          "[device][cli][run][half_loads]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string base = "MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,KWG=16,GLV=4,GLH=1,";
  for (const std::string& params : std::vector<std::string>{
           base + "KWI=16,STAGES=1,PREFETCH=1", base + "KWI=8,STAGES=2,PREFETCH=2",
           base + "KWI=8,ASYNC=1,STAGES=3,PREFETCH=0", base + "KWI=8,WSP=8,STAGES=2,PREFETCH=0",
           base + "KWI=8,BKM=1,STAGES=2", base + "KWI=8,SPLITK=3,KREDUCE=1"}) {
    for (const std::string& problem : kHalfAlignedProblems) verified_run(params, problem);
  }
  for (const std::string precision : {"64", "16acc32"}) {
    verified_run(base + "KWI=8,STAGES=2",
                 kHalfAlignedProblems.front() + " --precision " + precision);
  }
}

}  // namespace gemmtune_tests::tools_test_cmd_run_half_loads
