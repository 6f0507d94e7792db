// SPDX-License-Identifier: Apache-2.0
// The simulated clock of search-eval's time axis: builds in compile processes from when they are
// proposed, measurements one at a time in proposal order once their build is done.
#include <catch2/catch.hpp>

#include "search/tuning/strategy_eval.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_tuning_test_strategy_eval_replay_clock {

using namespace gemmtune;

namespace {

Result recorded(int64_t id, double compile_ms, double mean_ms, int runs) {
  Result r;
  r.config = {{"ID", id}};
  r.compile_ms = compile_ms;
  r.time.mean_ms = r.time.median_ms = mean_ms;
  r.time.runs = runs;
  return r;
}

}  // namespace

TEST_CASE("the replay clock builds in its processes and measures one at a time",
          "[search-eval][clock]") {
  const Result a = recorded(1, 1000, 100, 5), b = recorded(2, 3000, 200, 5),
               c = recorded(3, 1000, 100, 10);
  SECTION("two processes build ahead of the device") {
    ReplayClock clock(2);
    clock.proposed(a);                        // process 1: 0-1 s
    clock.proposed(b);                        // process 2: 0-3 s
    clock.proposed(c);                        // process 1: 1-2 s
    CHECK(clock.measured(a) == Approx(1.5));  // built at 1 s, 5 × 0.1 s
    CHECK(clock.measured(b) == Approx(4.0));  // waits for its build until 3 s, then 1 s
    CHECK(clock.measured(c) == Approx(5.0));  // built long ago: 10 × 0.1 s
  }
  SECTION("without processes the measuring process builds each in turn") {
    ReplayClock clock(0);
    clock.proposed(a);
    clock.proposed(b);
    CHECK(clock.measured(a) == Approx(1.5));
    CHECK(clock.measured(b) == Approx(1.5 + 3 + 1));
  }
  SECTION("a failure takes its build time and measures nothing") {
    ReplayClock clock(1);
    const Result failed = Result::failure({{"ID", 4}}, Status::kCompileFailed, "x");
    Result slow_fail = failed;
    slow_fail.compile_ms = 2000;
    clock.proposed(slow_fail);
    clock.proposed(a);  // after the failed build: 2-3 s
    CHECK(clock.measured(slow_fail) == Approx(2.0));
    CHECK(clock.measured(a) == Approx(3.5));
  }
}

}  // namespace gemmtune_tests::search_tuning_test_strategy_eval_replay_clock
