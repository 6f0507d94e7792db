#include "src/eval/opencl_evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/device/binary_cache.hpp"
#include "src/device/kernel_resources.hpp"
#include "src/device/opencl.hpp"
#include "src/kernel/gemm_view.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/verify/reference.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

bool contains_ci(std::string haystack, std::string needle) {
  auto lower = [](std::string& s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  };
  lower(haystack);
  lower(needle);
  return haystack.find(needle) != std::string::npos;
}

// The helper kernel that pads operands for templates that declare "pad".
constexpr const char* kPadSource = "pad.cl";
constexpr const char* kPadEntry = "pad_copy";
constexpr size_t kPadLocal = 16;

// The uniform contract's argument count, and with a bias vector and a workspace appended.
constexpr cl_uint kContractArgs = 14;
constexpr cl_uint kContractArgsExtended = 16;
// Arguments a batched kernel takes after those (kernel_templates/common.cl): three strides, or
// one array of offsets.
constexpr cl_uint kStridedBatchArgs = 3;
constexpr cl_uint kOffsetsBatchArgs = 1;

// Matrices of a batch lie this many elements apart, rounded up from their size: an awkward
// shape then leaves gaps between them, which the check after each call finds untouched in C
// (a kernel writing outside its matrix is wrong) and which hold NaN in A and B (a kernel reading
// outside its matrix produces NaN).
constexpr int64_t kBatchStrideMultiple = 16;
// What the gaps of a batched C hold; compared bytewise after the call.
constexpr double kGapSentinel = -4321.0;

struct BuildRequest {
  std::string source, options, identity, key, label;
};

struct BuildOutcome {
  bool ok = false;
  cl::Program program;
  std::string log;
  bool cached = false;
  double compile_ms = 0;
};

struct BuildJob {
  BuildRequest request;
  std::promise<BuildOutcome> promise;
};

TimingStats summarize(const std::vector<double>& totals, const std::vector<double>& mains) {
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  TimingStats t;
  t.runs = static_cast<int>(totals.size());
  if (totals.empty()) return t;
  t.median_ms = median(totals);
  t.kernel_median_ms = median(mains);
  t.min_ms = *std::min_element(totals.begin(), totals.end());
  t.max_ms = *std::max_element(totals.begin(), totals.end());
  double sum = 0;
  for (double v : totals) sum += v;
  t.mean_ms = sum / static_cast<double>(totals.size());
  double var = 0;
  for (double v : totals) var += (v - t.mean_ms) * (v - t.mean_ms);
  var /= static_cast<double>(totals.size());
  t.cv = t.mean_ms > 0 ? std::sqrt(var) / t.mean_ms : 0;
  return t;
}

// One kernel launch of a GEMM call.
struct Step {
  cl::Kernel kernel;
  cl::NDRange global, local;
  bool main = false;
};

cl::NDRange to_range(const std::vector<size_t>& v) {
  if (v.size() == 1) return cl::NDRange(v[0]);
  if (v.size() == 2) return cl::NDRange(v[0], v[1]);
  return cl::NDRange(v[0], v[1], v[2]);
}

size_t round_up(size_t x, size_t m) {
  return (x + m - 1) / m * m;
}

}  // namespace

// Per problem: inputs, reference and device buffers, made once and reused by every
// configuration.
struct ProblemState {
  std::string key;
  Problem problem;
  HostMatrices host;
  std::unique_ptr<Reference> reference;
  size_t elem_bytes = 4;
  cl::Buffer a, b, c;
  std::vector<unsigned char> c_initial;  // C before the call: the inputs, or NaN when beta == 0
  // Where batch entry e of each operand starts in its buffer, in elements (all 0 for batch 1),
  // and the distance between entries of the strided layout.
  std::vector<int64_t> a_pos, b_pos, c_pos;
  int64_t a_stride = 0, b_stride = 0, c_stride = 0;
  cl::Buffer batch_offsets;  // offsets layout: (A, B, C) per entry, in the kernel's view
  // Scratch buffers grow as configurations need them.
  cl::Buffer scratch_a, scratch_b, scratch_c, workspace, bias;
  size_t cap_a = 0, cap_b = 0, cap_c = 0, cap_workspace = 0;
};

