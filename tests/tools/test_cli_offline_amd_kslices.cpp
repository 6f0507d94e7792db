// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's K slices (KSL) built offline for every AMD ISA by the LLVM AMDGPU backend: twice
// or four times the work-items for the same tiles, and slice 0's sums of the others in local
// memory. Like every offline test, nothing here needs an AMD card and nothing may be skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_kslices {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("K slices build for every AMD target without a spill", "[cli][offline][kslices]") {
  // 16x8 work-items a slice (two waves of 64 on GCN, four of 32 on RDNA), 32x32 tiles with four
  // slices, half storage.
  const std::vector<std::string> configs = {
      "--params KSL=2,KWG=16,KWI=4,MDIMC=16,NDIMC=8,VWM=2,VWN=4",
      "--params KSL=4,KWG=16,KWI=4,MWG=32,NWG=32,MDIMC=8,NDIMC=8,VWM=2,VWN=2",
      "--precision 16acc32 --params KSL=2,KWG=16,KWI=8,MDIMC=16,NDIMC=8,VWM=2,VWN=4,GLV=4"};
  for (const auto& target : kTargets) {
    for (const auto& config : configs) {
      const auto b = build(config + " --target " + target);
      INFO(target << " " << config << ": " << b.at("vgprs") << " VGPRs");
      CHECK(b.at("config").at("KSL").get<int>() > 1);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK_FALSE(b.at("launch_refused").get<bool>());
      CHECK(b.at("work_group_size").get<int>() == b.at("config").at("MDIMC").get<int>() *
                                                      b.at("config").at("NDIMC").get<int>() *
                                                      b.at("config").at("KSL").get<int>());
    }
    // Local memory: the default two stages of 64x64 tiles, K tile 16, plus one slice's sums of
    // 64x64 floats.
    CHECK(build("--params KSL=2,KWG=16,KWI=4 --target " + target).at("lds_bytes") ==
          2 * 16 * (64 + 64) * 4 + 64 * 64 * 4);
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_kslices
