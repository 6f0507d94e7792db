// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's half-wide loads (GLH) built offline for every AMD ISA by the LLVM AMDGPU backend:
// the tile slots along k of an operand whose leading dimension is even but no multiple of 4
// load as two 2-wide vectors. Only an NVIDIA profile's rule serves them, but the template must
// build everywhere. Like every offline test, nothing here needs an AMD card and nothing may be
// skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_half_loads {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("half-wide loads build for every AMD target without a spill",
          "[cli][offline][half_loads]") {
  // 64x64 tiles with register prefetch, with two buffers, and with half storage.
  const std::string tile = "MWG=64,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=2,GLV=4,GLH=1,";
  const std::vector<std::string> configs = {"--params " + tile + "KWI=8,PREFETCH=1,STAGES=1",
                                            "--params " + tile + "KWI=8,STAGES=2",
                                            "--precision 16acc32 --params " + tile + "KWI=8"};
  for (const auto& target : kTargets) {
    for (const auto& config : configs) {
      const auto b = build(config + " --target " + target);
      INFO(target << " " << config << ": " << b.at("vgprs") << " VGPRs");
      CHECK(b.at("config").at("GLH") == 1);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK_FALSE(b.at("launch_refused").get<bool>());
    }
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_half_loads