class OpenClEvaluator::Impl {
 public:
  Impl(const Device& device, const DeviceProfile* profile, EvaluatorOptions options,
       std::optional<KernelSpec> own)
      : device_(device), options_(std::move(options)), cache_(options_.cache_dir) {
    if (own) {
      own_ = own->name();
      specs_[own_] = std::make_unique<KernelSpec>(std::move(*own));
    }
    if (profile) profile_ = *profile;
    limits_ = device_limits(device_.info, profile);
    context_ = cl::Context(std::vector<cl::Device>{device_.device});
    queue_ = cl::CommandQueue(context_, device_.device, CL_QUEUE_PROFILING_ENABLE);
    extra_options_ = profile_ ? profile_->build_options : "";
    if (contains_ci(device_.info.vendor, "nvidia") ||
        contains_ci(device_.info.platform_name, "nvidia")) {
      // ptxas then prints registers and spills per kernel into the build log.
      extra_options_ += (extra_options_.empty() ? "" : " ") + std::string("-cl-nv-verbose");
    }
    if (cache_.enabled()) spdlog::debug("binary cache in {}", cache_.dir());
  }

  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(jobs_mutex_);
      stopping_ = true;
      jobs_.clear();
    }
    jobs_cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  std::string description() const {
    return "OpenCL " + device_.info.name + " (" + device_.info.platform_name + "), profile " +
           (profile_ ? profile_->name : std::string("generic"));
  }

  const KernelSpec& spec(const std::string& kernel) {
    std::lock_guard<std::mutex> lock(specs_mutex_);
    if (auto it = specs_.find(kernel); it != specs_.end()) return *it->second;
    // The source is read when first built, so that any declaration loads here.
    auto spec =
        std::make_unique<KernelSpec>(KernelSpec::load_named(options_.templates_dir, kernel));
    return *(specs_[kernel] = std::move(spec));
  }

  const KernelSpec& own_spec() {
    if (own_.empty()) throw Error(ErrorCode::kInternal, "this evaluator was made for no kernel");
    return spec(own_);
  }

  // The problem with its kernel resolved: the evaluator's own kernel when it has one (a problem
  // naming no kernel means it), or why the problem cannot be measured here.
  std::optional<std::string> resolve(Problem& problem) {
    if (!own_.empty()) {
      if (problem.kernel.empty()) problem.kernel = own_;
      if (problem.kernel != own_) {
        return "this evaluator measures kernel " + own_ + ", not " + problem.kernel;
      }
    }
    if (spec(problem.kernel).backend() != Backend::kOpenCl) {
      return "kernel " + problem.kernel + " is not an OpenCL template (its backend is " +
             to_string(spec(problem.kernel).backend()) + ")";
    }
    return std::nullopt;
  }

  Result evaluate(const Problem& problem, const Configuration& config);
  void prepare(const Problem& problem, const std::vector<Configuration>& upcoming);
  DeviceEvaluator::CompileSummary compile(const Problem& problem,
                                          const std::vector<Configuration>& configs);

 private:
  std::optional<Result> unsupported(const Problem& problem, const Configuration& config) const;
  static std::optional<Result> no_epilogue(const KernelSpec& s, const Problem& problem,
                                           const Configuration& config);
  BuildRequest request_for(const std::string& kernel, const Problem& problem,
                           const Configuration& config, const KernelView& view);
  BuildOutcome build(const BuildRequest& request);
  BuildOutcome obtain(const BuildRequest& request);
  cl::Program& helper_program(Precision precision);
  ProblemState& state_for(const Problem& problem);
  static std::vector<unsigned char> place_batch(const Problem& problem, int64_t size,
                                                const std::vector<double>& dense, double gap,
                                                std::vector<int64_t>& positions, int64_t& stride);
  void worker_loop();
  std::pair<double, double> run_call(std::vector<Step>& steps);

  Device device_;
  std::optional<DeviceProfile> profile_;
  EvaluatorOptions options_;
  std::string own_;  // the kernel this evaluator was made for; "" for the transitional one
  DeviceLimits limits_;
  std::string extra_options_;
  cl::Context context_;
  cl::CommandQueue queue_;
  BinaryCache cache_;

  std::mutex specs_mutex_;
  std::map<std::string, std::unique_ptr<KernelSpec>> specs_;
  std::map<std::string, std::string> sources_;

  // Background compilation: queued jobs, and a future for every build asked for by prepare().
  std::mutex jobs_mutex_;
  std::condition_variable jobs_cv_;
  std::deque<std::shared_ptr<BuildJob>> jobs_;
  std::map<std::string, std::shared_future<BuildOutcome>> pending_;
  std::vector<std::thread> workers_;
  bool stopping_ = false;

  std::map<int, cl::Program> helpers_;
  std::list<std::unique_ptr<ProblemState>> states_;  // most recently used first
  static constexpr size_t kMaxStates = 2;
};

std::optional<Result> OpenClEvaluator::Impl::unsupported(const Problem& problem,
                                                         const Configuration& config) const {
  auto fail = [&](const std::string& why) {
    return Result::failure(config, Status::kUnsupported, why);
  };
  if (problem.batch < 1) {
    return fail("batch " + std::to_string(problem.batch) + " is not positive");
  }
  try {
    parse_epilogue(problem.epilogue);
  } catch (const Error& e) {
    return Result::failure(config, Status::kInvalid, e.what());
  }
  // Refused here, before any build, so that the answer is this line and not a build log.
  if (problem.precision == Precision::kFP16 && !device_.info.has_fp16) {
    return fail(
        "precision 16 (half arithmetic) is not supported by this device: it lacks cl_khr_fp16 "
        "(16acc32 stores half and computes in float, and needs no extension)");
  }
  if (problem.precision == Precision::kFP64 && !device_.info.has_fp64) {
    return fail("precision 64 (double) is not supported by this device: it lacks cl_khr_fp64");
  }
  return std::nullopt;
}

std::optional<Result> OpenClEvaluator::Impl::no_epilogue(const KernelSpec& s,
                                                         const Problem& problem,
                                                         const Configuration& config) {
  if (supports_epilogue(s, parse_epilogue(problem.epilogue))) return std::nullopt;
  return Result::failure(config, Status::kUnsupported,
                         "kernel " + problem.kernel + " has no fused epilogue '" +
                             problem.epilogue +
                             "' (its declaration lists no such \"epilogue\" item; xgemm_fast "
                             "has bias, relu and gelu)");
}

