// SPDX-License-Identifier: Apache-2.0
#include <type_traits>
#include <unordered_map>

#include "src/bench/suite_internal.hpp"
#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/eval/clblast_evaluator.hpp"

#if GEMMTUNE_HAVE_CLBLAST
#include <clblast.h>
#endif

namespace gemmtune::suite {

#if GEMMTUNE_HAVE_CLBLAST
namespace {

// The row-wise bias+ReLU that follows CLBlast's Gemm in the epilogue rows: C is row-major M x N,
// bias[j] is added to column j. Dimension 0 runs along the contiguous columns.
constexpr const char* kBiasReluSource = R"CL(
__kernel void bias_relu(const int m, const int n, __global float* c,
                        const __global float* bias) {
  const int j = get_global_id(0);
  const int i = get_global_id(1);
  if (i < m && j < n) {
    const size_t idx = (size_t)i * n + j;
    c[idx] = fmax(c[idx] + bias[j], 0.0f);
  }
}
)CL";

// CLBlast's stock routine on the same buffers, row-major NN, alpha 1, beta 0: Gemm for one GEMM
// (followed by the bias+ReLU kernel in the epilogue rows), GemmStridedBatched for a strided batch
// and GemmBatched, with the same per-entry offsets, for an offsets batch. Gemm's temporary
// buffer is allocated once, as its API allows, so that no call pays for an allocation; the
// batched routines take none and allocate what they need inside every call.
class ClblastCall : public SideCall {
 public:
  ClblastCall(ClEnv& env, CaseData& d, bool epilogue, const ClblastParameters* parameters,
              bool tuned)
      : env_(env), d_(d), epilogue_(epilogue) {
    const Problem& p = d.problem;
    if (p.precision == Precision::kFP16Acc32) {
      throw NotAvailable("CLBlast has no FP16-storage/FP32-accumulate GEMM");
    }
    if (parameters) {
      if (parameters->precision != p.precision) {
        if (tuned) {
          throw NotAvailable("the tuned parameters are for FP" + to_string(parameters->precision));
        }
      } else {
        parameters_ = parameters;
        install_ = tuned ? &parameters->tuned : &parameters->stock;
      }
    }
    if (p.batch > 1) {
      for (size_t e = 0; e < d.pc.positions.size(); ++e) {
        a_offsets_.push_back(static_cast<size_t>(d.pa.positions[e]));
        b_offsets_.push_back(static_cast<size_t>(d.pb.positions[e]));
        c_offsets_.push_back(static_cast<size_t>(d.pc.positions[e]));
      }
      return;
    }
    size_t temp_bytes = 0;
    check(typed([&](auto zero) { return temp_size(zero, temp_bytes); }), "GemmTempBufferSize");
    if (temp_bytes > 0) temp_ = cl::Buffer(env.context(), CL_MEM_READ_WRITE, temp_bytes);
    if (epilogue) {
      bias_relu_ = cl::Kernel(
          env.builder().source_program(kBiasReluSource, "", "the bias+ReLU kernel"), "bias_relu");
      bias_relu_.setArg(0, static_cast<cl_int>(p.shape.m));
      bias_relu_.setArg(1, static_cast<cl_int>(p.shape.n));
      bias_relu_.setArg(2, d.c_buf);
      bias_relu_.setArg(3, d.bias_buf);
    }
  }

  void enqueue(cl::Event* last) override {
    const Problem& p = d_.problem;
    cl_event event = nullptr;
    cl_event* want = last && !epilogue_ ? &event : nullptr;
    check(typed([&](auto zero) { return call(zero, want); }), routine());
    if (want) *last = cl::Event(event);  // CLBlast hands over its reference
    if (epilogue_) {
      env_.queue().enqueueNDRangeKernel(
          bias_relu_, cl::NullRange,
          cl::NDRange(static_cast<size_t>(p.shape.n), static_cast<size_t>(p.shape.m)),
          cl::NullRange, nullptr, last);
    }
  }

  void prepare() override {
    if (!install_) return;
    check(clblast::OverrideParameters(env_.device().device(), parameters_->kernel,
                                      clblast_precision(parameters_->precision), *install_),
          "OverrideParameters");
  }

 private:
  size_t m() const { return static_cast<size_t>(d_.problem.shape.m); }
  size_t n() const { return static_cast<size_t>(d_.problem.shape.n); }
  size_t k() const { return static_cast<size_t>(d_.problem.shape.k); }

  std::string routine() const {
    const Problem& p = d_.problem;
    const std::string type = p.precision == Precision::kFP64   ? "double"
                             : p.precision == Precision::kFP16 ? "half"
                                                               : "float";
    const std::string name = p.batch == 1                              ? "Gemm"
                             : p.batch_layout == BatchLayout::kOffsets ? "GemmBatched"
                                                                       : "GemmStridedBatched";
    return name + "<" + type + ">";
  }

  // Calls `f` with a zero of the CLBlast element type of the row's precision.
  template <typename F>
  clblast::StatusCode typed(F f) {
    switch (d_.problem.precision) {
      case Precision::kFP64:
        return f(0.0);
      case Precision::kFP16:
        return f(cl_half{0});
      default:
        return f(0.0f);
    }
  }

  // alpha and beta of the element type: 1 and 0 (half as its bits).
  template <typename T>
  static T scalar(double v) {
    if constexpr (std::is_same_v<T, cl_half>) {
      return float_to_half(static_cast<float>(v));
    } else {
      return static_cast<T>(v);
    }
  }

  template <typename T>
  clblast::StatusCode temp_size(T, size_t& bytes) {
    cl_command_queue queue = env_.queue()();
    return clblast::GemmTempBufferSize<T>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                          clblast::Transpose::kNo, m(), n(), k(), 0, k(), 0, n(), 0,
                                          n(), &queue, bytes);
  }

