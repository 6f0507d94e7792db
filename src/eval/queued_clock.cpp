// SPDX-License-Identifier: Apache-2.0
#include "src/eval/queued_clock.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/timing_stats.hpp"

namespace gemmtune {

namespace {

using Clock = std::chrono::steady_clock;

// One work-item spinning on a dependent chain the compiler cannot fold; the store that never
// happens keeps the loop alive.
constexpr const char* kBusyWaitSource = R"CLC(
__kernel void gemmtune_busy_wait(__global uint* sink, const uint iterations) {
  uint x = (uint)get_global_id(0) + 1u;
  for (uint i = 0; i < iterations; ++i) x = x * 1664525u + 1013904223u;
  if (x == 0u) sink[0] = x;
}
)CLC";
constexpr cl_uint kCalibrationIterations = 1u << 16;
// The busy kernel outlasts the host's enqueueing of the batch by this factor, and lasts at
// least kMinBusyMs; the first batch assumes kFirstEnqueueMsPerCall of host time per call.
constexpr double kBusyMargin = 2.0;
constexpr double kMinBusyMs = 0.2;
constexpr double kFirstEnqueueMsPerCall = 0.02;
constexpr double kMaxBusyIterations = 2e9;
// Device and host clocks may disagree by this much over one batch without either being wrong.
constexpr double kHostSlackFraction = 0.02;
constexpr double kHostSlackMs = 0.05;
// A result may imply at most this multiple of the profile's peak: beyond it the timer, not the
// kernel, is what was measured.
constexpr double kPeakMargin = 1.25;
// Far above any device's FP32 or FP16 rate per compute unit and clock cycle (an H100 SM does 256
// FP32 flops a cycle): a bound no honest timer crosses.
constexpr double kImpossibleFlopsPerCuCycle = 4096;

double ms_between(cl_ulong start_ns, cl_ulong end_ns) {
  return (static_cast<double>(end_ns) - static_cast<double>(start_ns)) * 1e-6;
}

}  // namespace

bool host_outran_busy_wait(cl_ulong busy_end_ns, cl_ulong last_queued_ns, cl_ulong last_end_ns) {
  if (last_queued_ns == 0 || last_queued_ns > last_end_ns) return false;
  return last_queued_ns > busy_end_ns;
}

std::optional<std::string> implausible_device_time(double device_ms, double host_ms,
                                                   double rate_gflops, double max_gflops) {
  if (!(device_ms > 0)) {
    return fmt::format("the profiling events gave {:g} ms for calls the host saw take {:.3f} ms",
                       device_ms, host_ms);
  }
  if (device_ms > host_ms * (1 + kHostSlackFraction) + kHostSlackMs) {
    return fmt::format(
        "the profiling events gave {:.3f} ms for calls the host saw take only {:.3f} ms", device_ms,
        host_ms);
  }
  if (max_gflops > 0 && rate_gflops > max_gflops) {
    return fmt::format(
        "the profiling events imply {:.0f} GFLOPS, above the {:.0f} GFLOPS this "
        "device could reach at most",
        rate_gflops, max_gflops);
  }
  return std::nullopt;
}

double impossible_rate_gflops(const DeviceInfo& device) {
  if (device.compute_units == 0 || device.max_clock_mhz == 0) return 0;
  return double(device.compute_units) * double(device.max_clock_mhz) * 1e-3 *
         kImpossibleFlopsPerCuCycle;
}

double max_plausible_gflops(const DeviceInfo& device, const DeviceProfile* profile,
                            Precision precision) {
  if (profile) {
    if (auto peak = peak_gflops(*profile, precision, device.compute_units, device.max_clock_mhz)) {
      if (*peak > 0) return *peak * kPeakMargin;
    }
  }
  return impossible_rate_gflops(device);
}

class QueuedClock::Impl {
 public:
  Impl(const cl::Context& context, const Device& device)
      : context_(context),
        device_(device),
        gpu_(device.info.type == "gpu" || device.info.type == "accelerator") {}

