// SPDX-License-Identifier: Apache-2.0
#include "src/eval/opencl_evaluator.hpp"

#include <chrono>
#include <future>
#include <limits>
#include <list>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/problem_key.hpp"
#include "src/core/timing_stats.hpp"
#include "src/eval/gemm_call.hpp"
#include "src/eval/program_builder.hpp"
#include "src/eval/queued_clock.hpp"
#include "src/verify/batch_placement.hpp"
#include "src/verify/reference.hpp"

namespace gemmtune {

namespace {

using Clock = std::chrono::steady_clock;

// What the gaps of a batched C hold; compared bytewise after the call.
constexpr double kGapSentinel = -4321.0;

}  // namespace

// Named, not anonymous: OpenClEvaluator::Impl holds these, and a type of an anonymous namespace
// inside a class of another translation unit's batch is a warning in a unity build.
namespace opencl_evaluator_detail {

// Per problem: inputs, reference and device buffers, made once and reused by every
// configuration.
struct ProblemState {
  ProblemKey key{Problem{}};
  Problem problem;
  HostMatrices host;
  std::unique_ptr<Reference> reference;
  BatchPlacement a_place, b_place, c_place;
  cl::Buffer a, b, c, bias;
  std::vector<unsigned char> c_initial;  // C before the call: the inputs, or NaN when beta == 0
  // The same on the device where it fits, so that each verification resets C by a copy on the
  // device instead of sending C over the bus again (16 MiB at 2048^2 in FP32).
  cl::Buffer c_pristine;
  // C as read back, kept between evaluations so that each one does not zero and fault in a
  // fresh vector of C's size.
  std::vector<unsigned char> c_out;

  GemmBuffers buffers() const {
    GemmBuffers g = placed_buffers(problem, a(), b(), c(), a_place, b_place, c_place);
    g.bias = host.bias.empty() ? nullptr : bias();
    return g;
  }
};

}  // namespace opencl_evaluator_detail

using opencl_evaluator_detail::ProblemState;

namespace {

// One call as the queued clock enqueues it: events only where it asks for them.
void enqueue_for_clock(const GemmCall& call, cl::CommandQueue& queue, cl::Event* last) {
  if (!last) return call.enqueue(queue);
  std::vector<cl::Event> events;
  call.enqueue(queue, nullptr, &events);
  *last = events.back();
}

}  // namespace

class OpenClEvaluator::Impl {
 public:
  Impl(const Device& device, const DeviceProfile* profile, EvaluatorOptions options,
       KernelSpec spec)
      : device_(device),
        options_(std::move(options)),
        spec_(std::move(spec)),
        context_(std::vector<cl::Device>{device.device}),
        queue_(context_, device.device, CL_QUEUE_PROFILING_ENABLE),
        builder_(device, context_, profile, options_.templates_dir, options_.cache_dir,
                 options_.compile_threads),
        clock_(context_, device) {}

  std::string description() const {
    const auto& profile = builder_.profile();
    return "OpenCL " + device_.info.name + " (" + device_.info.platform_name + "), profile " +
           (profile ? profile->name : std::string("generic"));
  }

  const KernelSpec& spec() const { return spec_; }

  Result evaluate(const Problem& problem, const Configuration& config, const EvaluationHint& hint);

  void prepare(const Problem& problem, const std::vector<Configuration>& upcoming) {
    if (GemmCall::refusal(spec_, device_.info, problem)) return;  // evaluate() reports it
    builder_.prefetch(spec_, problem, upcoming);
  }

  CompileSummary compile(const Problem& problem, const std::vector<Configuration>& configs) {
    if (auto why = GemmCall::refusal(spec_, device_.info, problem)) {
      throw Error(ErrorCode::kUnsupported, why->message);
    }
    return builder_.compile_all(spec_, problem, configs);
  }

 private:
  ProblemState& state_for(const Problem& problem);
  void keep_pristine_c(ProblemState& st, size_t ab_bytes);
  std::optional<Result> checked_call(const GemmCall& call, ProblemState& st, const Result& r);
  Verification compare(const ProblemState& st);
  // The most a result of `problem` may imply: the profile's peak with a margin, else a rate no
  // device of this size reaches (0 = unknown).
  double max_gflops(const Problem& problem) const;

  Device device_;
  EvaluatorOptions options_;
  KernelSpec spec_;
  cl::Context context_;
  cl::CommandQueue queue_;
  ProgramBuilder builder_;
  QueuedClock clock_;