BuildRequest OpenClEvaluator::Impl::request_for(const std::string& kernel, const Problem& problem,
                                                const Configuration& config,
                                                const KernelView& view) {
  const KernelSpec& s = spec(kernel);
  BuildRequest r;
  {
    std::lock_guard<std::mutex> lock(specs_mutex_);
    auto it = sources_.find(kernel);
    if (it == sources_.end()) {
      it = sources_.emplace(kernel, load_kernel_source(options_.templates_dir, s.source_file()))
               .first;
    }
    r.source = it->second;
  }
  // The epilogue's defines go before the profile's options, and a problem without one builds
  // exactly as before (same binary cache keys).
  const std::string epilogue = epilogue_defines(problem);
  std::string extra = epilogue.empty() ? extra_options_ : epilogue + " " + extra_options_;
  if (const std::string cap = s.register_cap_option(config, limits_); !cap.empty()) {
    extra += " " + cap;
  }
  r.options = build_options(config, problem.precision, view.trans_a, view.trans_b, extra,
                            batch_layout_define(problem));
  r.identity = BinaryCache::identity(device_.info, r.options, r.source);
  r.key = BinaryCache::key(r.identity);
  r.label = kernel + " " + to_string(config);
  return r;
}

BuildOutcome OpenClEvaluator::Impl::build(const BuildRequest& request) {
  BuildOutcome out;
  const auto t0 = Clock::now();
  try {
    if (auto entry = cache_.load(request.key, request.identity)) {
      try {
        cl::Program program(context_, std::vector<cl::Device>{device_.device},
                            cl::Program::Binaries{entry->binary});
        program.build(std::vector<cl::Device>{device_.device}, request.options.c_str());
        out.ok = true;
        out.program = program;
        out.log = entry->build_log;
        out.cached = true;
        out.compile_ms = ms_since(t0);
        spdlog::debug("binary cache hit {} ({})", request.key, request.label);
        return out;
      } catch (const cl::Error& e) {
        spdlog::debug("binary cache: the driver rejected {} ({}); compiling again", request.key,
                      cl_error_name(e.err()));
        cache_.remove(request.key);
      }
    }
    cl::Program program(context_, request.source);
    try {
      program.build(std::vector<cl::Device>{device_.device}, request.options.c_str());
    } catch (const cl::Error& e) {
      std::string log;
      try {
        log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
      } catch (const cl::Error&) {
      }
      out.log = log.find_first_not_of(" \t\r\n") == std::string::npos
                    ? "build failed: " + cl_error_name(e.err())
                    : log;
      out.compile_ms = ms_since(t0);
      return out;
    }
    out.ok = true;
    out.program = program;
    out.log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
    out.compile_ms = ms_since(t0);
    spdlog::debug("compiled {} in {:.0f} ms", request.label, out.compile_ms);
    const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    if (!binaries.empty() && !binaries.front().empty()) {
      cache_.store(request.key, request.identity, BinaryCache::Entry{binaries.front(), out.log});
    }
  } catch (const std::exception& e) {
    out.ok = false;
    out.log = std::string("build failed: ") + e.what();
  }
  return out;
}

