// SPDX-License-Identifier: Apache-2.0
// The timer check of the queued clock on recorded figures: what no honest profiling timer gives
// (a span of 0, a span longer than the host saw, a rate past what the device can do), and the
// bound a device's description sets.
#include <catch2/catch.hpp>

#include "src/eval/queued_clock.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_queued_clock {

using namespace gemmtune;

TEST_CASE("queued clock: spans a timer cannot give are refused, with the reason",
          "[queued_clock]") {
  // rusticl on a CPU: events 0 ns apart for calls that took the host 3 ms.
  const auto zero = implausible_device_time(0, 3.0, 0, 0);
  REQUIRE(zero);
  CHECK_THAT(*zero, Catch::Contains("0 ms"));
  // Longer on the device than the host saw from the first enqueue to the finish.
  const auto longer = implausible_device_time(5.0, 3.0, 10, 0);
  REQUIRE(longer);
  CHECK_THAT(*longer, Catch::Contains("only 3.000 ms"));
  // A rate past the device's bound.
  const auto fast = implausible_device_time(1.0, 3.0, 40774, 192);
  REQUIRE(fast);
  CHECK_THAT(*fast, Catch::Contains("40774 GFLOPS") && Catch::Contains("192 GFLOPS"));
  // A plausible span passes, the host's own clock jitter included; without a bound, any rate.
  CHECK_FALSE(implausible_device_time(2.9, 3.0, 100, 192));
  CHECK_FALSE(implausible_device_time(3.0, 3.0, 100, 192));
  CHECK_FALSE(implausible_device_time(1.0, 3.0, 1e9, 0));
}

TEST_CASE("queued clock: a device's description bounds its rate, or says nothing",
          "[queued_clock]") {
  DeviceInfo d;
  CHECK(impossible_rate_gflops(d) == 0);  // no compute units or clock: no bound
  d.compute_units = 132;
  d.max_clock_mhz = 1980;
  const double bound = impossible_rate_gflops(d);
  // Far above an H100's FP32 peak (about 67 TFLOPS), so that no real result reaches it.
  CHECK(bound > 10 * 67000);
  // Without a profile the bound is the description's.
  CHECK(max_plausible_gflops(d, nullptr, Precision::kFP32) == bound);
}

}  // namespace gemmtune_tests::src_eval_test_queued_clock
