// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's KWI=16 (a 16-deep K tile unrolled whole) built offline for every AMD ISA by the
// LLVM AMDGPU backend. Unrolled whole, the backend hoists every local read of the tile, so the
// registers grow with the thread tile: 32x32 tiles on 128 work-items stay in registers, which is
// what this checks; 64x64 tiles spill, which is why the AMD profiles' starting configurations
// keep KWI 8 or less. Like every offline test, nothing here needs an AMD card and nothing may be
// skipped.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_unroll {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("KWI=16 builds for every AMD target without a spill at 32x32 tiles",
          "[cli][offline][unroll]") {
  const std::string tile =
      "--params MWG=32,NWG=32,MDIMC=16,NDIMC=8,VWM=2,VWN=4,KWG=16,STAGES=1,GLV=4,KWI=";
  for (const auto& target : kTargets) {
    const auto eight = build(tile + "8 --target " + target);
    const auto whole = build(tile + "16 --target " + target);
    INFO(target << ": " << eight.at("vgprs") << " and " << whole.at("vgprs") << " VGPRs");
    CHECK(whole.at("config").at("KWI") == 16);
    CHECK_FALSE(whole.at("spills").get<bool>());
    CHECK(whole.at("scratch_bytes") == 0);
    CHECK_FALSE(whole.at("launch_refused").get<bool>());
    CHECK(whole.at("lds_bytes") == eight.at("lds_bytes"));
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_unroll
