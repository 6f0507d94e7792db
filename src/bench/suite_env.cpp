// SPDX-License-Identifier: Apache-2.0
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/bench/suite_internal.hpp"
#include "src/core/error.hpp"
#include "src/kernel/gemm_view.hpp"

namespace gemmtune::suite {

double gflops_of(const Problem& p, double ms) {
  return ms > 0 ? p.flops() / (ms * 1e6) : 0.0;
}

std::optional<std::string> device_lacks(const DeviceInfo& info, Precision p) {
  if (p == Precision::kFP16 && !info.has_fp16) {
    return std::string(
        "the device lacks cl_khr_fp16, which precision 16 (half arithmetic) needs; 16acc32 (half "
        "storage, float arithmetic) does not");
  }
  if (p == Precision::kFP64 && !info.has_fp64) {
    return std::string("the device lacks cl_khr_fp64, which precision 64 needs");
  }
  return std::nullopt;
}

ClEnv::ClEnv(const Device& device, const DeviceProfile* profile, const BenchSuiteOptions& options)
    : device_(device),
      profile_(profile),
      templates_dir_(options.templates_dir),
      context_(std::vector<cl::Device>{device.device}),
      queue_(context_, device.device, CL_QUEUE_PROFILING_ENABLE),
      builder_(device, context_, profile, options.templates_dir, options.cache_dir, 1),
      clock_(context_, device) {}

const KernelSpec& ClEnv::spec(const std::string& kernel) {
  if (auto it = specs_.find(kernel); it != specs_.end()) return it->second;
  KernelSpec spec = KernelSpec::load_named(templates_dir_, kernel);
  if (spec.backend() != Backend::kOpenCl) {
    throw invalid_argument("kernel " + kernel +
                           " is not an OpenCL template; the suite's CLBlast "
                           "column is CLBlast's stock routine");
  }
  return specs_.emplace(kernel, std::move(spec)).first->second;
}

std::vector<std::string> epilogue_kernels(ClEnv& env) {
  const Epilogue wanted = kSuiteEpilogue;
  std::vector<std::string> out;
  for (const auto& k : default_suite_kernels()) {
    if (supports_epilogue(env.spec(k), wanted)) out.push_back(k);
  }
  return out;
}

CaseData::CaseData(ClEnv& env, const Problem& p, const BenchSuiteOptions& options,
                   bool epilogue_too)
    : problem(p), options_(options) {
  const Shape& shape = p.shape;
  // A and B do not depend on the epilogue; its inputs add the bias.
  host = make_inputs(problem_for(epilogue_too), options.seed);
  pa = BatchPlacement(problem, shape.m * shape.k);
  pb = BatchPlacement(problem, shape.k * shape.n);
  pc = BatchPlacement(problem, shape.m * shape.n);
  const double quiet_nan = std::numeric_limits<double>::quiet_NaN();
  nan = pack_elements({quiet_nan}, problem.precision);
  auto upload = [&](const std::vector<unsigned char>& bytes) {
    cl::Buffer buf(env.context(), CL_MEM_READ_ONLY, std::max<size_t>(bytes.size(), 1));
    if (!bytes.empty()) env.queue().enqueueWriteBuffer(buf, CL_TRUE, 0, bytes.size(), bytes.data());
    return buf;
  };
  a_buf = upload(pa.image(host.a, quiet_nan, problem.precision));
  b_buf = upload(pb.image(host.b, quiet_nan, problem.precision));
  bias_buf = upload(pack_elements(host.bias, problem.precision));
  c_buf = cl::Buffer(env.context(), CL_MEM_READ_WRITE, c_bytes());
}

Problem CaseData::problem_for(bool epilogue) const {
  Problem p = problem;
  if (epilogue) p.epilogue = kSuiteEpilogue;
  return p;
}

GemmBuffers CaseData::buffers(bool epilogue) const {
  GemmBuffers g = placed_buffers(problem, a_buf(), b_buf(), c_buf(), pa, pb, pc);
  if (epilogue) g.bias = bias_buf();
  return g;
}

const Reference& CaseData::reference(bool epilogue) {
  auto& r = references_[epilogue ? 1 : 0];
  if (!r) {
    const auto t0 = Clock::now();
    ReferenceOptions ro;
    ro.full_check_limit = options_.full_check_limit;
    ro.sample_band = options_.sample_band;
    r = std::make_unique<Reference>(problem_for(epilogue), host, ro);
    spdlog::debug("reference of {} ready in {:.0f} ms", problem.shape.to_string(),
                  ms_between(t0, Clock::now()));
  }
  return *r;
}

namespace {

// gemmtune's call for one configuration: the one GEMM call path of src/eval, bound to the row's
// buffers once.
class TunedCall : public SideCall {
 public:
  TunedCall(ClEnv& env, std::unique_ptr<GemmCall> call) : env_(env), call_(std::move(call)) {}
  void enqueue(cl::Event* last) override {
    if (!last) return call_->enqueue(env_.queue());
    std::vector<cl::Event> events;
    call_->enqueue(env_.queue(), nullptr, &events);
    *last = events.back();
  }

