// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's K-major B tile (BKM) built offline for every AMD ISA by the LLVM AMDGPU backend:
// the tile of B in local memory holds a row of K values per column, and each work-item reads
// four values of k of each of its columns at once (more VGPRs for B's fragment). Like every
// offline test, nothing here needs an AMD card and nothing may be skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_k_major_b {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("the K-major B tile builds for every AMD target without a spill",
          "[cli][offline][k_major_b]") {
  // 64x64 tiles with a 16-deep K tile, padded; with the multistage copies (three buffers); with
  // producer rows; half storage.
  const std::string tile = "MWG=64,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=2,GLV=4,BKM=1,";
  const std::vector<std::string> configs = {
      "--params " + tile + "KWI=8,PADB=4", "--params " + tile + "KWI=8,ASYNC=1,STAGES=3,PREFETCH=0",
      "--params " + tile + "KWI=16,WSP=8,STAGES=2,PREFETCH=0",
      "--precision 16acc32 --params " + tile + "KWI=8"};
  for (const auto& target : kTargets) {
    for (const auto& config : configs) {
      const auto b = build(config + " --target " + target);
      INFO(target << " " << config << ": " << b.at("vgprs") << " VGPRs");
      CHECK(b.at("config").at("BKM") == 1);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK_FALSE(b.at("launch_refused").get<bool>());
    }
    // Local memory: two buffers, A's 16 rows of 64 and B's 64 columns of 16 + 4 (BKM 0 with the
    // same padding would hold 16 rows of 64 + 4).
    CHECK(build(configs[0] + " --target " + target).at("lds_bytes") ==
          2 * (16 * 64 + 64 * (16 + 4)) * 4);
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_k_major_b