  TimingStats measure(cl::CommandQueue& queue, const MeasureSettings& s, double flops,
                      double max_gflops, const EnqueueCall& call, double stop_above_ms);
  const std::string& reason() const { return distrust_reason_; }
  int calls_for(double call_ms, const MeasureSettings& s) const;
  QueuedClock::Sample device_sample(cl::CommandQueue& queue, int calls, double flops,
                                    double max_gflops, const EnqueueCall& call) {
    max_gflops_ = max_gflops;
    if (!trusted_) return host_sample(queue, calls, call);
    return take_device_sample(queue, calls, flops, call).sample;
  }
  QueuedClock::Sample host_sample(cl::CommandQueue& queue, int calls, const EnqueueCall& call);

 private:
  struct Taken {
    QueuedClock::Sample sample;
    bool device_clock = false;
  };
  double one_call_ms(cl::CommandQueue& queue, const EnqueueCall& call);
  Taken take_device_sample(cl::CommandQueue& queue, int calls, double flops,
                           const EnqueueCall& call);
  cl_uint busy_iterations(cl::CommandQueue& queue, double target_ms);
  void distrust(const std::string& why);

  cl::Context context_;
  Device device_;
  double max_gflops_ = 0;  // of the measurement in progress
  bool gpu_;
  bool trusted_ = true;
  std::string distrust_reason_;
  // The busy-wait kernel: built on first need, on GPUs only.
  bool busy_tried_ = false;
  std::optional<cl::Kernel> busy_;
  cl::Buffer busy_sink_;
  double busy_ns_per_iteration_ = 0;
  double enqueue_ms_per_call_ = kFirstEnqueueMsPerCall;
};

void QueuedClock::Impl::distrust(const std::string& why) {
  trusted_ = false;
  distrust_reason_ = why;
  // Once per device and driver per process: every evaluator of the device meets the same events.
  static std::mutex mutex;
  static std::set<std::string> told;
  const std::string key = device_.info.name + "|" + device_.info.driver_version;
  std::lock_guard<std::mutex> lock(mutex);
  if (told.insert(key).second) {
    spdlog::warn("{}: {}; timing with the host clock over queued calls instead", device_.info.name,
                 why);
  }
}

double QueuedClock::Impl::one_call_ms(cl::CommandQueue& queue, const EnqueueCall& call) {
  const auto t0 = Clock::now();
  call(queue, nullptr);
  queue.finish();
  return ms_since(t0);
}

cl_uint QueuedClock::Impl::busy_iterations(cl::CommandQueue& queue, double target_ms) {
  if (!busy_tried_) {
    busy_tried_ = true;
    try {
      cl::Program program(context_, kBusyWaitSource);
      program.build(std::vector<cl::Device>{device_.device});
      cl::Kernel kernel(program, "gemmtune_busy_wait");
      busy_sink_ = cl::Buffer(context_, CL_MEM_READ_WRITE, sizeof(cl_uint));
      kernel.setArg(0, busy_sink_);
      kernel.setArg(1, kCalibrationIterations);
      cl::Event e;
      queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(1), cl::NDRange(1), nullptr,
                                 &e);
      queue.finish();
      const double ms = ms_between(e.getProfilingInfo<CL_PROFILING_COMMAND_START>(),
                                   e.getProfilingInfo<CL_PROFILING_COMMAND_END>());
      if (ms > 0) {
        busy_ns_per_iteration_ = ms * 1e6 / double(kCalibrationIterations);
        busy_ = kernel;
      }
    } catch (const cl::Error& e) {
      spdlog::debug("busy-wait kernel unavailable ({}): calls are queued without it", e.what());
    }
  }
  if (!busy_) return 0;
  const double iterations = std::min(kMaxBusyIterations, target_ms * 1e6 / busy_ns_per_iteration_);
  return static_cast<cl_uint>(std::max(1.0, iterations));
}

QueuedClock::Impl::Taken QueuedClock::Impl::take_device_sample(cl::CommandQueue& queue, int calls,
                                                               double flops,
                                                               const EnqueueCall& call) {
  // On a GPU the busy kernel hides the host's enqueueing. Elsewhere (a CPU device runs what the
  // host enqueues; PoCL's event of a one-item kernel ends late) one more call, untimed, marks
  // where the timed calls start: its end. A batch the host queued past the busy kernel's end is
  // taken again with a longer one (host_outran_busy_wait).
  cl::Event lead, last;
  double host_ms = 0;
  int retakes = 0;
  for (double margin = kBusyMargin;; margin *= 2, ++retakes) {
    const double busy_ms = std::max(kMinBusyMs, margin * enqueue_ms_per_call_ * calls);
    const cl_uint iterations = gpu_ ? busy_iterations(queue, busy_ms) : 0;
    const auto t0 = Clock::now();
    if (iterations > 0) {
      busy_->setArg(1, iterations);
      queue.enqueueNDRangeKernel(*busy_, cl::NullRange, cl::NDRange(1), cl::NDRange(1), nullptr,
                                 &lead);
    } else {
      call(queue, &lead);
    }
    for (int i = 0; i < calls; ++i) call(queue, i == calls - 1 ? &last : nullptr);
    const double enqueue_ms = ms_since(t0);
    queue.finish();
    host_ms = ms_since(t0);
    enqueue_ms_per_call_ = enqueue_ms / calls;
    const bool outran = iterations > 0 &&
                        host_outran_busy_wait(lead.getProfilingInfo<CL_PROFILING_COMMAND_END>(),
                                              last.getProfilingInfo<CL_PROFILING_COMMAND_QUEUED>(),
                                              last.getProfilingInfo<CL_PROFILING_COMMAND_END>());
    if (!outran || retakes == kMaxOutranRetakes) break;
  }

  const cl_ulong start = lead.getProfilingInfo<CL_PROFILING_COMMAND_END>();
  const cl_ulong last_start = last.getProfilingInfo<CL_PROFILING_COMMAND_START>();
  const cl_ulong end = last.getProfilingInfo<CL_PROFILING_COMMAND_END>();
  const double device_ms = ms_between(start, end);
  const double rate = device_ms > 0 ? flops * calls / (device_ms * 1e6) : 0;
  if (auto why = implausible_device_time(device_ms, host_ms, rate, max_gflops_)) {
    distrust(*why);
    return {host_sample(queue, calls, call), false};
  }
  Taken t;
  t.device_clock = true;
  t.sample.per_call_ms = device_ms / calls;
  t.sample.host_per_call_ms = host_ms / calls;
  t.sample.main_kernel_ms = std::max(0.0, ms_between(last_start, end));
  t.sample.retakes = retakes;
  return t;
}

QueuedClock::Sample QueuedClock::Impl::host_sample(cl::CommandQueue& queue, int calls,
                                                   const EnqueueCall& call) {
  const auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) call(queue, nullptr);
  queue.finish();
  Sample s;
  s.host_per_call_ms = s.per_call_ms = ms_since(t0) / calls;
  s.clock = TimingClock::kHostQueued;
  return s;
}

int QueuedClock::Impl::calls_for(double call_ms, const MeasureSettings& s) const {
  if (s.queued_calls > 0) return s.queued_calls;
  const int floor = gpu_ ? kMinGpuQueuedCalls : 1;
  const double wanted = call_ms > 0 ? std::ceil(kMinBatchMs / call_ms) : kMaxQueuedCalls;
  return static_cast<int>(std::clamp(wanted, double(floor), double(kMaxQueuedCalls)));
}

