// SPDX-License-Identifier: Apache-2.0
#include "src/eval/evaluator_factory.hpp"

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/eval/clblast_evaluator.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "src/eval/queued_clock.hpp"

namespace gemmtune {

std::unique_ptr<DeviceEvaluator> make_evaluator(const std::string& kernel, const Device& device,
                                                const DeviceProfile* profile,
                                                const EvaluatorOptions& options) {
  KernelSpec spec = KernelSpec::load_named(options.templates_dir, kernel);
  switch (spec.backend()) {
    case Backend::kClblast:
      return make_clblast_evaluator(std::move(spec), device, profile, options);
    case Backend::kOpenCl:
      break;
  }
  return std::make_unique<OpenClEvaluator>(std::move(spec), device, profile, options);
}

}  // namespace gemmtune

namespace gemmtune {

std::string timing_identity(const MeasureSettings& m) {
  return fmt::format(
      "clock={} calls={} warmup={} min_runs={} min_time_ms={:g} max_runs={} stable_cv={:g} seed={} "
      "stop={} outran_retakes={}",
      to_string(m.clock), m.queued_calls, m.warmup_runs, m.min_runs, m.min_time_ms, m.max_runs,
      m.stable_cv, m.data_seed, kStopRule, kMaxOutranRetakes);
}

}  // namespace gemmtune
