// SPDX-License-Identifier: Apache-2.0
// The timer check of the queued clock on recorded figures: what no honest profiling timer gives
// (a span of 0, a span longer than the host saw, a rate past what the device can do), and the
// bound a device's description sets; on the test device, when a measurement stops early.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "src/eval/queued_clock.hpp"
#include "tests/test_support.hpp"

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

TEST_CASE("queued clock: a host that queued past the busy wait's end is caught", "[queued_clock]") {
  // Device nanoseconds: the busy wait ends at 1000, the last call ends at 5000.
  CHECK(host_outran_busy_wait(1000, 1200, 5000));       // queued after the wait had ended
  CHECK_FALSE(host_outran_busy_wait(1000, 900, 5000));  // queued while the device was busy
  CHECK_FALSE(host_outran_busy_wait(1000, 1000, 5000));
  // Events that cannot say: no queued time, or one on another time base (after the call's end).
  CHECK_FALSE(host_outran_busy_wait(1000, 0, 5000));
  CHECK_FALSE(host_outran_busy_wait(1000, 9000, 5000));
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

TEST_CASE("queued clock: one slow sample among fast ones does not stop a measurement",
          "[queued_clock][pocl]") {
  const auto& td = test::test_device();
  if (!td.device) return test::unavailable("no OpenCL device");
  const Device& device = *td.device;
  cl::Context context(device.device);
  cl::CommandQueue queue(context, device.device, CL_QUEUE_PROFILING_ENABLE);
  cl::Program program(context,
                      "__kernel void add_one(__global float* x) { x[get_global_id(0)] += 1.0f; }");
  program.build({device.device});
  cl::Kernel kernel(program, "add_one");
  cl::Buffer buffer(context, CL_MEM_READ_WRITE, 1024 * sizeof(float));
  kernel.setArg(0, buffer);
  // Each call one launch; the host stalls once, before call `stall_at` (0: never), which leaves
  // the device idle inside that call's sample, as a host descheduled while it queues does.
  int calls = 0, stall_at = 0;
  constexpr auto kStall = std::chrono::milliseconds(120);
  const QueuedClock::EnqueueCall call = [&](cl::CommandQueue& q, cl::Event* last) {
    if (++calls == stall_at) std::this_thread::sleep_for(kStall);
    q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(1024), cl::NullRange, nullptr, last);
  };
  MeasureSettings settings;
  settings.warmup_runs = 1;
  settings.min_runs = 5;
  settings.max_runs = 5;
  settings.min_time_ms = 0;
  settings.queued_calls = 4;
  QueuedClock clock(context, device);
  const double quiet_ms = clock.measure(queue, settings, 0, 0, call).median_ms;
  REQUIRE(quiet_ms > 0);
  // A bound far above a quiet call's time and far below the stalled sample's (the stall shared
  // by four calls).
  const double bound_ms = 5 * quiet_ms + 2.0;
  REQUIRE(bound_ms < 120.0 / 4 / 2);

  // The stall inside the second sample (its calls follow the warm-up and the first sample's):
  // the measurement goes on, and its median is a quiet call's.
  calls = 0;
  stall_at = 1 + 2 * (settings.queued_calls + 1) - 1;
  const auto stalled = clock.measure(queue, settings, 0, 0, call, bound_ms);
  INFO("quiet " << quiet_ms << " ms; stalled sample's max " << stalled.max_ms << " ms");
  CHECK(calls > stall_at);
  CHECK(stalled.max_ms > bound_ms);  // the stall did slow its sample
  CHECK_FALSE(stalled.stopped_above);
  CHECK(stalled.runs == 5);
  CHECK(stalled.median_ms < bound_ms);

  // A configuration slower than the bound in every sample stops after its first.
  calls = 0;
  stall_at = 0;
  const auto slow = clock.measure(queue, settings, 0, 0, call, quiet_ms / 100);
  CHECK(slow.stopped_above);
  CHECK(slow.runs == 1);
}

}  // namespace gemmtune_tests::src_eval_test_queued_clock
