// SPDX-License-Identifier: Apache-2.0
// The order in which bench-suite times a row's sides: every timed call comes right after an
// untimed call of its own side, so that no side is timed on what another left in the cache.
#include <catch2/catch.hpp>

#include <map>

#include "src/bench/suite_internal.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_bench_test_suite_runner {

using namespace gemmtune::suite;

TEST_CASE("each timed call of a side follows an untimed call of the same side", "[bench]") {
  constexpr int kSides = 5, kWarmup = 2, kReps = 10;
  const auto schedule = timing_schedule(kSides, kWarmup, kReps);
  REQUIRE_FALSE(schedule.empty());
  CHECK_FALSE(schedule.front().timed);
  std::map<int, int> timed, untimed;
  for (size_t i = 0; i < schedule.size(); ++i) {
    const TimingStep& s = schedule[i];
    ++(s.timed ? timed : untimed)[s.side];
    if (!s.timed) continue;
    INFO("step " << i << ", side " << s.side);
    REQUIRE(i > 0);
    CHECK(schedule[i - 1].side == s.side);
    CHECK_FALSE(schedule[i - 1].timed);
  }
  for (int side = 0; side < kSides; ++side) {
    CHECK(timed[side] == kReps);
    CHECK(untimed[side] == kWarmup + kReps);
  }
}

TEST_CASE("the sides are interleaved round by round", "[bench]") {
  const auto schedule = timing_schedule(3, 0, 2);
  std::vector<int> timed_order;
  for (const auto& s : schedule) {
    if (s.timed) timed_order.push_back(s.side);
  }
  CHECK(timed_order == std::vector<int>{0, 1, 2, 0, 1, 2});
}

}  // namespace gemmtune_tests::src_bench_test_suite_runner
