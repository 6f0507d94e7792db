// SPDX-License-Identifier: Apache-2.0
#include "src/eval/program_builder.hpp"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/timing_stats.hpp"
#include "src/device/driver_diagnostics.hpp"
#include "src/kernel/kernel_source.hpp"

namespace gemmtune {

namespace {

using Clock = std::chrono::steady_clock;

// NVIDIA's compute capability as major * 10 + minor (cl_nv_device_attribute_query); 0 where the
// device does not say.
int nv_compute_capability(const Device& device) {
  if (device.info.extensions.find("cl_nv_device_attribute_query") == std::string::npos) return 0;
  try {
    return static_cast<int>(device.device.getInfo<CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV>() * 10 +
                            device.device.getInfo<CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV>());
  } catch (const cl::Error&) {
    return 0;
  }
}

// Programs kept in memory: a bench or library call path reuses a few; a search moves on.
constexpr size_t kRecentPrograms = 16;

}  // namespace

ProgramBuilder::ProgramBuilder(const Device& device, cl::Context context,
                               const DeviceProfile* profile, std::string templates_dir,
                               const std::string& cache_dir, int compile_threads)
    : device_(device),
      context_(std::move(context)),
      templates_dir_(std::move(templates_dir)),
      compile_threads_(compile_threads),
      cache_(cache_dir),
      runtime_keeps_builds_(BinaryCache::runtime_keeps_builds(device.info)) {
  if (profile) profile_ = *profile;
  limits_ = device_limits(device_.info, profile);
  extra_options_ = profile_ ? profile_->build_options : "";
  if (profile_) {
    // The defines of the profile's capabilities this device has (CP_ASYNC_PTX: NVIDIA sm_80+).
    const std::string caps = capability_build_options(profile_->capabilities, device_.info,
                                                      nv_compute_capability(device_));
    if (!caps.empty()) extra_options_ += (extra_options_.empty() ? "" : " ") + caps;
  }
  limits_.in_kernel_reduction_refused = in_kernel_reduction_refusal(device_.info, extra_options_);
  if (device_.info.nvidia()) {
    // ptxas then prints registers and spills per kernel into the build log.
    extra_options_ += (extra_options_.empty() ? "" : " ") + std::string("-cl-nv-verbose");
  }
  if (device_.info.opencl_c_1_1()) {
    // Clover compiles OpenCL C 1.1 only; the templates need nothing newer.
    extra_options_ += (extra_options_.empty() ? "" : " ") + std::string("-cl-std=CL1.1");
  }
  if (cache_.enabled()) spdlog::debug("binary cache in {}", cache_.dir());
}

ProgramBuilder::~ProgramBuilder() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    jobs_.clear();
  }
  jobs_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

int ProgramBuilder::threads() const {
  const int n = compile_threads_ > 0 ? compile_threads_
                                     : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(n, 1);
}

const std::string& ProgramBuilder::source_of(const std::string& file) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sources_.find(file);
  if (it == sources_.end()) {
    it = sources_.emplace(file, load_kernel_source(templates_dir_, file)).first;
  }
  return it->second;
}

ProgramBuilder::Request ProgramBuilder::request_for(const KernelSpec& spec, const Problem& problem,
                                                    const Configuration& config) {
  Request r;
  r.source = source_of(spec.source_file());
  // extra_options_ holds the profile's options, its capabilities' defines and -cl-nv-verbose on
  // NVIDIA, in that order.
  r.options = kernel_build_options(spec, problem, config, limits_, extra_options_);
  r.identity = BinaryCache::identity(device_.info, r.options, r.source);
  r.key = BinaryCache::key(r.identity);
  r.label = spec.name() + " " + to_string(config);
  return r;
}

BuildOutcome ProgramBuilder::build(const Request& request) {
  BuildOutcome out;
  const auto t0 = Clock::now();
  const std::vector<cl::Device> devices{device_.device};
  try {
    auto entry = cache_.load(request.key, request.identity);
    out.cache_ms = ms_since(t0);
    if (entry) {
      // An entry without a binary is source-only: the runtime's own cache serves the build.
      const bool source_only = entry->binary.empty();
      const auto t1 = Clock::now();
      try {
        cl::Program program =
            source_only ? cl::Program(context_, request.source)
                        : cl::Program(context_, devices, cl::Program::Binaries{entry->binary});
        program.build(devices, request.options.c_str());
        out.driver_ms = ms_since(t1);
        out.ok = true;
        out.program = program;
        out.log = std::move(entry->build_log);
        out.cached = true;
        out.compile_ms = ms_since(t0);
        spdlog::debug("binary cache hit {} ({}{})", request.key, request.label,
                      source_only ? "; source-only: the runtime's cache holds the build" : "");
        return out;
      } catch (const cl::Error& e) {
        out.driver_ms = ms_since(t1);
        spdlog::debug("binary cache: the driver rejected {} ({}); compiling again", request.key,
                      cl_error_name(e.err()));
        cache_.remove(request.key);
      }
    }
    const auto t2 = Clock::now();
    cl::Program program(context_, request.source);
    try {
      program.build(devices, request.options.c_str());
    } catch (const cl::Error& e) {
      out.driver_ms += ms_since(t2);
      std::string log;
      try {
        log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
      } catch (const cl::Error&) {
      }
      out.log = diagnosed_build_log(log.find_first_not_of(" \t\r\n") == std::string::npos
                                        ? "build failed: " + cl_error_name(e.err())
                                        : log,
                                    device_.info);
      out.compile_ms = ms_since(t0);
      return out;
    }
    out.driver_ms += ms_since(t2);
    const auto t3 = Clock::now();
    out.ok = true;
    out.program = program;
    out.log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
    // Asked for only when they are kept: PoCL compiles a generic copy of every kernel of the
    // program to hand out its binary, and keeps the build in its own cache anyway.
    if (cache_.enabled() && runtime_keeps_builds_) {
      cache_.store(request.key, request.identity, BinaryCache::Entry{{}, out.log});
    } else if (cache_.enabled()) {
      const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (!binaries.empty() && !binaries.front().empty()) {
        cache_.store(request.key, request.identity, BinaryCache::Entry{binaries.front(), out.log});
      }
    }
    out.cache_ms += ms_since(t3);
    out.compile_ms = ms_since(t0);
    spdlog::debug(
        "compiled {} in {:.0f} ms ({:.0f} ms in the driver's build, {:.1f} ms in the "
        "binary cache)",
        request.label, out.compile_ms, out.driver_ms, out.cache_ms);
  } catch (const std::exception& e) {
    out.ok = false;
    out.log = diagnosed_build_log(std::string("build failed: ") + e.what(), device_.info);
  }
  return out;
}

