// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's tail split (TAIL) built offline for every AMD ISA by the LLVM AMDGPU backend: the
// template must build everywhere without a spill, in FP32 and in 16acc32. Like every offline
// test, nothing here needs an AMD card and nothing may be skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_tail_split {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("the tail split builds for every AMD target without a spill", "[cli][offline][splitk]") {
  const std::string tile = "MWG=64,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=2,KWI=8,KREDUCE=1,";
  const std::vector<std::string> configs = {
      "--params " + tile + "TAIL=1,SPLITK=4,GROUPM=8",
      "--precision 16acc32 --params " + tile + "TAIL=2,SPLITK=16"};
  for (const auto& target : kTargets) {
    for (const auto& config : configs) {
      const auto b = build(config + " --target " + target);
      INFO(target << " " << config << ": " << b.at("vgprs") << " VGPRs");
      CHECK(b.at("config").at("TAIL") != 0);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK_FALSE(b.at("launch_refused").get<bool>());
    }
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_tail_split
