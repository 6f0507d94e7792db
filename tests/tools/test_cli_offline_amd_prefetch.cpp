// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's PREFETCH=2 (two K tiles ahead, two register sets) built offline for every AMD ISA
// by the LLVM AMDGPU backend: the second set must stay in registers (no scratch) and cost about
// its loads in VGPRs. Like every offline test, nothing here needs an AMD card and nothing may be
// skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_prefetch {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("PREFETCH=2 builds for every AMD target without a spill, its second set in registers",
          "[cli][offline][prefetch]") {
  // The defaults (64x64 tiles, K tile 16: 8 loads a set) with one and two local buffers.
  for (const auto& target : kTargets) {
    for (const std::string stages : {"1", "2"}) {
      const std::string params = "--params STAGES=" + stages + ",PREFETCH=";
      const auto one = build(params + "1 --target " + target);
      const auto two = build(params + "2 --target " + target);
      INFO(target << " STAGES=" << stages << ": " << one.at("vgprs") << " and " << two.at("vgprs")
                  << " VGPRs");
      CHECK(two.at("config").at("PREFETCH") == 2);
      CHECK_FALSE(two.at("spills").get<bool>());
      CHECK(two.at("scratch_bytes") == 0);
      CHECK_FALSE(two.at("launch_refused").get<bool>());
      // The second set's 8 registers, and not many more: an array the compiler put in memory
      // would show as scratch above, a copy of the loop as far more registers here.
      CHECK(two.at("vgprs").get<int>() >= one.at("vgprs").get<int>());
      CHECK(two.at("vgprs").get<int>() <= one.at("vgprs").get<int>() + 32);
      CHECK(two.at("lds_bytes") == one.at("lds_bytes"));
    }
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_prefetch
