// SPDX-License-Identifier: Apache-2.0
// Builds the OpenCL programs of kernel templates for one device and context: the configuration's
// -D defines, the precision, transposes, batch layout and epilogue of the problem, the device
// profile's options; binaries cached on disk (BinaryCache) and the most recent programs in
// memory. Thread-safe: programs may be built from several threads and shared between them
// (a cl_program may be; each thread makes its own cl_kernel from it).
#pragma once

#include <condition_variable>
#include <deque>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/device/binary_cache.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/device/opencl.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

struct BuildOutcome {
  bool ok = false;
  cl::Program program;
  std::string log;  // the build log, or why the build failed
  bool cached = false;
  double compile_ms = 0;
  // Where compile_ms went: the driver (creating the program and clBuildProgram, from source or
  // from a cached binary) and the binary cache around it (reading an entry; fetching the log and
  // binary, writing the entry). What is left is gemmtune's own.
  double driver_ms = 0;
  double cache_ms = 0;
};

class ProgramBuilder {
 public:
  // `profile` may be null; it is copied. `cache_dir` as EvaluatorOptions::cache_dir;
  // `compile_threads` (0 = hardware concurrency) serve prefetch() and compile_all().
  ProgramBuilder(const Device& device, cl::Context context, const DeviceProfile* profile,
                 std::string templates_dir, const std::string& cache_dir, int compile_threads);
  ~ProgramBuilder();
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;

  const Device& device() const { return device_; }
  const cl::Context& context() const { return context_; }
  const DeviceLimits& limits() const { return limits_; }
  const std::optional<DeviceProfile>& profile() const { return profile_; }

  // The program of `config` of `spec` for `problem`: from memory, from a background build that
  // prefetch() started, from the binary cache, or compiled now. A failed build is an outcome with
  // ok false and the log, never an exception.
  BuildOutcome program(const KernelSpec& spec, const Problem& problem, const Configuration& config);
  // Starts background builds of the configurations that pass `spec`'s checks on this device.
  void prefetch(const KernelSpec& spec, const Problem& problem,
                const std::vector<Configuration>& configs);
  // Builds the configurations that pass the checks into the binary cache on compile_threads
  // threads and waits for all of them.
  DeviceEvaluator::CompileSummary compile_all(const KernelSpec& spec, const Problem& problem,
                                              const std::vector<Configuration>& configs);
  // The padding helper (PadHelper, kernel_source.hpp) in the element type of `precision`. Throws
  // Error(kDevice) when it does not build.
  cl::Program pad_program(Precision precision);
  // A program from `source` (complete, no #include) built with `options` and the profile's, via
  // the binary cache. Throws Error(kDevice) naming `label` with the log when it does not build.
  cl::Program source_program(const std::string& source, const std::string& options,
                             const std::string& label);

 private:
  struct Request {
    std::string source, options, identity, key, label;
  };
  struct Job {
    Request request;
    std::promise<BuildOutcome> promise;
  };
  Request request_for(const KernelSpec& spec, const Problem& problem, const Configuration& config);
  const std::string& source_of(const std::string& file);
  BuildOutcome build(const Request& request);
  BuildOutcome obtain(const Request& request);
  void remember(const std::string& key, const BuildOutcome& outcome);
  void worker_loop();
  int threads() const;

  Device device_;
  cl::Context context_;
  std::optional<DeviceProfile> profile_;
  std::string templates_dir_;
  int compile_threads_;
  DeviceLimits limits_;
  std::string extra_options_;
  BinaryCache cache_;
  bool runtime_keeps_builds_ = false;

  std::mutex mutex_;  // guards everything below
  std::map<std::string, std::string> sources_;
  std::list<std::pair<std::string, BuildOutcome>> recent_;  // most recently used first
  std::map<int, cl::Program> pad_programs_;
  // Background builds: queued jobs, and a future for every build prefetch() asked for.
  std::condition_variable jobs_cv_;
  std::deque<std::shared_ptr<Job>> jobs_;
  std::map<std::string, std::shared_future<BuildOutcome>> pending_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

}  // namespace gemmtune