  std::list<std::unique_ptr<ProblemState>> states_;  // most recently used first
  static constexpr size_t kMaxStates = 2;
};

ProblemState& OpenClEvaluator::Impl::state_for(const Problem& problem) {
  const ProblemKey key(problem);  // the data does not depend on the kernel
  for (auto it = states_.begin(); it != states_.end(); ++it) {
    if ((*it)->key == key) {
      states_.splice(states_.begin(), states_, it);
      return *states_.front();
    }
  }
  auto st = std::make_unique<ProblemState>();
  st->key = key;
  st->problem = problem;
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
  st->a_place = BatchPlacement(problem, sh.m * sh.k);
  st->b_place = BatchPlacement(problem, sh.k * sh.n);
  st->c_place = BatchPlacement(problem, sh.m * sh.n);
  const auto a = st->a_place.image(st->host.a, nan, problem.precision);
  const auto b = st->b_place.image(st->host.b, nan, problem.precision);
  st->c_initial = st->c_place.image(
      problem.beta == 0.0 ? std::vector<double>(st->host.c.size(), nan) : st->host.c, kGapSentinel,
      problem.precision);
  st->a = cl::Buffer(context_, CL_MEM_READ_ONLY, a.size());
  st->b = cl::Buffer(context_, CL_MEM_READ_ONLY, b.size());
  st->c = cl::Buffer(context_, CL_MEM_READ_WRITE, st->c_initial.size());
  queue_.enqueueWriteBuffer(st->a, CL_TRUE, 0, a.size(), a.data());
  queue_.enqueueWriteBuffer(st->b, CL_TRUE, 0, b.size(), b.data());
  keep_pristine_c(*st, a.size() + b.size());
  if (!st->host.bias.empty()) {
    const auto bias = pack_elements(st->host.bias, problem.precision);
    st->bias = cl::Buffer(context_, CL_MEM_READ_ONLY, bias.size());
    queue_.enqueueWriteBuffer(st->bias, CL_TRUE, 0, bias.size(), bias.data());
  }
  states_.push_front(std::move(st));
  while (states_.size() > kMaxStates) states_.pop_back();
  return *states_.front();
}

// A second copy of C fits where A, B and both copies of C take at most half the device's memory
// (the rest is the kernels', the padding's and split-K's); where its allocation fails, C is sent
// from the host as before.
void OpenClEvaluator::Impl::keep_pristine_c(ProblemState& st, size_t ab_bytes) {
  const size_t c_bytes = st.c_initial.size();
  const auto& info = device_.info;
  if (c_bytes == 0 || c_bytes > info.max_alloc_bytes ||
      ab_bytes + 2 * c_bytes > info.global_mem_bytes / 2) {
    return;
  }
  try {
    cl::Buffer pristine(context_, CL_MEM_READ_ONLY, c_bytes);
    queue_.enqueueWriteBuffer(pristine, CL_TRUE, 0, c_bytes, st.c_initial.data());
    st.c_pristine = pristine;
  } catch (const cl::Error& e) {
    spdlog::debug("no device copy of C ({}): C is sent from the host for each check",
                  cl_error_name(e.err()));
  }
}

double OpenClEvaluator::Impl::max_gflops(const Problem& problem) const {
  const DeviceProfile* profile = builder_.profile() ? &*builder_.profile() : nullptr;
  return max_plausible_gflops(device_.info, profile, problem.precision);
}

// One call on fresh C, read back; the gaps of a batch must be untouched. The comparison with the
// reference is left to the caller (compare()), so that it can run while the device times.
std::optional<Result> OpenClEvaluator::Impl::checked_call(const GemmCall& call, ProblemState& st,
                                                          const Result& r) {
  const Precision precision = st.problem.precision;
  if (st.c_pristine()) {
    queue_.enqueueCopyBuffer(st.c_pristine, st.c, 0, 0, st.c_initial.size());
  } else {
    queue_.enqueueWriteBuffer(st.c, CL_TRUE, 0, st.c_initial.size(), st.c_initial.data());
  }
  call.enqueue(queue_);
  queue_.finish();
  std::vector<unsigned char>& out = st.c_out;
  out.resize(st.c_initial.size());
  queue_.enqueueReadBuffer(st.c, CL_TRUE, 0, out.size(), out.data());
  if (st.c_place.changed_gap(out, pack_elements({kGapSentinel}, precision))) {
    Result wrong = r;
    wrong.status = Status::kWrongResult;
    wrong.message = "the kernel wrote into C outside the matrices of the batch";
    return wrong;
  }
  return std::nullopt;
}

// C as read back by checked_call(), compared with the reference in the device's element type
// (converting the whole of C to double first took about 40 ms per evaluation at 2048^3 on the
// H100's host). Reads only host memory: it may run beside the timing.
Verification OpenClEvaluator::Impl::compare(const ProblemState& st) {
  return st.reference->check(st.c_out, st.problem.precision, st.c_place.positions);
}

Result OpenClEvaluator::Impl::evaluate(const Problem& problem, const Configuration& config,
                                       const EvaluationHint& hint) {
  if (const std::string why = unmeasurable(problem); !why.empty()) {
    return Result::failure(config, Status::kUnsupported, why);
  }
  const KernelSpec& s = spec_;
  const auto t0 = Clock::now();
  GemmCall::Compiled compiled = GemmCall::compile(builder_, s, config, problem);
  double program_ms = ms_since(t0);
  if (!compiled.call) {
    compiled.result.steps.program_ms = program_ms;
    return compiled.result;
  }
  const GemmCall& call = *compiled.call;
  // The problem's data, made once per problem, is no configuration's cost.
  ProblemState& st = state_for(problem);
  const auto tb = Clock::now();
  compiled.call->bind(st.buffers(), queue_);
  Result r = compiled.result;
  r.helper_kernels = call.helper_kernels();
  program_ms += ms_since(tb);
  r.steps.program_ms = program_ms;
  const auto t1 = Clock::now();
  if (auto wrong = checked_call(call, st, r)) {
    wrong->steps.verify_ms = ms_since(t1);
    return *wrong;
  }
  // The host compares C with the reference while the device times the same kernel: a result
  // is still returned only once both are done, and a wrong one keeps no time.
  auto comparison = std::async(std::launch::async, [this, &st] { return compare(st); });
  const double call_ms = ms_since(t1);
  const auto t2 = Clock::now();
  const double bound = max_gflops(problem);
  TimingStats time;
  try {
    time = clock_.measure(
        queue_, options_.measure, problem.flops(), bound,
        [&](cl::CommandQueue& q, cl::Event* last) { enqueue_for_clock(call, q, last); },
        hint.stop_above_ms);
  } catch (...) {
    comparison.wait();
    throw;
  }
  r.steps.timing_ms = ms_since(t2);
  const auto t3 = Clock::now();
  const Verification v = comparison.get();
  r.steps.verify_ms = call_ms + ms_since(t3);
  r.max_error = v.max_error;
  r.tolerance = v.tolerance;
  if (!v.ok) {
    r.status = Status::kWrongResult;
    r.message = v.message;
    return r;
  }
  r.time = time;
  r.gflops = r.time.median_ms > 0 ? problem.flops() / (r.time.median_ms * 1e6) : 0;
  if (r.time.median_ms <= 0 || (bound > 0 && r.gflops > bound)) {
    // Even the host clock says the impossible: no figure of this run can be believed.
    return Result::failure(
        config, Status::kRunFailed,
        fmt::format("timer error: {:.4g} ms a call ({} clock) implies {:.0f} GFLOPS, above the "
                    "{:.0f} GFLOPS this device can reach",
                    r.time.median_ms, to_string(r.time.clock), r.gflops, bound));
  }
  // Where an evaluation's time goes: what limits a search's throughput.
  spdlog::debug(
      "evaluation: {:.1f} ms to build or fetch and bind, {:.1f} ms to verify (beside the timing "
      "but the checked call), {:.1f} ms to time {} runs of {} calls",
      r.steps.program_ms, r.steps.verify_ms, r.steps.timing_ms, r.time.runs, r.time.calls);
  return r;
}

OpenClEvaluator::OpenClEvaluator(KernelSpec spec, const Device& device,
                                 const DeviceProfile* profile, EvaluatorOptions options)
    : impl_(std::make_unique<Impl>(device, profile, std::move(options), std::move(spec))) {}

OpenClEvaluator::~OpenClEvaluator() = default;

Result OpenClEvaluator::evaluate(const Problem& problem, const Configuration& config) {
  return evaluate_hinted(problem, config, {});
}

Result OpenClEvaluator::evaluate_hinted(const Problem& problem, const Configuration& config,
                                        const EvaluationHint& hint) {
  try {
    return impl_->evaluate(problem, config, hint);
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

void OpenClEvaluator::prepare(const Problem& problem, const std::vector<Configuration>& upcoming) {
  try {
    impl_->prepare(problem, upcoming);
  } catch (const std::exception& e) {
    // prepare() is a hint; evaluate() reports the same problem properly.
    spdlog::debug("prepare: {}", e.what());
  }
}

DeviceEvaluator::CompileSummary OpenClEvaluator::compile(
    const Problem& problem, const std::vector<Configuration>& configs) {
  return impl_->compile(problem, configs);
}

std::string OpenClEvaluator::description() const {
  return impl_->description();
}

const KernelSpec& OpenClEvaluator::spec() const {
  return impl_->spec();
}

}  // namespace gemmtune
