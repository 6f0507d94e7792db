// SPDX-License-Identifier: Apache-2.0
#include "src/eval/clblast_evaluator.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "src/core/error.hpp"
#include "src/core/problem_key.hpp"

#ifdef GEMMTUNE_HAVE_CLBLAST

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>

#include <clblast.h>
#include <spdlog/spdlog.h>

#include "src/db/export.hpp"
#include "src/eval/measure.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/verify/reference.hpp"

#endif

namespace gemmtune {

std::string clblast_status_name(int status) {
  // The codes of clblast.h that a GEMM call can return and a reader would want named; the
  // numbers are CLBlast's stable API, spelled out so that this needs no CLBlast header.
  static const std::pair<int, const char*> kNames[] = {
      {0, "kSuccess"},
      {-3, "kOpenCLCompilerNotAvailable"},
      {-4, "kTempBufferAllocFailure"},
      {-5, "kOpenCLOutOfResources"},
      {-6, "kOpenCLOutOfHostMemory"},
      {-11, "kOpenCLBuildProgramFailure"},
      {-30, "kInvalidValue"},
      {-36, "kInvalidCommandQueue"},
      {-38, "kInvalidMemObject"},
      {-54, "kInvalidLocalThreadsTotal"},
      {-55, "kInvalidLocalThreadsDim"},
      {-1024, "kNotImplemented"},
      {-1017, "kInvalidDimension"},
      {-1011, "kInsufficientMemoryA"},
      {-1010, "kInsufficientMemoryB"},
      {-1009, "kInsufficientMemoryC"},
      {-2050, "kInsufficientMemoryTemp"},
      {-2049, "kInvalidBatchCount"},
      {-2046, "kInvalidLocalMemUsage"},
      {-2045, "kNoHalfPrecision"},
      {-2044, "kNoDoublePrecision"},
      {-2041, "kDatabaseError"},
      {-2040, "kUnknownError"},
      {-2039, "kUnexpectedError"},
  };
  for (const auto& [code, name] : kNames) {
    if (code == status) return std::string(name) + " (" + std::to_string(status) + ")";
  }
  return std::to_string(status);
}

StdoutToStderr::StdoutToStderr() {
  std::cout.flush();
  std::fflush(stdout);
  saved_ = ::dup(STDOUT_FILENO);
  if (saved_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

StdoutToStderr::~StdoutToStderr() {
  std::fflush(stdout);
  if (saved_ >= 0) {
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
}

#ifndef GEMMTUNE_HAVE_CLBLAST

bool clblast_available() {
  return false;
}

std::unique_ptr<DeviceEvaluator> make_clblast_evaluator(KernelSpec, const Device&,
                                                        const DeviceProfile*,
                                                        const EvaluatorOptions&) {
  throw Error(ErrorCode::kUnsupported,
              "this gemmtune was built without CLBlast; the clblast-* kernels are unavailable");
}

#else

bool clblast_available() {
  return true;
}

// clblast_status_name spells the codes out; these keep it honest against the header.
static_assert(static_cast<int>(clblast::StatusCode::kNoHalfPrecision) == -2045);
static_assert(static_cast<int>(clblast::StatusCode::kNoDoublePrecision) == -2044);
static_assert(static_cast<int>(clblast::StatusCode::kInvalidBatchCount) == -2049);
static_assert(static_cast<int>(clblast::StatusCode::kOpenCLOutOfResources) == -5);

clblast::Precision clblast_precision(Precision p) {
  switch (p) {
    case Precision::kFP64:
      return clblast::Precision::kDouble;
    case Precision::kFP16:
      return clblast::Precision::kHalf;
    default:
      return clblast::Precision::kSingle;
  }
}

namespace {

std::string status_text(clblast::StatusCode s) {
  return "CLBlast status " + clblast_status_name(static_cast<int>(s));
}

Status result_status(clblast::StatusCode s) {
  switch (s) {
    case clblast::StatusCode::kOpenCLBuildProgramFailure:
    case clblast::StatusCode::kInvalidBuildOptions:
    case clblast::StatusCode::kInvalidProgram:
    case clblast::StatusCode::kInvalidBinary:
      return Status::kCompileFailed;
    case clblast::StatusCode::kInvalidLocalNumDimensions:
    case clblast::StatusCode::kInvalidLocalThreadsTotal:
    case clblast::StatusCode::kInvalidLocalThreadsDim:
    case clblast::StatusCode::kInvalidLocalMemUsage:
      return Status::kDeviceLimit;
    case clblast::StatusCode::kNoHalfPrecision:
    case clblast::StatusCode::kNoDoublePrecision:
      return Status::kUnsupported;
    default:
      return Status::kRunFailed;
  }
}

class ClblastEvaluator : public DeviceEvaluator {
 public:
  ClblastEvaluator(KernelSpec spec, const Device& device, const DeviceProfile* profile,
                   const EvaluatorOptions& options)
      : spec_(std::move(spec)), device_(device), measure_(options.measure) {
    if (spec_.backend() != Backend::kClblast) {
      throw invalid_argument("kernel " + spec_.name() + " is not a CLBlast kernel");
    }
    limits_ = device_limits(device_.info, profile);
    try {
      context_ = cl::Context(device_.device);
      queue_ = cl::CommandQueue(context_, device_.device);
    } catch (const cl::Error& e) {
      throw Error(ErrorCode::kDevice,
                  "cannot open " + device_.info.name + " for CLBlast: " + cl_error_name(e.err()));
    }
  }

  std::string description() const override {
    return "CLBlast clblast::Gemm (" + spec_.clblast_kernel() + ") on " + device_.info.name;
  }

  const KernelSpec& spec() const override { return spec_; }

  // CLBlast compiles inside its first call: nothing to build ahead, only invalid ones to count.
  CompileSummary compile(const Problem& problem,
                         const std::vector<Configuration>& configs) override {
    CompileSummary summary;
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    for (const auto& c : configs) {
      if (spec_.check(c, limits_, ctx)) ++summary.invalid;
    }
    return summary;
  }

  Result evaluate(const Problem& problem, const Configuration& config) override {
    Configuration full;
    try {
      full = spec_.complete(config);
    } catch (const Error& e) {
      return Result::failure(config, Status::kInvalid, e.what());
    }
    if (auto why = unsupported(problem)) return Result::failure(full, Status::kUnsupported, *why);
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    if (auto why = spec_.check(full, DeviceLimits{}, ctx)) {
      return Result::failure(full, Status::kInvalid, *why);
    }
    if (auto why = spec_.check(full, limits_, ctx)) {
      return Result::failure(full, Status::kDeviceLimit, *why);
    }
    try {
      return run(problem, full);
    } catch (const cl::Error& e) {
      return Result::failure(full, Status::kRunFailed,
                             std::string(e.what()) + " " + cl_error_name(e.err()));
    } catch (const Error& e) {
      return Result::failure(full, Status::kRunFailed, e.what());
    }
  }

 private:
  struct ProblemState {
    ProblemKey key{Problem{}};
    Problem problem;
    HostMatrices inputs;
    std::unique_ptr<Reference> reference;
    std::vector<unsigned char> c0;
    cl::Buffer a, b, c;
    size_t c_bytes = 0;
  };

  std::optional<std::string> unsupported(const Problem& p) const {
    if (p.precision == Precision::kFP16Acc32) {
      return std::string("CLBlast has no fp16 GEMM with fp32 accumulation");
    }
    if (p.precision == Precision::kFP16 && !device_.info.has_fp16) {
      return "the device lacks cl_khr_fp16";
    }
    if (p.precision == Precision::kFP64 && !device_.info.has_fp64) {
      return "the device lacks cl_khr_fp64";
    }
    if (p.batch != 1) return std::string("the CLBlast evaluator times single GEMMs (batch 1)");
    if (!p.epilogue.none()) return std::string("CLBlast's GEMM has no epilogue");
    return std::nullopt;
  }

  // Buffers and the reference are made once per problem.
  ProblemState& state_for(const Problem& problem) {
    const ProblemKey key(problem);
    if (state_ && state_->key == key) return *state_;
    state_.reset();
    auto s = std::make_unique<ProblemState>();
    s->key = key;
    s->problem = problem;
    s->inputs = make_inputs(problem, measure_.data_seed);
    s->reference = std::make_unique<Reference>(problem, s->inputs);
    const auto a = pack_elements(s->inputs.a, problem.precision);
    const auto b = pack_elements(s->inputs.b, problem.precision);
    s->c0 = pack_elements(s->inputs.c, problem.precision);
    s->c_bytes = s->c0.size();
    auto make = [&](const std::vector<unsigned char>& bytes) {
      return cl::Buffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes.size(),
                        const_cast<unsigned char*>(bytes.data()));
    };
    s->a = make(a);
    s->b = make(b);
    s->c = make(s->c0);
    state_ = std::move(s);
    return *state_;
  }

  clblast::StatusCode install(const Problem& problem, const Configuration& config,
                              std::string* message) {
    const std::string& kernel = spec_.clblast_kernel();
    const bool direct = kernel == "XgemmDirect";
    std::unordered_map<std::string, size_t> params;
    for (const auto& name : clblast_parameter_names(kernel)) {
      auto it = config.find(name);
      if (it == config.end()) {
        *message = "the " + spec_.name() + " spec lacks CLBlast parameter " + name;
        return clblast::StatusCode::kMissingOverrideParameter;
      }
      params[name] = static_cast<size_t>(it->second);
    }
    const auto precision = clblast_precision(problem.precision);
    auto status = clblast::OverrideParameters(device_.device(), kernel, precision, params);
    if (status != clblast::StatusCode::kSuccess) {
      *message = "OverrideParameters(" + kernel + ") failed: " + status_text(status);
      return status;
    }
    // CLBlast runs XgemmDirect when m*n*k < XGEMM_MIN_INDIRECT_SIZE^3: force the chosen kernel.
    const size_t min_indirect = direct ? (size_t{1} << 20) : 0;
    status = clblast::OverrideParameters(device_.device(), "GemmRoutine", precision,
                                         {{"XGEMM_MIN_INDIRECT_SIZE", min_indirect}});
    if (status != clblast::StatusCode::kSuccess) {
      *message = "OverrideParameters(GemmRoutine) failed: " + status_text(status);
    }
    return status;
  }

  // A dense problem in CLBlast's terms: the leading dimension is the stored row length
  // (row-major) or column length (column-major) of each matrix as stored.
  struct DenseCall {
    clblast::Layout layout;
    clblast::Transpose ta, tb;
    size_t m, n, k, lda, ldb, ldc;
    explicit DenseCall(const Problem& p)
        : layout(p.order == Order::kRowMajor ? clblast::Layout::kRowMajor
                                             : clblast::Layout::kColMajor),
          ta(p.trans_a ? clblast::Transpose::kYes : clblast::Transpose::kNo),
          tb(p.trans_b ? clblast::Transpose::kYes : clblast::Transpose::kNo),
          m(p.shape.m),
          n(p.shape.n),
          k(p.shape.k) {
      const bool row = p.order == Order::kRowMajor;
      const size_t a_rows = p.trans_a ? k : m, a_cols = p.trans_a ? m : k;
      const size_t b_rows = p.trans_b ? n : k, b_cols = p.trans_b ? k : n;
      lda = row ? a_cols : a_rows;
      ldb = row ? b_cols : b_rows;
      ldc = row ? n : m;
    }
  };

  template <typename T>
  clblast::StatusCode gemm_typed(const ProblemState& s, T alpha, T beta) {
    const DenseCall d(s.problem);
    cl_command_queue q = queue_();
    return clblast::Gemm<T>(d.layout, d.ta, d.tb, d.m, d.n, d.k, alpha, s.a(), 0, d.lda, s.b(), 0,
                            d.ldb, beta, s.c(), 0, d.ldc, &q, nullptr);
  }

  // The temporary buffer CLBlast would allocate: zero for the direct kernel, which needs no
  // padded copies. Served from CLBlast's program cache right after a Gemm call.
  template <typename T>
  clblast::StatusCode temp_typed(const ProblemState& s, size_t* bytes) {
    const DenseCall d(s.problem);
    cl_command_queue q = queue_();
    return clblast::GemmTempBufferSize<T>(d.layout, d.ta, d.tb, d.m, d.n, d.k, 0, d.lda, 0, d.ldb,
                                          0, d.ldc, &q, *bytes);
  }

  clblast::StatusCode temp_buffer_bytes(const ProblemState& s, size_t* bytes) {
    StdoutToStderr redirect;
    switch (s.problem.precision) {
      case Precision::kFP64:
        return temp_typed<double>(s, bytes);
      case Precision::kFP16:
        return temp_typed<cl_half>(s, bytes);
      default:
        return temp_typed<float>(s, bytes);
    }
  }

  clblast::StatusCode gemm(const ProblemState& s) {
    const Problem& p = s.problem;
    StdoutToStderr redirect;
    clblast::StatusCode status;
    switch (p.precision) {
      case Precision::kFP64:
        status = gemm_typed<double>(s, p.alpha, p.beta);
        break;
      case Precision::kFP16:
        status = gemm_typed<cl_half>(s, float_to_half(static_cast<float>(p.alpha)),
                                     float_to_half(static_cast<float>(p.beta)));
        break;
      default:
        status = gemm_typed<float>(s, static_cast<float>(p.alpha), static_cast<float>(p.beta));
    }
    if (status == clblast::StatusCode::kSuccess) queue_.finish();
    return status;
  }

  Result run(const Problem& problem, const Configuration& config) {
    ProblemState& s = state_for(problem);
    std::string message;
    auto status = install(problem, config, &message);
    if (status != clblast::StatusCode::kSuccess) {
      return Result::failure(config, result_status(status), message);
    }
    // First call: compiles (CLBlast caches the program) and produces the output to verify.
    queue_.enqueueWriteBuffer(s.c, CL_TRUE, 0, s.c_bytes, s.c0.data());
    const auto t0 = std::chrono::steady_clock::now();
    status = gemm(s);
    const double first_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (status != clblast::StatusCode::kSuccess) {
      return Result::failure(config, result_status(status),
                             "clblast::Gemm: " + status_text(status));
    }
    std::vector<unsigned char> out(s.c_bytes);
    queue_.enqueueReadBuffer(s.c, CL_TRUE, 0, s.c_bytes, out.data());
    const auto check = s.reference->check(out, problem.precision, {0});  // one GEMM, at 0
    Result r;
    r.config = config;
    r.max_error = check.max_error;
    r.tolerance = check.tolerance;
    r.compile_ms = first_ms;
    r.helper_kernels = spec_.clblast_kernel() == "Xgemm";  // CLBlast pads/transposes for Xgemm
    if (!check.ok) {
      r.status = Status::kWrongResult;
      r.message = check.message;
      return r;
    }
    if (spec_.clblast_kernel() == "XgemmDirect") {
      size_t temp = 0;
      if (temp_buffer_bytes(s, &temp) == clblast::StatusCode::kSuccess && temp != 0) {
        return Result::failure(config, Status::kRunFailed,
                               "CLBlast did not pick XgemmDirect (it asks for a " +
                                   std::to_string(temp) + "-byte temporary buffer)");
      }
    }
    // The whole call is timed (CLBlast's helper kernels are part of it), so the kernel-only
    // median is the call's. A failing call stops the measurement.
    try {
      r.time = measure_calls(measure_, [&] {
        const auto start = std::chrono::steady_clock::now();
        status = gemm(s);
        if (status != clblast::StatusCode::kSuccess) throw status;
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        return std::make_pair(ms, ms);
      });
      r.time.clock = TimingClock::kWholeCall;
      r.time.calls = 1;
    } catch (clblast::StatusCode failed) {
      return Result::failure(config, result_status(failed),
                             "clblast::Gemm: " + status_text(failed));
    }
    r.gflops = r.time.median_ms > 0 ? problem.flops() / (r.time.median_ms * 1e6) : 0;
    return r;
  }

  KernelSpec spec_;
  Device device_;
  MeasureSettings measure_;
  DeviceLimits limits_;
  cl::Context context_;
  cl::CommandQueue queue_;
  std::unique_ptr<ProblemState> state_;
};

}  // namespace

std::unique_ptr<DeviceEvaluator> make_clblast_evaluator(KernelSpec spec, const Device& device,
                                                        const DeviceProfile* profile,
                                                        const EvaluatorOptions& options) {
  return std::make_unique<ClblastEvaluator>(std::move(spec), device, profile, options);
}

#endif  // GEMMTUNE_HAVE_CLBLAST

}  // namespace gemmtune
