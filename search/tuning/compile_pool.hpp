// SPDX-License-Identifier: Apache-2.0
// A pool of compile worker processes in front of an evaluator. Some OpenCL compilers (NVIDIA's,
// measured in results/h100/compile/README.md) barely scale with threads inside one process but
// scale with processes, so the configurations the tuner announces through prepare() are built by
// P separate processes (`gemmtune compile-worker`) into the shared binary cache, and the wrapped
// evaluator then loads each from the cache instead of compiling it.
//
// The pool only ever saves time, never changes a result: a configuration the measurement reaches
// before a worker took it is taken back (the evaluator builds it as it always did), one a worker
// is building is waited for (at most `wait_s`), and a build that failed in the pool is built again
// by the evaluator, which reports the failure as before. Workers that die are restarted; when
// they keep dying the pool stops and the evaluator compiles everything itself again.
//
// Protocol of a compile worker, one JSON object per line: worker → pool first {"ready": true} or
// {"fatal": "message"}; pool → worker {"problem": P, "config": C}, P naming the kernel inside;
// worker → pool {"outcome": "built" | "cached" | "failed" | "invalid" | "skipped", "ms": T,
// "driver_ms": D, "cache_ms": B, "message": "..."}: T the whole request in the worker, D of it in
// the driver's build, B in the binary cache.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/eval/evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

struct CompilePoolOptions {
  // A compile worker's command line: requests on its stdin, answers on its stdout.
  std::vector<std::string> argv;
  // The template the wrapped evaluator measures: requests name it inside their problem.
  std::string kernel = kDefaultKernel;
  // The template's runtime parameters (kernel arguments, not defines): configurations that differ
  // only there are one build.
  RuntimeParameters runtime_parameters;
  int processes = 1;
  // How long evaluate() waits for a configuration a worker is building before building it itself.
  double wait_s = 60;
  // A build running longer is taken for a hung compiler: its worker is killed and restarted.
  double build_timeout_s = 600;
};

class CompilePool : public Evaluator {
 public:
  struct Stats {
    size_t built = 0;       // compiled by a worker and stored in the cache
    size_t cached = 0;      // already in the cache when a worker reached it
    size_t failed = 0;      // did not build in a worker (built again by the evaluator)
    size_t invalid = 0;     // not a valid configuration on the device: nothing to build
    size_t taken_back = 0;  // reached by the measurement before a worker started it
    size_t waited = 0;      // evaluations that waited for a worker to finish
    size_t starts = 0;      // worker processes started, restarts included
    bool stopped = false;   // the workers kept dying: the evaluator compiles again
    // Where the time went. build_s: the workers' builds, as they measured them (driver_s of it in
    // the driver's build); wait_s: the measurement waiting for a build in progress; load_s: the
    // measurement making a program of what the workers built (the binary cache's entry, and on
    // NVIDIA the driver's step from PTX to machine code, unless its own cache holds it).
    double build_s = 0, driver_s = 0, wait_s = 0, load_s = 0;
  };

  // Wraps `inner`; the workers start with the first prepare().
  CompilePool(std::unique_ptr<Evaluator> inner, CompilePoolOptions options);
  ~CompilePool() override;
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  Result evaluate(const Problem& problem, const Configuration& config) override;
  Result evaluate_hinted(const Problem& problem, const Configuration& config,
                         const EvaluationHint& hint) override;
  // Queues the configurations for the workers (the wrapped evaluator is not asked to compile them
  // too; it is when the pool has stopped).
  void prepare(const Problem& problem, const std::vector<Configuration>& upcoming) override;
  // False while a worker has the configuration's build queued or under way.
  bool ready(const Problem& problem, const Configuration& config) override;
  std::string description() const override;

  Stats stats() const;
  Evaluator& inner() { return *inner_; }

  // Another device of the same model measured beside this pool's own (a search over several
  // devices): it waits for the pool's build of a configuration as evaluate() does, then measures
  // on `other`, finding the binary in the shared cache. The pool must outlive it.
  std::unique_ptr<Evaluator> share(std::unique_ptr<Evaluator> other);

 private:
  class Impl;
  std::unique_ptr<Evaluator> inner_;
  int processes_ = 0;
  std::unique_ptr<Impl> impl_;  // declared last: its workers end before the evaluator does
};

void to_json(nlohmann::json& j, const CompilePool::Stats& s);

}  // namespace gemmtune
