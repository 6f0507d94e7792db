// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's multistage copies (ASYNC=1, STAGES 3 and 4) built offline for every AMD ISA by the
// LLVM AMDGPU backend: AMD has no cp.async, so its build is the synchronous form of the stages,
// and it must build without a spill where the register-staged double buffer does. Like every
// offline test, nothing here needs an AMD card and nothing may be skipped.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd_async {

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;

const auto build = gemmtune::test::offline_fast_build;

}  // namespace

TEST_CASE("ASYNC=1 with three and four stages builds for every AMD target without a spill",
          "[cli][offline][async]") {
  // The defaults (64x64 tiles, K tile 16) three deep; four deep with wide loads and swizzle;
  // half storage, where the tiles hold half.
  const std::vector<std::string> configs = {
      "--params ASYNC=1,STAGES=3", "--params ASYNC=1,STAGES=4,GLV=4,SWZ=1",
      "--precision 16acc32 --params ASYNC=1,STAGES=3,GLV=4,PREFETCH=0"};
  for (const auto& target : kTargets) {
    for (const auto& config : configs) {
      const auto b = build(config + " --target " + target);
      INFO(target << " " << config << ": " << b.at("vgprs") << " VGPRs");
      CHECK(b.at("config").at("ASYNC") == 1);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK_FALSE(b.at("launch_refused").get<bool>());
      CHECK(b.at("waves_per_simd").get<int>() >= 1);
    }
    // The local memory is the template's formula, STAGES buffers of A and B.
    CHECK(build("--params ASYNC=1,STAGES=3 --target " + target).at("lds_bytes") ==
          3 * 16 * (64 + 64) * 4);
  }
}

TEST_CASE("two ASYNC stages cost the registers of the register-staged double buffer",
          "[cli][offline][async]") {
  // The same loads and stores in the same places: only the loop's form differs.
  for (const std::string target : {"gfx906", "gfx1012"}) {
    const auto staged = build("--params ASYNC=0,STAGES=2 --target " + target);
    const auto async = build("--params ASYNC=1,STAGES=2 --target " + target);
    INFO(target << ": " << staged.at("vgprs") << " and " << async.at("vgprs") << " VGPRs");
    CHECK(async.at("vgprs").get<int>() <= staged.at("vgprs").get<int>() + 4);
    CHECK(async.at("lds_bytes") == staged.at("lds_bytes"));
  }
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd_async
