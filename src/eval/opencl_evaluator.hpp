// SPDX-License-Identifier: Apache-2.0
// The evaluator that answers on a real OpenCL device: it builds a kernel template with one
// configuration's parameters as -D defines (binaries cached on disk), runs it on fixed-seed data,
// verifies the output against an Eigen reference and times it with profiling events.
//
// The kernel contract (see kernel_templates/README.md): column-major
// C = alpha * op(A) * op(B) + beta * C with op set by TRANSA/TRANSB; row-major problems are
// mapped onto it by swapping A and B, M and N and the transposes. Launch geometry and optional
// padding come from the template's `launch` declaration, so the evaluator knows no template.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/evaluator.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

class OpenClEvaluator : public DeviceEvaluator {
 public:
  // The evaluator of `spec` (an opencl-backend declaration). `profile` may be null; it is copied.
  OpenClEvaluator(KernelSpec spec, const Device& device, const DeviceProfile* profile,
                  EvaluatorOptions options);
  ~OpenClEvaluator() override;
  OpenClEvaluator(const OpenClEvaluator&) = delete;
  OpenClEvaluator& operator=(const OpenClEvaluator&) = delete;

  // Never throws for a bad configuration or a device failure: the Result's status says what
  // went wrong (invalid, device_limit, compile_failed, run_failed, wrong_result, unsupported).
  Result evaluate(const Problem& problem, const Configuration& config) override;
  Result evaluate_hinted(const Problem& problem, const Configuration& config,
                         const EvaluationHint& hint) override;
  // Compiles the valid configurations among `upcoming` in background threads.
  void prepare(const Problem& problem, const std::vector<Configuration>& upcoming) override;
  std::string description() const override;
  // Builds the valid configurations among `configs` into the binary cache on compile_threads
  // threads and waits for all of them: warms the cache ahead of a search, e.g. from several
  // processes at once where a driver serializes compilation within one process.
  CompileSummary compile(const Problem& problem,
                         const std::vector<Configuration>& configs) override;
  const KernelSpec& spec() const override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gemmtune