// The build of a request: taken over from the background queue when prepare() asked for it,
// else done now.
BuildOutcome OpenClEvaluator::Impl::obtain(const BuildRequest& request) {
  std::shared_future<BuildOutcome> future;
  {
    std::lock_guard<std::mutex> lock(jobs_mutex_);
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
  if (future.valid()) return future.get();
  return build(request);
}

void OpenClEvaluator::Impl::worker_loop() {
  for (;;) {
    std::shared_ptr<BuildJob> job;
    {
      std::unique_lock<std::mutex> lock(jobs_mutex_);
      jobs_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = jobs_.front();
      jobs_.pop_front();
    }
    job->promise.set_value(build(job->request));
  }
}

void OpenClEvaluator::Impl::prepare(const Problem& problem,
                                    const std::vector<Configuration>& upcoming) {
  try {
    if (unsupported(problem, {})) return;
    const KernelSpec& s = spec(problem.kernel);
    if (!supports_epilogue(s, parse_epilogue(problem.epilogue))) return;
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    const KernelView view = kernel_view(problem);
    for (const auto& config : upcoming) {
      if (s.check(config, limits_, ctx)) continue;  // invalid: nothing to compile
      BuildRequest request = request_for(problem.kernel, problem, config, view);
      std::lock_guard<std::mutex> lock(jobs_mutex_);
      if (pending_.count(request.key)) continue;
      auto job = std::make_shared<BuildJob>();
      job->request = std::move(request);
      pending_[job->request.key] = job->promise.get_future().share();
      jobs_.push_back(job);
      if (workers_.empty()) {
        int n = options_.compile_threads > 0
                    ? options_.compile_threads
                    : static_cast<int>(std::thread::hardware_concurrency());
        for (int i = 0; i < std::max(n, 1); ++i) workers_.emplace_back([this] { worker_loop(); });
      }
    }
    jobs_cv_.notify_all();
  } catch (const std::exception& e) {
    // prepare() is a hint; evaluate() reports the same problem properly.
    spdlog::debug("prepare: {}", e.what());
  }
}

DeviceEvaluator::CompileSummary OpenClEvaluator::Impl::compile(
    const Problem& problem, const std::vector<Configuration>& configs) {
  DeviceEvaluator::CompileSummary summary;
  if (auto why = unsupported(problem, {})) throw Error(ErrorCode::kUnsupported, why->message);
  const KernelSpec& s = spec(problem.kernel);
  if (auto why = no_epilogue(s, problem, {})) throw Error(ErrorCode::kUnsupported, why->message);
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  const KernelView view = kernel_view(problem);
  std::vector<BuildRequest> requests;
  for (const auto& config : configs) {
    if (s.check(config, limits_, ctx)) {
      ++summary.invalid;
    } else {
      requests.push_back(request_for(problem.kernel, problem, config, view));
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
      if (!out.ok) {
        ++summary.failed;
      } else if (out.cached) {
        ++summary.cached;
      } else {
        ++summary.built;
      }
    }
  };
  const int n = options_.compile_threads > 0
                    ? options_.compile_threads
                    : static_cast<int>(std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (int i = 1; i < std::max(n, 1); ++i) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  return summary;
}

cl::Program& OpenClEvaluator::Impl::helper_program(Precision precision) {
  const int p = precision_define(precision);
  if (auto it = helpers_.find(p); it != helpers_.end()) return it->second;
  BuildRequest r;
  r.source = load_kernel_source(options_.templates_dir, kPadSource);
  r.options =
      "-DPRECISION=" + std::to_string(p) + (extra_options_.empty() ? "" : " " + extra_options_);
  r.identity = BinaryCache::identity(device_.info, r.options, r.source);
  r.key = BinaryCache::key(r.identity);
  r.label = "pad helper";
  BuildOutcome out = build(r);
  if (!out.ok) {
    throw Error(ErrorCode::kDevice, "cannot build the pad helper: " + trim_build_log(out.log));
  }
  return helpers_[p] = out.program;
}

ProblemState& OpenClEvaluator::Impl::state_for(const Problem& problem) {
  Problem key_problem = problem;
  key_problem.kernel.clear();  // the data does not depend on the kernel
  const std::string key = nlohmann::json(key_problem).dump();
  for (auto it = states_.begin(); it != states_.end(); ++it) {
    if ((*it)->key == key) {
      states_.splice(states_.begin(), states_, it);
      return *states_.front();
    }
  }
  auto st = std::make_unique<ProblemState>();
  st->key = key;
  st->problem = problem;
  st->elem_bytes = static_cast<size_t>(element_bytes(problem.precision));
  const auto t0 = Clock::now();
  st->host = make_inputs(problem, options_.measure.data_seed);
  st->reference = std::make_unique<Reference>(problem, st->host);
  spdlog::debug("reference for {} {} {} computed in {:.0f} ms", problem.shape.to_string(),
                problem.order_name(), problem.layout(), ms_since(t0));
  if (st->reference->sampled()) {
    spdlog::info("{}: results are checked on {} of {} rows (all columns), every output for NaN",
                 problem.shape.to_string(), st->reference->rows().size(), problem.shape.m);
  }
  // The device images of A, B and C: batch entries at their positions, gaps filled.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto& sh = problem.shape;
  const auto a = place_batch(problem, sh.m * sh.k, st->host.a, nan, st->a_pos, st->a_stride);
  const auto b = place_batch(problem, sh.k * sh.n, st->host.b, nan, st->b_pos, st->b_stride);
  st->c_initial =
      place_batch(problem, sh.m * sh.n,
                  problem.beta == 0.0 ? std::vector<double>(st->host.c.size(), nan) : st->host.c,
                  kGapSentinel, st->c_pos, st->c_stride);
  if (problem.batch > 1 && problem.batch_layout == BatchLayout::kOffsets) {
    const KernelView view = kernel_view(problem);
    const auto& ka = view.swap_ab ? st->b_pos : st->a_pos;
    const auto& kb = view.swap_ab ? st->a_pos : st->b_pos;
    std::vector<cl_int> offsets;
    for (size_t e = 0; e < st->c_pos.size(); ++e) {
      for (int64_t v : {ka[e], kb[e], st->c_pos[e]}) offsets.push_back(static_cast<cl_int>(v));
    }
    st->batch_offsets = cl::Buffer(context_, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                   offsets.size() * sizeof(cl_int), offsets.data());
  }
  st->a = cl::Buffer(context_, CL_MEM_READ_ONLY, a.size());
  st->b = cl::Buffer(context_, CL_MEM_READ_ONLY, b.size());
  st->c = cl::Buffer(context_, CL_MEM_READ_WRITE, st->c_initial.size());
  queue_.enqueueWriteBuffer(st->a, CL_TRUE, 0, a.size(), a.data());
  queue_.enqueueWriteBuffer(st->b, CL_TRUE, 0, b.size(), b.data());
  // The epilogue's bias (one vector for the whole batch), or one element that nothing reads.
  if (st->host.bias.empty()) {
    st->bias = cl::Buffer(context_, CL_MEM_READ_ONLY, st->elem_bytes);
  } else {
    const auto bias = pack_elements(st->host.bias, problem.precision);
    st->bias = cl::Buffer(context_, CL_MEM_READ_ONLY, bias.size());
    queue_.enqueueWriteBuffer(st->bias, CL_TRUE, 0, bias.size(), bias.data());
  }
  states_.push_front(std::move(st));
  while (states_.size() > kMaxStates) states_.pop_back();
  return *states_.front();
}

// Lays the batch entries of one operand (`dense`: entries one after the other) out as the
// device sees them, packed in the problem's precision, with `gap` between entries. Sets where
// each entry starts and the stride of the strided layout. Batch 1 is the dense matrix itself.
std::vector<unsigned char> OpenClEvaluator::Impl::place_batch(const Problem& problem, int64_t size,
                                                              const std::vector<double>& dense,
                                                              double gap,
                                                              std::vector<int64_t>& positions,
                                                              int64_t& stride) {
  const int64_t batch = problem.batch;
  stride = batch == 1
               ? size
               : (size + kBatchStrideMultiple - 1) / kBatchStrideMultiple * kBatchStrideMultiple;
  positions.assign(static_cast<size_t>(batch), 0);
  for (int64_t e = 0; e < batch; ++e) {
    // The offsets layout stores the entries in reverse order, so that a kernel which ignored
    // the offsets (or read them for the wrong entry) fails verification.
    const int64_t slot = problem.batch_layout == BatchLayout::kOffsets ? batch - 1 - e : e;
    positions[static_cast<size_t>(e)] = slot * stride;
  }
  std::vector<double> image(static_cast<size_t>(stride * batch), gap);
  for (int64_t e = 0; e < batch; ++e) {
    std::copy(dense.begin() + e * size, dense.begin() + (e + 1) * size,
              image.begin() + positions[static_cast<size_t>(e)]);
  }
  return pack_elements(image, problem.precision);
}

// Runs one GEMM call; returns (all kernels, main kernel only) in milliseconds from the
// profiling events.
std::pair<double, double> OpenClEvaluator::Impl::run_call(std::vector<Step>& steps) {
  std::vector<cl::Event> events(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    queue_.enqueueNDRangeKernel(steps[i].kernel, cl::NullRange, steps[i].global, steps[i].local,
                                nullptr, &events[i]);
  }
  queue_.finish();
  double total = 0, main = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto start = events[i].getProfilingInfo<CL_PROFILING_COMMAND_START>();
    const auto end = events[i].getProfilingInfo<CL_PROFILING_COMMAND_END>();
    const double ms = static_cast<double>(end - start) * 1e-6;
    total += ms;
    if (steps[i].main) main += ms;
  }
  return {total, main};
}

Result OpenClEvaluator::Impl::evaluate(const Problem& problem, const Configuration& config) {
  if (auto r = unsupported(problem, config)) return *r;
  const KernelSpec& s = spec(problem.kernel);
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  if (auto why = s.check(config, DeviceLimits{}, ctx)) {
    return Result::failure(config, Status::kInvalid, *why);
  }
  if (auto why = s.check(config, limits_, ctx)) {
    return Result::failure(config, Status::kDeviceLimit, *why);
  }
  if (auto r = no_epilogue(s, problem, config)) return *r;
  if (problem.batch > 1 && !supports_batch(s, problem.batch_layout)) {
    return Result::failure(config, Status::kUnsupported,
                           "kernel " + problem.kernel +
                               " does not support batched problems in the " +
                               to_string(problem.batch_layout) +
                               " layout (its launch block declares no such batch layout)");
  }
  const KernelView view = kernel_view(problem);
  LaunchGeometry g;
  try {
    g = launch_geometry(s, config, ctx, view);
  } catch (const Error& e) {
    return Result::failure(config, Status::kInvalid, e.what());
  }
  for (size_t d = 0; d < g.local.size(); ++d) {
    if (d < limits_.max_work_item_sizes.size() &&
        static_cast<int64_t>(g.local[d]) > limits_.max_work_item_sizes[d]) {
      return Result::failure(config, Status::kDeviceLimit,
                             fmt::format("local size {} in dimension {} exceeds the device's {}",
                                         g.local[d], d, limits_.max_work_item_sizes[d]));
    }
  }
  // The contract passes sizes, offsets and leading dimensions as 32-bit ints.
  // A batch lies in one buffer per operand, addressed with int offsets too.
  const int64_t entries = problem.batch == 1 ? 1 : problem.batch + 1;  // + 1: the stride gaps
  const int64_t largest = std::max({g.m * g.k, g.k * g.n, g.m * g.n}) * entries;
  if (largest > std::numeric_limits<int32_t>::max()) {
    return Result::failure(config, Status::kUnsupported,
                           "matrices of more than 2^31 elements exceed the kernels' int indices");
  }

  Result r;
  r.config = config;
  const BuildOutcome built = obtain(request_for(problem.kernel, problem, config, view));
  r.binary_cached = built.cached;
  r.compile_ms = built.compile_ms;
  if (!built.ok) {
    Result f = Result::failure(config, Status::kCompileFailed, trim_build_log(built.log));
    f.compile_ms = built.compile_ms;
    return f;
  }
  cl::Kernel kernel;
  try {
    kernel = cl::Kernel(built.program, s.entry_point().c_str());
  } catch (const cl::Error& e) {
    return Result::failure(
        config, Status::kCompileFailed,
        "the program has no kernel '" + s.entry_point() + "' (" + cl_error_name(e.err()) + ")");
  }

  // Resources of the compiled kernel, and the limits that only the compiler knows.
  const auto& dev = device_.device;
  r.usage.local_mem_bytes =
      static_cast<int64_t>(kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(dev));
  r.usage.private_mem_bytes =
      static_cast<int64_t>(kernel.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(dev));
  r.usage.source = "CL_KERNEL_*";
  // The log holds one block per entry function (the split-K reduce kernel comes first on NVIDIA):
  // only the main kernel's figures count.
  if (const auto ptxas = parse_ptxas_log(built.log, s.entry_point())) {
    r.usage.registers = ptxas->registers;
    r.usage.spills = (ptxas->spill_store_bytes + 3) / 4;  // 32-bit words, as AMD counts them
    r.usage.source += ", ptxas";
  }
  size_t wg = 1;
  for (auto l : g.local) wg *= l;
  const size_t kernel_max_wg = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(dev);
  if (wg > kernel_max_wg) {
    Result f = Result::failure(
        config, Status::kDeviceLimit,
        fmt::format(
            "the compiled kernel allows {} work-items per group, the configuration needs {}",
            kernel_max_wg, wg));
    f.usage = r.usage;
    return f;
  }
  if (*r.usage.local_mem_bytes > static_cast<int64_t>(device_.info.local_mem_bytes)) {
    Result f = Result::failure(config, Status::kDeviceLimit,
                               fmt::format("the compiled kernel needs {} bytes of local memory, "
                                           "the device has {}",
                                           *r.usage.local_mem_bytes, device_.info.local_mem_bytes));
    f.usage = r.usage;
    return f;
  }

  ProblemState& st = state_for(problem);
  const size_t eb = st.elem_bytes;
  auto grow = [&](cl::Buffer& buf, size_t& cap, size_t elements, bool nan_fill,
                  size_t element_size = 0) {
    const size_t bytes = std::max<size_t>(elements, 1) * (element_size ? element_size : eb);
    if (cap >= bytes) return;
    buf = cl::Buffer(context_, CL_MEM_READ_WRITE, bytes);
    cap = bytes;
    if (nan_fill) {
      // A kernel that reads C although beta == 0 then produces NaN, which verification catches.
      const auto nan = pack_elements({std::numeric_limits<double>::quiet_NaN()}, problem.precision);
      std::vector<unsigned char> fill(bytes);
      for (size_t i = 0; i < bytes; i += eb) std::copy(nan.begin(), nan.end(), fill.begin() + i);
      queue_.enqueueWriteBuffer(buf, CL_TRUE, 0, bytes, fill.data());
    }
  };

  // The call: optional padding of A, B (and C when it is read), the kernel, optional split-K
  // reduction and the copy of a padded C back.
  const cl::Buffer& a_buf = view.swap_ab ? st.b : st.a;
  const cl::Buffer& b_buf = view.swap_ab ? st.a : st.b;
  const int64_t pa_rows = view.trans_a ? g.k : g.m, pa_cols = view.trans_a ? g.m : g.k;
  const int64_t pb_rows = view.trans_b ? g.n : g.k, pb_cols = view.trans_b ? g.k : g.n;
  const bool pad_a = pa_rows != view.a_rows() || pa_cols != view.a_cols();
  const bool pad_b = pb_rows != view.b_rows() || pb_cols != view.b_cols();
  const bool pad_c = g.m != view.m || g.n != view.n;
  std::vector<Step> steps;
  auto pad_step = [&](int64_t src_rows, int64_t src_cols, const cl::Buffer& src, int64_t dst_rows,
                      int64_t dst_cols, const cl::Buffer& dst) {
    Step step;
    step.kernel = cl::Kernel(helper_program(problem.precision), kPadEntry);
    int i = 0;
    for (auto v : {src_rows, src_cols, src_rows, int64_t{0}}) {
      step.kernel.setArg(i++, static_cast<cl_int>(v));
    }
    step.kernel.setArg(i++, src);
    for (auto v : {dst_rows, dst_cols, dst_rows, int64_t{0}}) {
      step.kernel.setArg(i++, static_cast<cl_int>(v));
    }
    step.kernel.setArg(i++, dst);
    step.global = cl::NDRange(round_up(static_cast<size_t>(dst_rows), kPadLocal),
                              round_up(static_cast<size_t>(dst_cols), kPadLocal));
    step.local = cl::NDRange(kPadLocal, kPadLocal);
    steps.push_back(step);
  };
  if (pad_a) {
    grow(st.scratch_a, st.cap_a, static_cast<size_t>(pa_rows * pa_cols), false);
    pad_step(view.a_rows(), view.a_cols(), a_buf, pa_rows, pa_cols, st.scratch_a);
  }
  if (pad_b) {
    grow(st.scratch_b, st.cap_b, static_cast<size_t>(pb_rows * pb_cols), false);
    pad_step(view.b_rows(), view.b_cols(), b_buf, pb_rows, pb_cols, st.scratch_b);
  }
  if (pad_c) {
    grow(st.scratch_c, st.cap_c, static_cast<size_t>(g.m * g.n), true);
    if (problem.beta != 0.0) pad_step(view.m, view.n, st.c, g.m, g.n, st.scratch_c);
  }
  r.helper_kernels = pad_a || pad_b || pad_c;
  const cl::Buffer& c_main = pad_c ? st.scratch_c : st.c;

  const bool fp64 = problem.precision == Precision::kFP64;
  auto set_scalar = [&](cl::Kernel& k, cl_uint index, double v) {
    if (fp64) {
      k.setArg(index, v);
    } else {
      k.setArg(index, static_cast<cl_float>(v));
    }
  };
  const cl_uint batch_args = problem.batch == 1                              ? 0
                             : problem.batch_layout == BatchLayout::kOffsets ? kOffsetsBatchArgs
                                                                             : kStridedBatchArgs;
  const cl_uint nargs = kernel.getInfo<CL_KERNEL_NUM_ARGS>();
  const cl_uint contract_args = nargs - std::min(nargs, batch_args);
  if (contract_args != kContractArgs && contract_args != kContractArgsExtended) {
    return Result::failure(
        config, Status::kInvalid,
        fmt::format("kernel {} takes {} arguments; the contract has {} (or {} "
                    "with bias and workspace), plus {} for this batch layout",
                    s.entry_point(), nargs, kContractArgs, kContractArgsExtended, batch_args));
  }
  if (!problem.epilogue.empty() && contract_args != kContractArgsExtended) {
    return Result::failure(config, Status::kUnsupported,
                           "kernel " + s.entry_point() +
                               " takes no bias argument, so it cannot apply the epilogue '" +
                               problem.epilogue + "'");
  }
  // The workspace holds partial sums in the arithmetic's type (float for 16acc32).
  const auto work_bytes = static_cast<size_t>(compute_bytes(problem.precision));
  if (g.split_k && g.split_k->workspace_elements > 0) {
    grow(st.workspace, st.cap_workspace,
         static_cast<size_t>(g.split_k->workspace_elements * problem.batch), false, work_bytes);
  } else {
    grow(st.workspace, st.cap_workspace, 1, false, work_bytes);
  }
  kernel.setArg(0, static_cast<cl_int>(g.m));
  kernel.setArg(1, static_cast<cl_int>(g.n));
  kernel.setArg(2, static_cast<cl_int>(g.k));
  set_scalar(kernel, 3, problem.alpha);
  set_scalar(kernel, 4, problem.beta);
  kernel.setArg(5, pad_a ? st.scratch_a : a_buf);
  kernel.setArg(6, cl_int{0});
  kernel.setArg(7, static_cast<cl_int>(pa_rows));
  kernel.setArg(8, pad_b ? st.scratch_b : b_buf);
  kernel.setArg(9, cl_int{0});
  kernel.setArg(10, static_cast<cl_int>(pb_rows));
  kernel.setArg(11, c_main);
  kernel.setArg(12, cl_int{0});
  kernel.setArg(13, static_cast<cl_int>(g.m));
  if (contract_args == kContractArgsExtended) {
    kernel.setArg(14, st.bias);
    kernel.setArg(15, st.workspace);
  }
  // The batch arguments follow the others, in the kernel view's A, B, C order.
  auto set_batch_args = [&](cl::Kernel& k, cl_uint first) {
    if (batch_args == kStridedBatchArgs) {
      k.setArg(first, static_cast<cl_int>(view.swap_ab ? st.b_stride : st.a_stride));
      k.setArg(first + 1, static_cast<cl_int>(view.swap_ab ? st.a_stride : st.b_stride));
      k.setArg(first + 2, static_cast<cl_int>(st.c_stride));
    } else if (batch_args == kOffsetsBatchArgs) {
      k.setArg(first, st.batch_offsets);
    }
  };
  set_batch_args(kernel, contract_args);
  steps.push_back(Step{kernel, to_range(g.global), to_range(g.local), true});
  if (g.split_k && g.split_k->factor > 1) {
    Step reduce;
    try {
      reduce.kernel = cl::Kernel(built.program, g.split_k->reduce_entry.c_str());
    } catch (const cl::Error& e) {
      return Result::failure(config, Status::kCompileFailed,
                             "the program has no reduce kernel '" + g.split_k->reduce_entry + "'");
    }
    // (M, N, alpha, beta, C, c_offset, ldc, bias, workspace)
    reduce.kernel.setArg(0, static_cast<cl_int>(g.m));
    reduce.kernel.setArg(1, static_cast<cl_int>(g.n));
    set_scalar(reduce.kernel, 2, problem.alpha);
    set_scalar(reduce.kernel, 3, problem.beta);
    reduce.kernel.setArg(4, c_main);
    reduce.kernel.setArg(5, cl_int{0});
    reduce.kernel.setArg(6, static_cast<cl_int>(g.m));
    reduce.kernel.setArg(7, st.bias);
    reduce.kernel.setArg(8, st.workspace);
    set_batch_args(reduce.kernel, 9);
    reduce.global = to_range(g.split_k->reduce_global);
    reduce.local = to_range(g.split_k->reduce_local);
    steps.push_back(reduce);
  }
  if (pad_c) pad_step(g.m, g.n, st.scratch_c, view.m, view.n, st.c);

  // Verification: one call on fresh C, compared with the reference.
  queue_.enqueueWriteBuffer(st.c, CL_TRUE, 0, st.c_initial.size(), st.c_initial.data());
  run_call(steps);
  std::vector<unsigned char> out(st.c_initial.size());
  queue_.enqueueReadBuffer(st.c, CL_TRUE, 0, out.size(), out.data());
  // The batch entries of C, one after the other as the reference holds them; the gaps between
  // them must be as they were.
  const size_t c_bytes = static_cast<size_t>(view.m * view.n) * eb;
  std::vector<unsigned char> dense(c_bytes * st.c_pos.size());
  std::vector<unsigned char> gaps = out;
  for (size_t e = 0; e < st.c_pos.size(); ++e) {
    const size_t at = static_cast<size_t>(st.c_pos[e]) * eb;
    std::copy(out.begin() + at, out.begin() + at + c_bytes, dense.begin() + e * c_bytes);
    std::copy(st.c_initial.begin() + at, st.c_initial.begin() + at + c_bytes, gaps.begin() + at);
  }
  if (gaps != st.c_initial) {
    r.status = Status::kWrongResult;
    r.message = "the kernel wrote into C outside the matrices of the batch";
    return r;
  }
  const Verification v = st.reference->check(unpack_elements(dense, problem.precision));
  r.max_error = v.max_error;
  r.tolerance = v.tolerance;
  if (!v.ok) {
    r.status = Status::kWrongResult;
    r.message = v.message;
    return r;
  }

  // Timing. C keeps changing when beta != 0, which does not change the work done.
  for (int i = 0; i < options_.measure.warmup_runs; ++i) run_call(steps);
  std::vector<double> totals, mains;
  double sum = 0;
  const int max_runs = std::max(options_.measure.max_runs, 1);
  while (static_cast<int>(totals.size()) < max_runs &&
         (static_cast<int>(totals.size()) < options_.measure.min_runs ||
          sum < options_.measure.min_time_ms)) {
    const auto [total, main] = run_call(steps);
    totals.push_back(total);
    mains.push_back(main);
    sum += total;
  }
  r.time = summarize(totals, mains);
  r.gflops = r.time.median_ms > 0 ? problem.flops() / (r.time.median_ms * 1e6) : 0;
  r.status = Status::kOk;
  return r;
}

EvaluatorOptions OpenClEvaluatorOptions::options() const {
  EvaluatorOptions o;
  o.templates_dir = templates_dir;
  o.cache_dir = cache_dir;
  o.compile_threads = compile_threads;
  o.measure.warmup_runs = warmup_runs;
  o.measure.min_runs = min_runs;
  o.measure.min_time_ms = min_time_ms;
  o.measure.max_runs = max_runs;
  o.measure.data_seed = data_seed;
  return o;
}

OpenClEvaluator::OpenClEvaluator(KernelSpec spec, const Device& device,
                                 const DeviceProfile* profile, EvaluatorOptions options)
    : impl_(std::make_unique<Impl>(device, profile, std::move(options), std::move(spec))) {}

OpenClEvaluator::OpenClEvaluator(const Device& device, const DeviceProfile* profile,
                                 const OpenClEvaluatorOptions& options)
    : impl_(std::make_unique<Impl>(device, profile, options.options(), std::nullopt)) {}

OpenClEvaluator::~OpenClEvaluator() = default;

Result OpenClEvaluator::evaluate(const Problem& problem_in, const Configuration& config) {
  try {
    Problem problem = problem_in;
    if (auto why = impl_->resolve(problem)) {
      return Result::failure(config, Status::kUnsupported, *why);
    }
    return impl_->evaluate(problem, config);
  } catch (const cl::Error& e) {
    return Result::failure(
        config, Status::kRunFailed,
        std::string("OpenCL error in ") + e.what() + ": " + cl_error_name(e.err()));
  } catch (const Error& e) {
    Status s = Status::kRunFailed;
    if (e.code() == ErrorCode::kInvalidArgument || e.code() == ErrorCode::kInvalidFile) {
      s = Status::kInvalid;
    } else if (e.code() == ErrorCode::kUnsupported) {
      s = Status::kUnsupported;
    }
    return Result::failure(config, s, e.what());
  } catch (const std::exception& e) {
    return Result::failure(config, Status::kRunFailed, e.what());
  }
}

void OpenClEvaluator::prepare(const Problem& problem_in,
                              const std::vector<Configuration>& upcoming) {
  Problem problem = problem_in;
  try {
    if (impl_->resolve(problem)) return;  // evaluate() reports it
  } catch (const std::exception&) {
    return;
  }
  impl_->prepare(problem, upcoming);
}

DeviceEvaluator::CompileSummary OpenClEvaluator::compile(
    const Problem& problem_in, const std::vector<Configuration>& configs) {
  Problem problem = problem_in;
  if (auto why = impl_->resolve(problem)) throw Error(ErrorCode::kUnsupported, *why);
  return impl_->compile(problem, configs);
}

std::string OpenClEvaluator::description() const {
  return impl_->description();
}

const KernelSpec& OpenClEvaluator::spec(const std::string& kernel) {
  return impl_->spec(kernel);
}

const KernelSpec& OpenClEvaluator::spec() const {
  return impl_->own_spec();
}

}  // namespace gemmtune