TimingStats QueuedClock::Impl::measure(cl::CommandQueue& queue, const MeasureSettings& s,
                                       double flops, double max_gflops, const EnqueueCall& call,
                                       double stop_above_ms) {
  max_gflops_ = max_gflops;
  double call_ms = 0;
  for (int i = 0; i < std::max(1, s.warmup_runs); ++i) call_ms = one_call_ms(queue, call);
  const bool whole_call = s.clock == TimingClock::kWholeCall;
  const int calls = whole_call ? 1 : calls_for(call_ms, s);
  const bool device_asked = s.clock == TimingClock::kQueued;
  std::vector<double> per_call, mains;
  double host_sum = 0;
  int retaken = 0;
  const int max_runs = std::max(s.max_runs, 1);
  bool device_clock = device_asked && trusted_;
  auto stable = [&] {
    return s.stable_cv > 0 && per_call.size() >= 2 &&
           summarize_times(per_call, {}).cv < s.stable_cv;
  };
  // Stop once even the fastest sample is slower than the bound: noise only ever slows a sample
  // (a host that falls behind the queue leaves the device idle inside one), so one slow sample
  // among fast ones must not end a configuration that is as fast as the best.
  bool stopped_above = false;
  auto slower_than_bound = [&] {
    return stop_above_ms > 0 && !per_call.empty() &&
           *std::min_element(per_call.begin(), per_call.end()) > stop_above_ms;
  };
  while (
      static_cast<int>(per_call.size()) < max_runs &&
      (static_cast<int>(per_call.size()) < s.min_runs || (host_sum < s.min_time_ms && !stable()))) {
    if (slower_than_bound()) {
      stopped_above = true;
      break;
    }
    Sample sample;
    if (whole_call) {
      sample.per_call_ms = sample.host_per_call_ms = one_call_ms(queue, call);
    } else if (device_clock) {
      const Taken t = take_device_sample(queue, calls, flops, call);
      if (!t.device_clock) {
        // The events failed the check: every sample of this measurement on the host clock.
        device_clock = false;
        per_call.clear();
        mains.clear();
      }
      sample = t.sample;
    } else {
      sample = host_sample(queue, calls, call);
    }
    per_call.push_back(sample.per_call_ms);
    retaken += sample.retakes;
    if (device_clock) mains.push_back(sample.main_kernel_ms);
    host_sum += sample.host_per_call_ms * calls;
  }
  TimingStats t = summarize_times(per_call, mains);
  t.calls = calls;
  t.stopped_above = stopped_above;
  t.retaken_samples = retaken;
  t.clock = whole_call     ? TimingClock::kWholeCall
            : device_clock ? TimingClock::kQueued
                           : TimingClock::kHostQueued;
  if (device_asked && !device_clock) t.clock_note = distrust_reason_;
  return t;
}

QueuedClock::QueuedClock(const cl::Context& context, const Device& device)
    : impl_(std::make_unique<Impl>(context, device)) {}

QueuedClock::~QueuedClock() = default;

TimingStats QueuedClock::measure(cl::CommandQueue& queue, const MeasureSettings& settings,
                                 double flops_per_call, double max_gflops, const EnqueueCall& call,
                                 double stop_above_ms) {
  return impl_->measure(queue, settings, flops_per_call, max_gflops, call, stop_above_ms);
}

const std::string& QueuedClock::distrust_reason() const {
  return impl_->reason();
}

int QueuedClock::calls_for(double call_ms, const MeasureSettings& settings) const {
  return impl_->calls_for(call_ms, settings);
}

QueuedClock::Sample QueuedClock::device_sample(cl::CommandQueue& queue, int calls,
                                               double flops_per_call, double max_gflops,
                                               const EnqueueCall& call) {
  return impl_->device_sample(queue, calls, flops_per_call, max_gflops, call);
}

QueuedClock::Sample QueuedClock::host_sample(cl::CommandQueue& queue, int calls,
                                             const EnqueueCall& call) {
  return impl_->host_sample(queue, calls, call);
}

}  // namespace gemmtune
