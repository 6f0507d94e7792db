// SPDX-License-Identifier: Apache-2.0
// The outcome of evaluating one configuration: a value with a status, never an exception, so
// that a sweep goes on past a bad configuration.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/configuration.hpp"

namespace gemmtune {

enum class Status {
  kOk,
  kInvalid,        // breaks a constraint of the template
  kDeviceLimit,    // exceeds a device limit (work-group size, local memory, registers)
  kCompileFailed,  // the OpenCL build failed; the log is in `message`
  kRunFailed,      // enqueue or execution returned an error
  kWrongResult,    // output differs from the Eigen reference beyond tolerance, or NaN
  kTimeout,        // the worker did not answer in time (a hang)
  kCrashed,        // the worker process died (a driver crash)
  kUnsupported,    // the device lacks what the problem needs (e.g. cl_khr_fp16)
};

std::string to_string(Status s);  // "ok", "invalid", "device_limit", ...
Status parse_status(const std::string& s);

// The clock a time was taken with. kQueued is the figure of record: N calls queued back to back
// on one in-order queue (behind a busy-wait kernel on a GPU, so that the host's launches never
// starve it), from the busy kernel's end (else the first call's start) to the last call's end by
// the device's profiling events, divided by N. kHostQueued is the host clock over the same queued
// calls, taken where the device's events fail the timer check; kWholeCall is the host clock
// around one call and its finish; kUnrecorded, a time read from a file that does not say (every
// entry measured before the clocks were named).
enum class TimingClock { kUnrecorded, kQueued, kHostQueued, kWholeCall };

std::string to_string(TimingClock c);  // "unrecorded", "queued", "host-queued", ...
TimingClock parse_timing_clock(const std::string& s);

struct TimingStats {
  double median_ms = 0, min_ms = 0, mean_ms = 0, max_ms = 0;  // per call
  double cv = 0;                // coefficient of variation (stddev / mean)
  int runs = 0;                 // timed samples (each of `calls` queued calls)
  double kernel_median_ms = 0;  // main kernel only, without helper kernels
  TimingClock clock = TimingClock::kUnrecorded;
  int calls = 0;           // calls per sample (kQueued, kHostQueued)
  std::string clock_note;  // why the clock differs from the one asked for ("" = it does not)
  // Stopped before the settings' minimum because it was slower than a search's bound
  // (EvaluationHint): a figure good enough to rank, with fewer samples.
  bool stopped_above = false;
  // Samples taken again because the host queued the calls more slowly than the busy-wait kernel
  // ran (host_outran_busy_wait): a device that idled inside the timed span.
  int retaken_samples = 0;
};

// Resource figures of a compiled kernel; `source` says whether each is measured or estimated.
struct ResourceUsage {
  std::optional<int64_t> local_mem_bytes;    // CL_KERNEL_LOCAL_MEM_SIZE
  std::optional<int64_t> private_mem_bytes;  // CL_KERNEL_PRIVATE_MEM_SIZE
  std::optional<int64_t> registers;          // from the vendor's compiler output
  std::optional<int64_t> spills;
  std::optional<int64_t> max_work_group_size;  // CL_KERNEL_WORK_GROUP_SIZE: this kernel's limit
  std::string source;                          // e.g. "CL_KERNEL_*", "ptxas", "AMDGPU metadata"
};

// Wall-clock milliseconds of the evaluating process's own steps, so that a journal says where an
// evaluation's time went (all 0 where not recorded: a replay, a recording, an older journal): the
// program made ready (from memory, the binary cache or a build) with its kernels and arguments,
// the checked call (C reset, the call, C read back and compared), and the timed samples with
// their warm-up (every queued call of every sample, which the per-call times do not show).
struct EvaluationSteps {
  double program_ms = 0, verify_ms = 0, timing_ms = 0;
  bool recorded() const { return program_ms > 0 || verify_ms > 0 || timing_ms > 0; }
};

struct Result {
  Configuration config;
  Status status = Status::kOk;
  TimingStats time;
  double gflops = 0;
  double max_error = 0;  // max |C - C_ref| scaled by the tolerance rule's denominator
  double tolerance = 0;
  std::string message;  // reason for a failure, in words
  bool binary_cached = false;
  double compile_ms = 0;
  bool helper_kernels = false;  // padding/copy kernels ran and are included in the time
  ResourceUsage usage;
  EvaluationSteps steps;

  bool ok() const { return status == Status::kOk; }
  // Device time of the timed repetitions (0 for a failure, which measured nothing): each of the
  // `runs` samples timed `calls` calls (a recording without the count timed one a sample).
  double measuring_ms() const {
    return ok() ? std::max(1, time.runs) * std::max(1, time.calls) * std::max(0.0, time.mean_ms)
                : 0.0;
  }
  static Result failure(const Configuration& c, Status s, std::string message) {
    Result r;
    r.config = c;
    r.status = s;
    r.message = std::move(message);
    return r;
  }
};

void to_json(nlohmann::json& j, const TimingStats& t);
void from_json(const nlohmann::json& j, TimingStats& t);
void to_json(nlohmann::json& j, const ResourceUsage& u);
void from_json(const nlohmann::json& j, ResourceUsage& u);
void to_json(nlohmann::json& j, const Result& r);
void from_json(const nlohmann::json& j, Result& r);

}  // namespace gemmtune