 private:
  ClEnv& env_;
  std::unique_ptr<GemmCall> call_;
};

}  // namespace

std::unique_ptr<SideCall> tuned_call(ClEnv& env, const Candidate& candidate, CaseData& d,
                                     bool epilogue) {
  const KernelSpec& spec = env.spec(candidate.kernel);
  const Configuration config = spec.complete(candidate.parameters);
  GemmCall::Compiled compiled =
      GemmCall::compile(env.builder(), spec, config, d.problem_for(epilogue));
  if (!compiled.call) {
    const Result& r = compiled.result;
    const std::string what = candidate.kernel + " " + to_string(r.status) + ": " + r.message;
    if (r.status == Status::kInvalid) throw invalid_argument(what);
    throw Error(r.status == Status::kCompileFailed ? ErrorCode::kDevice : ErrorCode::kUnsupported,
                what);
  }
  compiled.call->bind(d.buffers(epilogue), env.queue());
  return std::make_unique<TunedCall>(env, std::move(compiled.call));
}

namespace {

// Fills C with NaN: beta is 0, so no call may read it, and whatever it leaves unwritten shows.
void fill_c_with_nan(ClEnv& env, CaseData& d) {
  auto fill = [&](auto pattern) {
    std::memcpy(&pattern, d.nan.data(), sizeof pattern);
    env.queue().enqueueFillBuffer(d.c_buf, pattern, 0, d.c_bytes());
  };
  switch (d.nan.size()) {
    case 2:
      fill(uint16_t{});
      break;
    case 8:
      fill(uint64_t{});
      break;
    default:
      fill(uint32_t{});
  }
}

}  // namespace

Verification verify_call(ClEnv& env, CaseData& d, SideCall& call, bool epilogue) {
  call.prepare();
  fill_c_with_nan(env, d);
  env.queue().finish();
  call.enqueue(nullptr);
  env.queue().finish();
  std::vector<unsigned char> c(d.c_bytes());
  env.queue().enqueueReadBuffer(d.c_buf, CL_TRUE, 0, c.size(), c.data());
  if (auto at = d.pc.changed_gap(c, d.nan)) {
    Verification v;
    v.wrong = 1;
    v.tolerance = relative_tolerance(d.problem.precision, d.problem.shape.k);
    v.message = fmt::format(
        "the call wrote into C outside the matrices of the batch (element {} of the buffer, "
        "between entries)",
        *at);
    return v;
  }
  return d.reference(epilogue).check(c, d.problem.precision, d.pc.positions);
}

double time_call(ClEnv& env, SideCall& call) {
  call.prepare();
  const auto t0 = Clock::now();
  call.enqueue(nullptr);
  env.queue().finish();
  return ms_between(t0, Clock::now());
}

}  // namespace gemmtune::suite
