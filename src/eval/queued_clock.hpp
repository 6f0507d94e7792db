// SPDX-License-Identifier: Apache-2.0
// The one clock for a kernel's time (TimingClock::kQueued): N calls queued back to back on one
// in-order queue, behind a busy-wait kernel on a GPU so that the host's launches never starve the
// device, timed from the busy kernel's end (elsewhere one more call's end) to the last call's end
// by the device's profiling events, divided by N. This is how cuBLAS's GPU time is taken.
//
// A timer is evidence, not truth: every sample's device span is checked against the host clock
// of the same calls (a span of 0, a span longer than the host's, or a rate above what the device
// can do is impossible). A device whose events fail the check is timed with the host clock over
// the queued calls from then on (kHostQueued), and the reason is logged once per device and kept
// in the timing statistics.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "src/core/result.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/device/opencl.hpp"
#include "src/eval/evaluator_factory.hpp"

namespace gemmtune {

// A batch of queued calls lasts at least this long, so that the clock's resolution and the
// launch of the batch do not show in the figure.
constexpr double kMinBatchMs = 1.0;
// How a measurement stops early (QueuedClock::measure): once even its fastest sample is slower
// than the bound. Part of the evaluation cache's key, so that results stopped under the rule
// before it (the samples' median, which one slow sample could push past the bound) are measured
// again.
constexpr const char* kStopRule = "fastest-sample";
// On a GPU a sample holds at least this many calls (the rule cuBLAS's figures are taken with).
constexpr int kMinGpuQueuedCalls = 20;
constexpr int kMaxQueuedCalls = 4096;

// Whether the host queued a batch's last call after the busy-wait kernel before the batch had
// ended (all three by the device's profiling clock): the device may then have idled between calls
// inside the timed span, which makes the sample slower than the calls. False where the events
// cannot say (a queued time of 0, or one after the last call's end: another time base).
bool host_outran_busy_wait(cl_ulong busy_end_ns, cl_ulong last_queued_ns, cl_ulong last_end_ns);
// A sample whose host outran the busy-wait kernel is taken again, with a longer busy wait, at most
// this many times; the last one counts whatever it shows. Part of the evaluation cache's key, so
// that results timed before the retakes are measured again.
constexpr int kMaxOutranRetakes = 2;

// Why a device span of `device_ms` cannot be the time of calls the host saw take `host_ms`, or
// nullopt when it can. `rate_gflops` is the rate the span implies; `max_gflops` (0 = unknown)
// what the device could do at most.
std::optional<std::string> implausible_device_time(double device_ms, double host_ms,
                                                   double rate_gflops, double max_gflops);

// A rate no device of this description can reach (0 when the device does not say enough): a
// bound for the timer check, far above any real peak.
double impossible_rate_gflops(const DeviceInfo& device);
// The most a result in `precision` may imply on `device`: its profile's peak with a margin for
// clocks above the stated one, else impossible_rate_gflops (0 = unknown). `profile` may be null.
double max_plausible_gflops(const DeviceInfo& device, const DeviceProfile* profile,
                            Precision precision);

class QueuedClock {
 public:
  // One GEMM call enqueued on `queue`; `last` (may be null) gets the event of its last launch.
  using EnqueueCall = std::function<void(cl::CommandQueue& queue, cl::Event* last)>;

  struct Sample {
    double per_call_ms = 0;       // by `clock`
    double host_per_call_ms = 0;  // the host clock over the same calls
    double main_kernel_ms = 0;    // the last call's last launch by its event (0 untrusted)
    int retakes = 0;              // batches taken again because the host outran the busy wait
    TimingClock clock = TimingClock::kQueued;
  };

  // `context` and `device` make the busy-wait kernel (GPUs and accelerators only).
  QueuedClock(const cl::Context& context, const Device& device);
  ~QueuedClock();
  QueuedClock(const QueuedClock&) = delete;
  QueuedClock& operator=(const QueuedClock&) = delete;

  // Times `settings` worth of samples of `call` on `queue`, which must have profiling enabled,
  // after settings.warmup_runs untimed calls. A sample whose events imply more than
  // `max_gflops` for `flops_per_call` (0 = no bound) fails the timer check. Above 0,
  // `stop_above_ms` ends the measurement as soon as even the fastest sample is slower than it a
  // call (EvaluationHint), with at least one sample.
  TimingStats measure(cl::CommandQueue& queue, const MeasureSettings& settings,
                      double flops_per_call, double max_gflops, const EnqueueCall& call,
                      double stop_above_ms = 0);

  // Why the device's events failed the check ("" while they pass).
  const std::string& distrust_reason() const;

  // The calls a sample queues for a call that takes `call_ms` alone: settings.queued_calls when
  // set, else enough for kMinBatchMs (at least kMinGpuQueuedCalls on a GPU).
  int calls_for(double call_ms, const MeasureSettings& settings) const;
  // One sample of `calls` queued calls on the device's clock (kHostQueued when its events are
  // not trusted, or fail the check now).
  Sample device_sample(cl::CommandQueue& queue, int calls, double flops_per_call, double max_gflops,
                       const EnqueueCall& call);
  // The host clock over `calls` queued calls, no busy-wait kernel before them: a call's host
  // cost where calls are small (kHostQueued).
  Sample host_sample(cl::CommandQueue& queue, int calls, const EnqueueCall& call);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmtune
