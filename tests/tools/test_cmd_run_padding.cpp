// SPDX-License-Identifier: Apache-2.0
// gemmtune run through the padding helper (kernel_templates/pad.cl), whose work-items each copy
// several rows of a column: xgemm copies A, B and C into tiles' multiples and C back, and
// xgemm_fast's aligned copies (ALDCOPY) copy an operand whose leading dimension is no multiple of
// the wide loads. The shapes put the copies' last rows, and the zeros past them, in every row slot
// of a work-item.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_padding {

namespace {
const auto verified_run = gemmtune::test::verified_kernel_run;
}  // namespace

TEST_CASE("run verifies padded copies whose rows span every row slot of the padding helper",
          "[device][cli][run][pad]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  // xgemm's 64-wide tiles: 70 rows pad to 128, so the second work-group of the helper copies 6
  // rows and writes zeros in its other 58; 130 rows take a third. C goes in (beta) and back.
  const std::string tiles = "MWG=64,NWG=64,KWG=16,MDIMC=16,NDIMC=16,MDIMA=16,NDIMB=16,VWM=2,VWN=2";
  for (const std::string problem : {"-m 70 -n 130 -k 90 --order row --layout NN --beta 0.5",
                                    "-m 130 -n 70 -k 33 --order col --layout TN --alpha 2",
                                    "-m 1 -n 65 -k 200 --order col --layout NT --beta 1"}) {
    const auto j = verified_run("xgemm", tiles, problem);
    CHECK(j["helper_kernels"] == true);
  }
  // xgemm_fast's aligned copies of operands with odd leading dimensions (K 67, N 131).
  const std::string fast = "MWG=32,NWG=32,KWG=8,MDIMC=8,NDIMC=8,VWM=2,VWN=2,GLV=4,ALDCOPY=1";
  for (const std::string problem : {"-m 150 -n 131 -k 67 --order row --layout NN --beta 0.5",
                                    "-m 131 -n 150 -k 67 --order col --layout NN"}) {
    const auto j = verified_run("xgemm_fast", fast, problem);
    CHECK(j["helper_kernels"] == true);
    CHECK(j["launches"].get<int>() >= 2);
  }
}

}  // namespace gemmtune_tests::tools_test_cmd_run_padding
