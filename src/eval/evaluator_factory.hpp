// SPDX-License-Identifier: Apache-2.0
// The one place that turns a kernel name into the evaluator that can measure it: the kernel's
// declaration names its backend (opencl: our templates, compiled and launched by gemmtune;
// clblast: CLBlast's own kernels, configured through clblast::OverrideParameters), and every
// command, the worker and the library ask here instead of building evaluators by hand.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

// How one configuration is timed, the same for every backend.
struct MeasureSettings {
  int warmup_runs = 1;
  int min_runs = 3;  // samples until both min_runs and min_time_ms are reached
  double min_time_ms = 20.0;
  int max_runs = 200;
  uint64_t data_seed = 42;  // fixed-seed input data
  // kQueued (device events over queued calls, checked against the host clock), kHostQueued
  // or kWholeCall (src/eval/queued_clock.hpp).
  TimingClock clock = TimingClock::kQueued;
  int queued_calls = 0;  // calls per sample; 0 = enough for a batch of kMinBatchMs (20+ on a GPU)
  // Above 0: once min_runs samples are in, stop as soon as their coefficient of variation is
  // below this, before min_time_ms (a search measures what the statistics need, no more).
  double stable_cv = 0;
};

// The timing settings as text, for keys of cached results measured under them.
std::string timing_identity(const MeasureSettings& m);

struct EvaluatorOptions {
  std::string templates_dir;  // folder of kernel declarations and sources
  std::string cache_dir;      // binary cache; "" = the per-user default, "none" disables
  int compile_threads = 0;    // 0 = hardware concurrency; background compiles in prepare()
  MeasureSettings measure;
};

// What a device evaluator adds to Evaluator: the declaration it measures and ahead-of-time
// compilation (a no-op for backends that compile inside another library).
class DeviceEvaluator : public Evaluator {
 public:
  struct CompileSummary {
    size_t built = 0, cached = 0, failed = 0, invalid = 0;
    // Milliseconds of the builds in the driver and in the binary cache (BuildOutcome's).
    double driver_ms = 0, cache_ms = 0;
  };
  virtual const KernelSpec& spec() const = 0;
  virtual CompileSummary compile(const Problem& problem,
                                 const std::vector<Configuration>& configs) = 0;
};

// The evaluator for `kernel` (a declaration in options.templates_dir) on `device`, chosen by the
// declaration's backend. `profile` may be null. Throws Error for an unknown kernel, a broken
// declaration, or a backend this build lacks (CLBlast not linked).
std::unique_ptr<DeviceEvaluator> make_evaluator(const std::string& kernel, const Device& device,
                                                const DeviceProfile* profile,
                                                const EvaluatorOptions& options);

}  // namespace gemmtune