void ProgramBuilder::remember(const std::string& key, const BuildOutcome& outcome) {
  if (!outcome.ok) return;
  std::lock_guard<std::mutex> lock(mutex_);
  recent_.remove_if([&](const auto& e) { return e.first == key; });
  BuildOutcome kept = outcome;
  kept.cached = true;  // what a later request gets was not compiled for it
  kept.compile_ms = 0;
  recent_.emplace_front(key, std::move(kept));
  while (recent_.size() > kRecentPrograms) recent_.pop_back();
}

// The build of a request: from memory, taken over from the background queue when prefetch()
// asked for it, else done now.
BuildOutcome ProgramBuilder::obtain(const Request& request) {
  std::shared_future<BuildOutcome> future;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = recent_.begin(); it != recent_.end(); ++it) {
      if (it->first == request.key) {
        recent_.splice(recent_.begin(), recent_, it);
        return recent_.front().second;
      }
    }
    auto it = pending_.find(request.key);
    if (it != pending_.end()) {
      future = it->second;
      pending_.erase(it);
      // Not started yet: build it here rather than wait for the queue to reach it.
      auto queued = std::find_if(jobs_.begin(), jobs_.end(),
                                 [&](const auto& j) { return j->request.key == request.key; });
      if (queued != jobs_.end()) {
        jobs_.erase(queued);
        future = {};
      }
    }
  }
  BuildOutcome out = future.valid() ? future.get() : build(request);
  remember(request.key, out);
  return out;
}

BuildOutcome ProgramBuilder::program(const KernelSpec& spec, const Problem& problem,
                                     const Configuration& config) {
  try {
    return obtain(request_for(spec, problem, config));
  } catch (const Error& e) {  // e.g. a source file that is missing
    BuildOutcome out;
    out.log = e.what();
    return out;
  }
}

void ProgramBuilder::worker_loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      jobs_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = jobs_.front();
      jobs_.pop_front();
    }
    job->promise.set_value(build(job->request));
  }
}

void ProgramBuilder::prefetch(const KernelSpec& spec, const Problem& problem,
                              const std::vector<Configuration>& configs) {
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  for (const auto& config : configs) {
    if (spec.check(config, limits_, ctx)) continue;  // invalid: nothing to compile
    Request request = request_for(spec, problem, config);
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.count(request.key)) continue;
    auto job = std::make_shared<Job>();
    job->request = std::move(request);
    pending_[job->request.key] = job->promise.get_future().share();
    jobs_.push_back(job);
    if (workers_.empty()) {
      for (int i = 0; i < threads(); ++i) workers_.emplace_back([this] { worker_loop(); });
    }
  }
  jobs_cv_.notify_all();
}

DeviceEvaluator::CompileSummary ProgramBuilder::compile_all(
    const KernelSpec& spec, const Problem& problem, const std::vector<Configuration>& configs) {
  DeviceEvaluator::CompileSummary summary;
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  std::vector<Request> requests;
  for (const auto& config : configs) {
    if (spec.check(config, limits_, ctx)) {
      ++summary.invalid;
    } else {
      requests.push_back(request_for(spec, problem, config));
    }
  }
  std::mutex mutex;
  size_t next = 0;
  auto work = [&] {
    for (;;) {
      size_t i;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (next == requests.size()) return;
        i = next++;
      }
      const BuildOutcome out = build(requests[i]);
      std::lock_guard<std::mutex> lock(mutex);
      summary.driver_ms += out.driver_ms;
      summary.cache_ms += out.cache_ms;
      if (!out.ok) {
        ++summary.failed;
      } else if (out.cached) {
        ++summary.cached;
      } else {
        ++summary.built;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int i = 1; i < threads(); ++i) helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();
  return summary;
}

cl::Program ProgramBuilder::source_program(const std::string& source, const std::string& options,
                                           const std::string& label) {
  Request r;
  r.source = source;
  r.options = options.empty() ? extra_options_
                              : options + (extra_options_.empty() ? "" : " " + extra_options_);
  r.identity = BinaryCache::identity(device_.info, r.options, r.source);
  r.key = BinaryCache::key(r.identity);
  r.label = label;
  const BuildOutcome out = obtain(r);
  if (!out.ok) {
    throw Error(ErrorCode::kDevice, label + " does not build: " + trim_build_log(out.log, 5, 400));
  }
  return out.program;
}

cl::Program ProgramBuilder::pad_program(Precision precision) {
  const int define = precision_define(precision);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = pad_programs_.find(define); it != pad_programs_.end()) return it->second;
  }
  cl::Program program = source_program(source_of(PadHelper::kSource), pad_helper_options(precision),
                                       "the pad helper");
  std::lock_guard<std::mutex> lock(mutex_);
  return pad_programs_.emplace(define, program).first->second;
}

}  // namespace gemmtune
