// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's split factors of K that divide no power of two (SPLITK 5, 6, 7, 10, 12) built
// offline for every AMD ISA by the LLVM AMDGPU backend, with the reduce kernel and in the main
// kernel. Only an NVIDIA profile's rule serves them today, but the template must build
// everywhere. Like every offline test, nothing here needs an AMD card and nothing may be skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_split_factors {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("split factors that divide no power of two build for every AMD target without a spill",
          "[cli][offline][splitk]") {
  const std::string tile = "MWG=64,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=2,KWI=8,";
  const std::vector<std::string> configs = {"--params " + tile + "SPLITK=5",
                                            "--params " + tile + "SPLITK=7,KREDUCE=1",
                                            "--precision 16acc32 --params " + tile + "SPLITK=12"};
  for (const auto& target : kTargets) {
    for (const auto& config : configs) {
      const auto b = build(config + " --target " + target);
      INFO(target << " " << config << ": " << b.at("vgprs") << " VGPRs");
      CHECK(b.at("config").at("SPLITK") != 1);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK_FALSE(b.at("launch_refused").get<bool>());
    }
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_split_factors