  template <typename T>
  clblast::StatusCode call(T, cl_event* event) {
    const Problem& p = d_.problem;
    const T alpha = scalar<T>(p.alpha), beta = scalar<T>(p.beta);
    cl_command_queue queue = env_.queue()();
    const auto layout = clblast::Layout::kRowMajor;
    const auto no = clblast::Transpose::kNo;
    if (p.batch == 1) {
      return clblast::Gemm<T>(layout, no, no, m(), n(), k(), alpha, d_.a_buf(), 0, k(), d_.b_buf(),
                              0, n(), beta, d_.c_buf(), 0, n(), &queue, event,
                              temp_() ? temp_() : nullptr);
    }
    const auto batch = static_cast<size_t>(p.batch);
    if (p.batch_layout == BatchLayout::kStrided) {
      return clblast::GemmStridedBatched<T>(
          layout, no, no, m(), n(), k(), alpha, d_.a_buf(), 0, k(),
          static_cast<size_t>(d_.pa.stride), d_.b_buf(), 0, n(), static_cast<size_t>(d_.pb.stride),
          beta, d_.c_buf(), 0, n(), static_cast<size_t>(d_.pc.stride), batch, &queue, event);
    }
    const std::vector<T> alphas(batch, alpha), betas(batch, beta);
    return clblast::GemmBatched<T>(layout, no, no, m(), n(), k(), alphas.data(), d_.a_buf(),
                                   a_offsets_.data(), k(), d_.b_buf(), b_offsets_.data(), n(),
                                   betas.data(), d_.c_buf(), c_offsets_.data(), n(), batch, &queue,
                                   event);
  }

  // CLBlast's refusal of a precision the device lacks makes the column n/a; any other status
  // is a failure of the row.
  void check(clblast::StatusCode status, const std::string& what) const {
    if (status == clblast::StatusCode::kSuccess) return;
    const std::string text =
        "CLBlast " + what + " returned " + clblast_status_name(static_cast<int>(status));
    if (status == clblast::StatusCode::kNoHalfPrecision) {
      throw NotAvailable(text + ": the device lacks cl_khr_fp16");
    }
    if (status == clblast::StatusCode::kNoDoublePrecision) {
      throw NotAvailable(text + ": the device lacks cl_khr_fp64");
    }
    throw Error(ErrorCode::kDevice, text);
  }

  ClEnv& env_;
  CaseData& d_;
  bool epilogue_;
  cl::Buffer temp_;
  cl::Kernel bias_relu_;
  std::vector<size_t> a_offsets_, b_offsets_, c_offsets_;
  const ClblastParameters* parameters_ = nullptr;
  const std::unordered_map<std::string, size_t>* install_ = nullptr;  // set before each call
};

}  // namespace

std::unique_ptr<SideCall> clblast_call(ClEnv& env, CaseData& d, bool epilogue,
                                       const ClblastParameters* parameters, bool tuned) {
  return std::make_unique<ClblastCall>(env, d, epilogue, parameters, tuned);
}

ClblastParameters load_clblast_parameters(const cl::Device& device, const std::string& path) {
  const nlohmann::json j = read_json_file(path);
  if (!j.is_object() || !j.contains("best_kernel") || !j["best_kernel"].is_string() ||
      !j.contains("precision") || !j["precision"].is_string() || !j.contains("results") ||
      !j["results"].is_array() || j["results"].empty() || !j["results"][0].contains("parameters") ||
      !j["results"][0]["parameters"].is_object()) {
    throw invalid_file(path, "not a clblast-json export (best_kernel, precision, results)");
  }
  ClblastParameters out;
  out.kernel = j["best_kernel"].get<std::string>();
  const std::string bits = j["precision"].get<std::string>();
  out.precision = bits == "32"   ? Precision::kFP32
                  : bits == "64" ? Precision::kFP64
                  : bits == "16" ? Precision::kFP16
                                 : throw invalid_file(path, "precision '" + bits + "'");
  std::string listed;
  for (const auto& [name, value] : j["results"][0]["parameters"].items()) {
    if (name == "PRECISION") continue;
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      throw invalid_file(path, "parameter '" + name + "' is not a non-negative integer");
    }
    out.tuned[name] = value.get<size_t>();
    listed += " " + name + "=" + std::to_string(value.get<int64_t>());
  }
  const auto precision = clblast_precision(out.precision);
  // CLBlast's own set first: after an override, it would return the override.
  auto status = clblast::RetrieveParameters(device(), out.kernel, precision, out.stock);
  if (status != clblast::StatusCode::kSuccess) {
    throw invalid_file(path, "clblast::RetrieveParameters(" + out.kernel +
                                 ") refused it: " + clblast_status_name(static_cast<int>(status)));
  }
  status = clblast::OverrideParameters(device(), out.kernel, precision, out.tuned);
  if (status == clblast::StatusCode::kSuccess) {
    status = clblast::OverrideParameters(device(), out.kernel, precision, out.stock);
  }
  if (status != clblast::StatusCode::kSuccess) {
    throw invalid_file(path, "clblast::OverrideParameters(" + out.kernel +
                                 ") refused it: " + clblast_status_name(static_cast<int>(status)));
  }
  out.description = out.kernel + ", FP" + bits + ":" + listed;
  return out;
}

#else

std::unique_ptr<SideCall> clblast_call(ClEnv&, CaseData&, bool, const ClblastParameters*, bool) {
  throw NotAvailable("CLBlast is not linked into this build");
}

ClblastParameters load_clblast_parameters(const cl::Device&, const std::string&) {
  throw Error(ErrorCode::kUnsupported, "--clblast-params: CLBlast is not linked into this build");
}

#endif

}  // namespace gemmtune::suite
