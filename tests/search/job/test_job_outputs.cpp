// SPDX-License-Identifier: Apache-2.0
// search/job/job_outputs.cpp: what a search names as its bound.
#include <catch2/catch.hpp>

#include "search/job/search_job.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_job_test_job_outputs {

using namespace gemmtune;

TEST_CASE("the bound a search names is where the devices' time went or the strategy's pace",
          "[search]") {
  // elapsed, timing, evaluating (timing included), proposal wait, build wait, strategy
  CHECK(split_search_time(60, 40, 55, 1, 5, 10).bound == "timing");
  const auto builds = split_search_time(60, 20, 55, 1, 30, 10);
  CHECK(builds.bound == "builds");
  CHECK(builds.build_wait_s == 30);
  CHECK(builds.checking_s == 5);
  CHECK(split_search_time(60, 20, 55, 1, 5, 10).bound ==
        "program loads, verification and transfers");
  CHECK(split_search_time(60, 5, 10, 40, 0, 10).bound == "proposals");
  // The devices waited and the strategy never rested: it set the pace.
  CHECK(split_search_time(60, 20, 55, 1, 30, 57).bound ==
        "the strategy (95% of the search busy proposing; the devices waited for builds)");
  // A busy strategy is no bound while the devices are timing.
  CHECK(split_search_time(60, 40, 55, 1, 5, 57).bound == "timing");
}

}  // namespace gemmtune_tests::search_job_test_job_outputs
