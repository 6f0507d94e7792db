// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's producer rows (WSP) built offline for every AMD ISA by the LLVM AMDGPU backend:
// AMD builds the lockstep form of the ring (barrier(), no PTX), with MDIMC * WSP more work-items
// in the work-group. Like every offline test, nothing here needs an AMD card and nothing may be
// skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_producers {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("producer rows build for every AMD target without a spill", "[cli][offline][producers]") {
  // As many producers as multipliers with three buffers; a quarter as many with wide loads at
  // 32x32 tiles; half storage.
  const std::vector<std::string> configs = {
      "--params WSP=8,PREFETCH=0,STAGES=3,KWG=16,KWI=8,MDIMC=16,NDIMC=8,VWM=2,VWN=2",
      "--params WSP=4,PREFETCH=0,STAGES=2,MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2,KWG=16,KWI=8,"
      "GLV=4",
      "--precision 16acc32 --params WSP=8,PREFETCH=0,STAGES=2,KWG=16,KWI=8,MDIMC=16,NDIMC=8,VWM=2,"
      "VWN=4,GLV=4"};
  for (const auto& target : kTargets) {
    for (const auto& config : configs) {
      const auto b = build(config + " --target " + target);
      INFO(target << " " << config << ": " << b.at("vgprs") << " VGPRs");
      const auto& c = b.at("config");
      CHECK(c.at("WSP").get<int>() > 0);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK_FALSE(b.at("launch_refused").get<bool>());
      CHECK(b.at("work_group_size").get<int>() ==
            c.at("MDIMC").get<int>() * (c.at("NDIMC").get<int>() + c.at("WSP").get<int>()));
    }
    // Local memory: three buffers of 64x64 tiles, K tile 16.
    CHECK(build(configs[0] + " --target " + target).at("lds_bytes") == 3 * 16 * (64 + 64) * 4);
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_producers
