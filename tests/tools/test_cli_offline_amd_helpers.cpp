// SPDX-License-Identifier: Apache-2.0
// The helper kernels a call launches besides the main one, built offline for every AMD ISA with
// it: the split-K reduce kernels (in the main kernel's program) and the padding helper
// (kernel_templates/pad.cl, which copies operands into padded or aligned scratch). gemmtune
// compile reports each helper's resources (and --require-fit counts their spills). Nothing here
// needs an AMD card and nothing may be skipped.
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_helpers {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;
using gemmtune::test::offline_build;

// The entries of a build's helpers, each checked to fit.
std::set<std::string> fitting_helpers(const nlohmann::json& build) {
  std::set<std::string> entries;
  for (const auto& h : build.at("helpers")) {
    INFO(h.dump());
    CHECK(h.at("vgprs").get<int64_t>() > 0);
    CHECK_FALSE(h.at("spills").get<bool>());
    CHECK(h.at("scratch_bytes") == 0);
    entries.insert(h.at("entry").get<std::string>());
  }
  return entries;
}

}  // namespace

TEST_CASE("the helper kernels of a call build for every AMD target without a spill",
          "[cli][offline][helpers]") {
  const std::string fast =
      "--kernel xgemm_fast --params MWG=64,NWG=64,KWG=16,MDIMC=16,NDIMC=8,"
      "VWM=4,VWN=2,KWI=8,GLV=4,ALDCOPY=1,SPLITK=3";
  const std::string skinny = "--kernel xgemm_skinny --params SIDE=1,WGJ=32,WGK=8,VW=4,SPLITK=4";
  // 32x32 tiles: the defaults' 64x64 with a 32-deep K tile take more local memory in FP64 than
  // gfx803 has.
  const std::string xgemm =
      "--kernel xgemm --params MWG=32,NWG=32,KWG=16,MDIMC=16,NDIMC=16,MDIMA=16,NDIMB=16";
  for (const auto& target : kTargets) {
    INFO(target);
    for (const std::string precision : {"32", "64", "16acc32"}) {
      INFO(precision);
      // xgemm_fast with aligned copies and split-K: the reduce kernel and the padding helper.
      // (The main kernel itself spills in FP64 on gfx1100 at these tiles: not this test's.)
      const auto f = offline_build(fast + " --precision " + precision + " --target " + target);
      CHECK(fitting_helpers(f) == std::set<std::string>{"XgemmFastReduce", "pad_copy"});
      // xgemm pads every operand to its tiles: the padding helper alone.
      const auto x = offline_build(xgemm + " --precision " + precision + " --target " + target);
      CHECK(fitting_helpers(x) == std::set<std::string>{"pad_copy"});
    }
    const auto s = offline_build(skinny + " --target " + target + " --require-fit");
    CHECK(fitting_helpers(s) == std::set<std::string>{"XgemmSkinnyReduce"});
  }
  // The text report names them.
  const auto r = gemmtune::test::run_gemmtune("compile " + fast + " --target gfx1012");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("helpers: XgemmFastReduce") && Catch::Contains("pad_copy"));
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_helpers
