#include "src/bench/bench_suite.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <type_traits>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <Eigen/Dense>

#if GEMMTUNE_HAVE_CLBLAST
#include <clblast.h>
#endif

#include "src/device/binary_cache.hpp"
#include "src/eval/clblast_evaluator.hpp"
#include "src/device/device_profile.hpp"
#include "src/core/error.hpp"
#include "src/kernel/gemm_view.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/device/opencl.hpp"
#include "src/verify/reference.hpp"
#include "src/core/version.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

std::vector<Shape> default_suite_shapes() {
  return {{256, 256, 256},    {1000, 1000, 1000}, {1024, 1024, 1024}, {2048, 2048, 2048},
          {4096, 4096, 4096}, {4097, 4097, 4097}, {8192, 8192, 8192}, {128, 4096, 1024},
          {64, 4096, 4096},   {8192, 64, 8192}};
}

std::vector<SuiteCase> batched_suite_cases() {
  return {{{32, 32, 32}, 1024}, {{256, 256, 256}, 64}};
}

std::vector<SuiteCase> named_suite(const std::string& name) {
  if (name == "standard") {
    std::vector<SuiteCase> cases;
    for (const auto& s : default_suite_shapes()) cases.push_back({s, 1});
    return cases;
  }
  if (name == "batched") return batched_suite_cases();
  throw invalid_argument("unknown suite '" + name + "' (expected standard or batched)");
}

std::vector<std::string> default_suite_kernels() {
  return {"xgemm", "xgemm_direct", "xgemm_fast"};
}

bool clblast_linked() {
#if GEMMTUNE_HAVE_CLBLAST
  return true;
#else
  return false;
#endif
}

Problem SuiteRow::problem() const {
  Problem p;
  p.shape = shape;
  p.precision = precision;
  p.batch = batch;
  p.batch_layout = batch > 1 ? batch_layout : BatchLayout::kStrided;
  return p;
}

std::string SuiteRow::label() const {
  std::string s = shape.to_string() + " fp" + to_string(precision);
  if (batch > 1) s += " b" + std::to_string(batch) + " " + to_string(batch_layout);
  return epilogue ? s + " bias+ReLU" : s;
}

namespace {

// The epilogue of the suite's epilogue rows, in Problem::epilogue's form.
constexpr const char* kSuiteEpilogue = "bias,relu";

EntryKey suite_key(const std::string& kernel, const Problem& problem) {
  Problem p = problem;
  p.kernel = kernel;
  return EntryKey::of(p);
}

Candidate candidate_of(const DatabaseEntry& e, const std::string& database,
                       const std::string& origin, double distance) {
  Candidate c;
  c.kernel = e.key.kernel;
  c.parameters = e.parameters;
  c.origin = origin;
  c.tuned_shape = e.key.shape;
  c.database = database;
  c.recorded_gflops = e.gflops;
  c.distance = distance;
  return c;
}

}  // namespace

std::vector<Candidate> suite_candidates(const std::vector<NamedDatabase>& databases,
                                        const std::vector<std::string>& kernels,
                                        const Problem& problem) {
  // The exact shape: one candidate, the fastest recorded entry (the first on a tie).
  const DatabaseEntry* best = nullptr;
  std::string best_db;
  for (const auto& kernel : kernels) {
    for (const auto& d : databases) {
      const DatabaseEntry* e = d.db.find(suite_key(kernel, problem));
      if (!e || e->status != Status::kOk) continue;
      if (!best || e->faster_than(*best)) {
        best = e;
        best_db = d.name;
      }
    }
  }
  if (best) return {candidate_of(*best, best_db, "exact", 0.0)};

  // No exact entry: each kernel's nearest tuned shape across the databases.
  std::vector<Candidate> out;
  for (const auto& kernel : kernels) {
    std::optional<Candidate> nearest;
    for (const auto& d : databases) {
      const Database::Match m = d.db.nearest(suite_key(kernel, problem));
      if (!m.entry) continue;
      if (!nearest || m.distance < nearest->distance ||
          (m.distance == nearest->distance && m.entry->gflops > nearest->recorded_gflops)) {
        nearest = candidate_of(*m.entry, d.name, "nearest", m.distance);
      }
    }
    if (nearest) out.push_back(*nearest);
  }
  return out;
}

std::vector<Candidate> suite_candidates(const std::vector<NamedDatabase>& databases,
                                        const std::vector<std::string>& kernels,
                                        const Shape& shape) {
  Problem p;
  p.shape = shape;
  return suite_candidates(databases, kernels, p);
}

bool SuiteReport::all_ok() const {
  for (const auto& r : rows) {
    if (r.gemmtune.available && !r.gemmtune.ok()) return false;
    if (r.clblast.available && !r.clblast.ok()) return false;
  }
  return true;
}

// ---- the OpenCL side ----

namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

size_t round_up(size_t x, size_t m) {
  return (x + m - 1) / m * m;
}

cl::NDRange to_range(const std::vector<size_t>& v) {
  if (v.size() == 1) return cl::NDRange(v[0]);
  if (v.size() == 2) return cl::NDRange(v[0], v[1]);
  return cl::NDRange(v[0], v[1], v[2]);
}

TimingStats summarize(const std::vector<double>& totals, const std::vector<double>& mains) {
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
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

// Every GEMM of the call counts: a batched row's rate is 2MNK x batch over the call's time.
double gflops_of(const Problem& p, double ms) {
  return ms > 0 ? p.flops() / (ms * 1e6) : 0.0;
}

// Why the device cannot compute a precision at all, so that the gemmtune side is n/a rather than
// a build log: half arithmetic needs cl_khr_fp16 and double needs cl_khr_fp64.
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

// splitmix64: a fixed sequence on every platform, for the bias vector and the sampled rows.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

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

// The device, one context and one profiling queue shared by gemmtune's calls and CLBlast's.
class ClEnv {
 public:
  ClEnv(const Device& device, const DeviceProfile* profile, const BenchSuiteOptions& options)
      : device_(device), templates_dir_(options.templates_dir), cache_(options.cache_dir) {
    limits_ = device_limits(device.info, profile);
    extra_options_ = profile ? profile->build_options : "";
    context_ = cl::Context(std::vector<cl::Device>{device.device});
    queue_ = cl::CommandQueue(context_, device.device, CL_QUEUE_PROFILING_ENABLE);
  }

  cl::Context& context() { return context_; }
  cl::CommandQueue& queue() { return queue_; }
  const DeviceLimits& limits() const { return limits_; }
  const std::string& extra_options() const { return extra_options_; }
  const Device& device() const { return device_; }

  const KernelSpec& spec(const std::string& kernel) {
    if (auto it = specs_.find(kernel); it != specs_.end()) return it->second;
    if (kernel.empty() || kernel.find_first_of("/\\") != std::string::npos) {
      throw invalid_argument("kernel name '" + kernel + "' is not a template name");
    }
    const fs::path path = fs::path(templates_dir_) / (kernel + ".json");
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
      throw invalid_argument("unknown kernel '" + kernel + "': no " + path.string());
    }
    KernelSpec spec = KernelSpec::load(path.string());
    sources_[kernel] = load_kernel_source(templates_dir_, spec.source_file());
    return specs_.emplace(kernel, std::move(spec)).first->second;
  }

  const std::string& source(const std::string& kernel) {
    spec(kernel);
    return sources_.at(kernel);
  }

  // Builds (or loads from the binary cache) a program; a failed build throws Error with the log.
  cl::Program build(const std::string& source, const std::string& options,
                    const std::string& label) {
    const std::vector<cl::Device> devices{device_.device};
    const std::string identity = BinaryCache::identity(device_.info, options, source);
    const std::string key = BinaryCache::key(identity);
    if (auto entry = cache_.load(key, identity)) {
      try {
        cl::Program program(context_, devices, cl::Program::Binaries{entry->binary});
        program.build(devices, options.c_str());
        return program;
      } catch (const cl::Error&) {
        cache_.remove(key);  // the driver rejected it: compile from source below
      }
    }
    const auto t0 = Clock::now();
    cl::Program program(context_, source);
    try {
      program.build(devices, options.c_str());
    } catch (const cl::Error& e) {
      std::string log;
      try {
        log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device);
      } catch (const cl::Error&) {
      }
      throw Error(ErrorCode::kDevice, label + " does not build (" + cl_error_name(e.err()) +
                                          "): " + trim_build_log(log, 5, 400));
    }
    spdlog::debug("compiled {} in {:.0f} ms", label, ms_between(t0, Clock::now()));
    const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
    if (!binaries.empty() && !binaries.front().empty()) {
      cache_.store(key, identity,
                   BinaryCache::Entry{binaries.front(),
                                      program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_.device)});
    }
    return program;
  }

  // The padding helper of templates that declare "pad", in the element type of `precision`.
  cl::Program& pad_program(Precision precision) {
    const int define = precision_define(precision);
    if (auto it = pad_programs_.find(define); it != pad_programs_.end()) return it->second;
    cl::Program program = build(load_kernel_source(templates_dir_, "pad.cl"),
                                "-DPRECISION=" + std::to_string(define) +
                                    (extra_options_.empty() ? "" : " " + extra_options_),
                                "the pad helper");
    return pad_programs_.emplace(define, program).first->second;
  }

 private:
  const Device& device_;
  std::string templates_dir_;
  BinaryCache cache_;
  DeviceLimits limits_;
  std::string extra_options_;
  cl::Context context_;
  cl::CommandQueue queue_;
  std::map<std::string, KernelSpec> specs_;
  std::map<std::string, std::string> sources_;
  std::map<int, cl::Program> pad_programs_;
};

// The suite's kernels whose templates declare the epilogue rows' epilogue (their "epilogue" field).
std::vector<std::string> epilogue_kernels(ClEnv& env) {
  const Epilogue wanted = parse_epilogue(kSuiteEpilogue);
  std::vector<std::string> out;
  for (const auto& k : default_suite_kernels()) {
    if (supports_epilogue(env.spec(k), wanted)) out.push_back(k);
  }
  return out;
}

// Matrices of a batch lie this many elements apart, rounded up from their size: an awkward shape
// then leaves gaps between them, NaN in A and B (a kernel that reads outside its matrix produces
// NaN) and the fill of C in C (a kernel that writes outside its matrix is caught).
constexpr int64_t kBatchStrideMultiple = 16;

// Where the batch entries of one operand lie in its buffer, in elements.
struct Placement {
  int64_t size = 0;          // elements of one matrix
  int64_t stride = 0;        // distance of consecutive slots (the strided layout's stride)
  std::vector<int64_t> pos;  // where entry e starts

  Placement() = default;
  Placement(const Problem& p, int64_t matrix_elements) : size(matrix_elements) {
    stride = p.batch == 1
                 ? size
                 : static_cast<int64_t>(round_up(static_cast<size_t>(size),
                                                 static_cast<size_t>(kBatchStrideMultiple)));
    for (int64_t e = 0; e < p.batch; ++e) {
      // The offsets layout stores the entries in reverse order, so that a call which ignored
      // the offsets (or used them for the wrong entry) fails verification.
      const int64_t slot = p.batch_layout == BatchLayout::kOffsets ? p.batch - 1 - e : e;
      pos.push_back(slot * stride);
    }
  }
  int64_t total() const { return stride * static_cast<int64_t>(pos.size()); }

  // The buffer image of `dense` (entries one after the other), gaps NaN, in `precision`.
  std::vector<unsigned char> image(const std::vector<double>& dense, Precision precision) const {
    if (pos.size() == 1) return pack_elements(dense, precision);
    std::vector<double> out(static_cast<size_t>(total()), std::numeric_limits<double>::quiet_NaN());
    for (size_t e = 0; e < pos.size(); ++e) {
      std::copy(dense.begin() + static_cast<int64_t>(e) * size,
                dense.begin() + static_cast<int64_t>(e + 1) * size, out.begin() + pos[e]);
    }
    return pack_elements(out, precision);
  }
};

// One stored element of a device buffer's bytes, as a double.
double element_at(const std::vector<unsigned char>& bytes, int64_t index, Precision precision) {
  const unsigned char* at = bytes.data() + index * element_bytes(precision);
  switch (precision) {
    case Precision::kFP64: {
      double v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
    case Precision::kFP16:
    case Precision::kFP16Acc32: {
      uint16_t h;
      std::memcpy(&h, at, sizeof h);
      return half_to_float(h);
    }
    default: {
      float v;
      std::memcpy(&v, at, sizeof v);
      return v;
    }
  }
}

// The Eigen reference (double precision) for all rows, or for a fixed-seed sample of rows (all
// columns, first and last row always included, the same rows in every batch entry) when the
// problem is too large to check whole on the host in reasonable time. The tolerance rule is that
// of src/verify/reference.hpp for the row's precision, with |bias| added to the scale in the epilogue
// rows.
class SampledReference {
 public:
  SampledReference(const Problem& problem, const std::vector<double>& a_host,
                   const std::vector<double>& b_host, int64_t full_check_limit, int sample_rows,
                   uint64_t seed)
      : problem_(problem) {
    const int64_t m = problem.shape.m, n = problem.shape.n, k = problem.shape.k;
    const bool full = m * n * k * problem.batch <= full_check_limit || m <= sample_rows;
    if (full) {
      for (int64_t i = 0; i < m; ++i) rows_.push_back(i);
    } else {
      std::set<int64_t> picked{0, m - 1};
      SplitMix rng(seed ^ 0x5a3b1e5ull);
      while (static_cast<int>(picked.size()) < sample_rows) {
        picked.insert(static_cast<int64_t>(rng.next() % static_cast<uint64_t>(m)));
      }
      rows_.assign(picked.begin(), picked.end());
    }
    using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    for (int64_t e = 0; e < problem.batch; ++e) {
      const Eigen::Map<const RowMatrix> a(a_host.data() + e * m * k, m, k);
      const Eigen::Map<const RowMatrix> b(b_host.data() + e * k * n, k, n);
      RowMatrix a_rows(static_cast<Eigen::Index>(rows_.size()), k);
      for (size_t r = 0; r < rows_.size(); ++r)
        a_rows.row(static_cast<Eigen::Index>(r)) = a.row(rows_[r]);
      product_.emplace_back(a_rows * b);
      scale_.emplace_back(a_rows.cwiseAbs() * b.cwiseAbs());
    }
  }

  std::string coverage() const {
    const Shape& s = problem_.shape;
    const std::string of_batch =
        problem_.batch > 1 ? fmt::format(" of each of {} GEMMs", problem_.batch) : "";
    if (static_cast<int64_t>(rows_.size()) == s.m) {
      return fmt::format("all {} outputs", s.m * s.n * problem_.batch) +
             (problem_.batch > 1 ? fmt::format(" ({} GEMMs)", problem_.batch) : "");
    }
    return fmt::format("{} of {} rows (all {} columns)", rows_.size(), s.m, s.n) + of_batch;
  }

  // Checks the bytes of C as the device holds them (entries where `c` places them); `bias` set
  // for the bias+ReLU epilogue.
  Verification check(const std::vector<unsigned char>& bytes, const Placement& c,
                     const std::vector<double>* bias) const {
    const int64_t n = problem_.shape.n;
    Verification v;
    v.tolerance = relative_tolerance(problem_.precision, problem_.shape.k);
    int64_t nans = 0, checked = 0;
    std::string worst_at, nan_at;
    double worst_got = 0, worst_expected = 0;
    bool have_worst = false;
    auto where = [&](int64_t e, int64_t i, int64_t j) {
      return problem_.batch > 1 ? fmt::format("C[{}]({},{})", e, i, j)
                                : fmt::format("C({},{})", i, j);
    };
    for (int64_t e = 0; e < problem_.batch; ++e) {
      const auto& product = product_[static_cast<size_t>(e)];
      const auto& scale_of = scale_[static_cast<size_t>(e)];
      for (size_t r = 0; r < rows_.size(); ++r) {
        const int64_t i = rows_[r];
        for (int64_t j = 0; j < n; ++j) {
          const auto ri = static_cast<Eigen::Index>(r);
          double expected = product(ri, j);
          double scale = scale_of(ri, j);
          if (bias) {
            expected = activate(expected + (*bias)[static_cast<size_t>(j)], Activation::kRelu);
            scale += std::abs((*bias)[static_cast<size_t>(j)]);
          }
          const double got =
              element_at(bytes, c.pos[static_cast<size_t>(e)] + i * n + j, problem_.precision);
          ++checked;
          if (!std::isfinite(got)) {
            if (nans++ == 0) nan_at = where(e, i, j);
            continue;
          }
          const double err = std::abs(got - expected);
          const double rel =
              scale > 0 ? err / scale : (err == 0 ? 0.0 : std::numeric_limits<double>::infinity());
          if (rel > v.tolerance) ++v.wrong;
          if (rel > v.max_error || !have_worst) {
            v.max_error = std::max(v.max_error, rel);
            have_worst = true;
            worst_at = where(e, i, j);
            worst_got = got;
            worst_expected = expected;
          }
        }
      }
    }
    if (nans > 0) {
      v.wrong += nans;
      v.max_error = std::numeric_limits<double>::infinity();
      v.message = fmt::format("{} of {} checked outputs are NaN or infinite, the first at {}", nans,
                              checked, nan_at);
      return v;
    }
    v.ok = v.wrong == 0;
    if (!v.ok) {
      v.message = fmt::format(
          "{} of {} checked outputs wrong: max error {:.3g} exceeds tolerance {:.3g}; {} = "
          "{:.9g}, expected {:.9g}",
          v.wrong, checked, v.max_error, v.tolerance, worst_at, worst_got, worst_expected);
    }
    return v;
  }

 private:
  Problem problem_;
  std::vector<int64_t> rows_;
  std::vector<Eigen::MatrixXd> product_, scale_;  // per batch entry, rows_.size() x N
};

// One row's inputs: host copies for the reference, device buffers shared by both sides.
struct CaseData {
  Problem problem;  // row-major, NN, alpha 1, beta 0, in the row's precision and batch
  std::vector<double> a, b, bias;
  Placement pa, pb, pc;
  std::vector<unsigned char> nan;  // one NaN element of the precision: the fill of C
  cl::Buffer a_buf, b_buf, c_buf, bias_buf;
  cl::Buffer offsets_buf;  // offsets layout: (A, B, C) per entry, in the kernel view's order

  CaseData(ClEnv& env, const Problem& p, const BenchSuiteOptions& options)
      : problem(p), options_(options) {
    const Shape& shape = p.shape;
    HostMatrices h = make_inputs(problem, options.seed);
    a = std::move(h.a);
    b = std::move(h.b);
    pa = Placement(problem, shape.m * shape.k);
    pb = Placement(problem, shape.k * shape.n);
    pc = Placement(problem, shape.m * shape.n);
    nan = pack_elements({std::numeric_limits<double>::quiet_NaN()}, problem.precision);
    // Bias in [-1.5K, -0.5K): with products near K, about half of the outputs are clipped by
    // the ReLU, so both branches of it are checked.
    SplitMix rng(options.seed ^ 0xb1a5b1a5ull);
    bias.resize(static_cast<size_t>(shape.n));
    for (auto& v : bias) {
      v = round_to_precision(-static_cast<double>(shape.k) * (0.5 + rng.unit()), problem.precision);
    }
    auto upload = [&](const std::vector<unsigned char>& bytes) {
      cl::Buffer buf(env.context(), CL_MEM_READ_ONLY, bytes.size());
      env.queue().enqueueWriteBuffer(buf, CL_TRUE, 0, bytes.size(), bytes.data());
      return buf;
    };
    a_buf = upload(pa.image(a, problem.precision));
    b_buf = upload(pb.image(b, problem.precision));
    bias_buf = upload(pack_elements(bias, problem.precision));
    c_buf = cl::Buffer(env.context(), CL_MEM_READ_WRITE, c_bytes());
    if (problem.batch > 1 && problem.batch_layout == BatchLayout::kOffsets) {
      const bool swap = kernel_view(problem).swap_ab;
      std::vector<cl_int> offsets;
      for (size_t e = 0; e < pc.pos.size(); ++e) {
        for (int64_t v : {swap ? pb.pos[e] : pa.pos[e], swap ? pa.pos[e] : pb.pos[e], pc.pos[e]}) {
          offsets.push_back(static_cast<cl_int>(v));
        }
      }
      offsets_buf = cl::Buffer(env.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                               offsets.size() * sizeof(cl_int), offsets.data());
    }
  }

  size_t c_bytes() const { return static_cast<size_t>(pc.total()) * nan.size(); }

  // Made when a side is first verified: a row whose sides are both n/a needs none.
  const SampledReference& reference() {
    if (!reference_) {
      const auto t0 = Clock::now();
      reference_ = std::make_unique<SampledReference>(problem, a, b, options_.full_check_limit,
                                                      options_.sample_rows, options_.seed);
      spdlog::debug("reference of {} ready in {:.0f} ms", problem.shape.to_string(),
                    ms_between(t0, Clock::now()));
    }
    return *reference_;
  }

 private:
  const BenchSuiteOptions& options_;
  std::unique_ptr<SampledReference> reference_;
};

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

// One launch of a call.
struct Step {
  cl::Kernel kernel;
  cl::NDRange global, local;
  bool main = false;
};

// gemmtune's call for one configuration, prepared once and enqueued many times: the kernel of
// the template, with the padding copies, the split-K reduction and the batch arguments its
// launch block declares. This mirrors what the OpenCL evaluator does inside evaluate(), which
// exposes no prepared call.
class TunedCall {
 public:
  TunedCall(ClEnv& env, const Candidate& candidate, CaseData& d, bool epilogue) : env_(env) {
    const KernelSpec& spec = env.spec(candidate.kernel);
    Problem problem = d.problem;
    problem.kernel = candidate.kernel;
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    const Configuration config = spec.complete(candidate.parameters);
    if (auto why = spec.check(config, DeviceLimits{}, ctx)) {
      throw invalid_argument("the configuration breaks a constraint of " + spec.name() + ": " +
                             *why);
    }
    if (auto why = spec.check(config, env.limits(), ctx)) {
      throw Error(ErrorCode::kUnsupported, "the configuration exceeds a device limit: " + *why);
    }
    if (problem.batch > 1 && !supports_batch(spec, problem.batch_layout)) {
      throw Error(ErrorCode::kUnsupported, candidate.kernel + " computes no batch in the " +
                                               to_string(problem.batch_layout) + " layout");
    }
    const KernelView view = kernel_view(problem);
    const LaunchGeometry g = launch_geometry(spec, config, ctx, view);
    const auto& item_sizes = env.device().info.max_work_item_sizes;
    for (size_t dim = 0; dim < g.local.size() && dim < item_sizes.size(); ++dim) {
      if (g.local[dim] > item_sizes[dim]) {
        throw Error(ErrorCode::kUnsupported,
                    fmt::format("local size {} in dimension {} exceeds the device's {}",
                                g.local[dim], dim, item_sizes[dim]));
      }
    }
    // Sizes, offsets and strides reach the kernel as ints, and a batch lies in one buffer.
    if (std::max({g.m * g.k, g.k * g.n, g.m * g.n, d.pa.total(), d.pb.total(), d.pc.total()}) >
        std::numeric_limits<int32_t>::max()) {
      throw Error(ErrorCode::kUnsupported,
                  "buffers of more than 2^31 elements exceed the kernels' int indices");
    }
    std::string options = build_options(config, problem.precision, view.trans_a, view.trans_b,
                                        env.extra_options(), batch_layout_define(problem));
    if (const std::string cap = spec.register_cap_option(config, env.limits()); !cap.empty()) {
      options += " " + cap;
    }
    if (epilogue) {
      Problem fused = problem;
      fused.epilogue = kSuiteEpilogue;
      options += " " + epilogue_defines(fused);
    }
    const cl::Program program = env.build(env.source(candidate.kernel), options,
                                          candidate.kernel + " " + to_string(config));
    cl::Kernel kernel(program, spec.entry_point().c_str());
    // The contract's 14 arguments, or 16 with bias and workspace, then the batch's: three
    // strides, or the offsets buffer (kernel_templates/common.cl).
    const cl_uint batch_args = problem.batch == 1                              ? 0
                               : problem.batch_layout == BatchLayout::kOffsets ? 1
                                                                               : 3;
    const cl_uint nargs = kernel.getInfo<CL_KERNEL_NUM_ARGS>();
    const cl_uint contract_args = nargs - std::min(nargs, batch_args);
    if (contract_args != 14 && contract_args != 16) {
      throw Error(ErrorCode::kInternal,
                  fmt::format("kernel {} takes {} arguments, not 14 or 16 plus {} for the batch",
                              spec.entry_point(), nargs, batch_args));
    }
    if (epilogue && contract_args != 16) {
      throw Error(ErrorCode::kUnsupported, candidate.kernel + " has no fused epilogue");
    }
    size_t wg = 1;
    for (auto l : g.local) wg *= l;
    const size_t kernel_max =
        kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(env.device().device);
    if (wg > kernel_max) {
      throw Error(ErrorCode::kUnsupported,
                  fmt::format("the compiled kernel allows {} work-items per group, the "
                              "configuration needs {}",
                              kernel_max, wg));
    }

    const auto eb = static_cast<size_t>(element_bytes(problem.precision));
    auto scratch = [&](int64_t elements, size_t bytes_each) {
      return cl::Buffer(env.context(), CL_MEM_READ_WRITE,
                        std::max<size_t>(static_cast<size_t>(elements), 1) * bytes_each);
    };
    const cl::Buffer& a_buf = view.swap_ab ? d.b_buf : d.a_buf;
    const cl::Buffer& b_buf = view.swap_ab ? d.a_buf : d.b_buf;
    const int64_t pa_rows = view.trans_a ? g.k : g.m, pa_cols = view.trans_a ? g.m : g.k;
    const int64_t pb_rows = view.trans_b ? g.n : g.k, pb_cols = view.trans_b ? g.k : g.n;
    const bool pad_a = pa_rows != view.a_rows() || pa_cols != view.a_cols();
    const bool pad_b = pb_rows != view.b_rows() || pb_cols != view.b_cols();
    const bool pad_c = g.m != view.m || g.n != view.n;
    if (pad_a) {
      scratch_a_ = scratch(pa_rows * pa_cols, eb);
      add_pad(problem.precision, view.a_rows(), view.a_cols(), a_buf, pa_rows, pa_cols, scratch_a_);
    }
    if (pad_b) {
      scratch_b_ = scratch(pb_rows * pb_cols, eb);
      add_pad(problem.precision, view.b_rows(), view.b_cols(), b_buf, pb_rows, pb_cols, scratch_b_);
    }
    // beta is 0: a padded C is written, never read, so it needs no copy in.
    if (pad_c) scratch_c_ = scratch(g.m * g.n, eb);
    const cl::Buffer& c_main = pad_c ? scratch_c_ : d.c_buf;
    // The workspace holds partial sums in the arithmetic's type (float for 16acc32).
    workspace_ = scratch(g.split_k ? g.split_k->workspace_elements * problem.batch : 1,
                         static_cast<size_t>(compute_bytes(problem.precision)));

    auto set_scalar = [&](cl::Kernel& k, cl_uint index, double v) {
      if (problem.precision == Precision::kFP64) {
        k.setArg(index, v);
      } else {
        k.setArg(index, static_cast<cl_float>(v));  // real_arg is float for half too
      }
    };
    // The batch's arguments follow the others, in the kernel view's A, B, C order.
    auto set_batch_args = [&](cl::Kernel& k, cl_uint first) {
      if (batch_args == 3) {
        k.setArg(first, static_cast<cl_int>(view.swap_ab ? d.pb.stride : d.pa.stride));
        k.setArg(first + 1, static_cast<cl_int>(view.swap_ab ? d.pa.stride : d.pb.stride));
        k.setArg(first + 2, static_cast<cl_int>(d.pc.stride));
      } else if (batch_args == 1) {
        k.setArg(first, d.offsets_buf);
      }
    };
    kernel.setArg(0, static_cast<cl_int>(g.m));
    kernel.setArg(1, static_cast<cl_int>(g.n));
    kernel.setArg(2, static_cast<cl_int>(g.k));
    set_scalar(kernel, 3, problem.alpha);
    set_scalar(kernel, 4, problem.beta);
    kernel.setArg(5, pad_a ? scratch_a_ : a_buf);
    kernel.setArg(6, cl_int{0});
    kernel.setArg(7, static_cast<cl_int>(pa_rows));
    kernel.setArg(8, pad_b ? scratch_b_ : b_buf);
    kernel.setArg(9, cl_int{0});
    kernel.setArg(10, static_cast<cl_int>(pb_rows));
    kernel.setArg(11, c_main);
    kernel.setArg(12, cl_int{0});
    kernel.setArg(13, static_cast<cl_int>(g.m));
    if (contract_args == 16) {
      kernel.setArg(14, d.bias_buf);
      kernel.setArg(15, workspace_);
    }
    set_batch_args(kernel, contract_args);
    steps_.push_back(Step{kernel, to_range(g.global), to_range(g.local), true});
    if (g.split_k && g.split_k->factor > 1) {
      Step reduce;
      reduce.kernel = cl::Kernel(program, g.split_k->reduce_entry.c_str());
      reduce.kernel.setArg(0, static_cast<cl_int>(g.m));
      reduce.kernel.setArg(1, static_cast<cl_int>(g.n));
      set_scalar(reduce.kernel, 2, problem.alpha);
      set_scalar(reduce.kernel, 3, problem.beta);
      reduce.kernel.setArg(4, c_main);
      reduce.kernel.setArg(5, cl_int{0});
      reduce.kernel.setArg(6, static_cast<cl_int>(g.m));
      reduce.kernel.setArg(7, d.bias_buf);
      reduce.kernel.setArg(8, workspace_);
      set_batch_args(reduce.kernel, 9);
      reduce.global = to_range(g.split_k->reduce_global);
      reduce.local = to_range(g.split_k->reduce_local);
      steps_.push_back(reduce);
    }
    if (pad_c) add_pad(problem.precision, g.m, g.n, scratch_c_, view.m, view.n, d.c_buf);
  }

  // Enqueues every kernel of the call; the main kernel's event goes to `main_event`.
  void enqueue(cl::Event* main_event) {
    for (auto& s : steps_) {
      env_.queue().enqueueNDRangeKernel(s.kernel, cl::NullRange, s.global, s.local, nullptr,
                                        s.main ? main_event : nullptr);
    }
  }

 private:
  void add_pad(Precision precision, int64_t src_rows, int64_t src_cols, const cl::Buffer& src,
               int64_t dst_rows, int64_t dst_cols, const cl::Buffer& dst) {
    constexpr size_t kLocal = 16;  // pad.cl requires 16 x 16 work-groups
    Step step;
    step.kernel = cl::Kernel(env_.pad_program(precision), "pad_copy");
    int i = 0;
    for (auto v : {src_rows, src_cols, src_rows, int64_t{0}}) {
      step.kernel.setArg(i++, static_cast<cl_int>(v));
    }
    step.kernel.setArg(i++, src);
    for (auto v : {dst_rows, dst_cols, dst_rows, int64_t{0}}) {
      step.kernel.setArg(i++, static_cast<cl_int>(v));
    }
    step.kernel.setArg(i++, dst);
    step.global = cl::NDRange(round_up(static_cast<size_t>(dst_rows), kLocal),
                              round_up(static_cast<size_t>(dst_cols), kLocal));
    step.local = cl::NDRange(kLocal, kLocal);
    steps_.push_back(step);
  }

  ClEnv& env_;
  std::vector<Step> steps_;
  cl::Buffer scratch_a_, scratch_b_, scratch_c_, workspace_;
};

// A side that cannot run the row at all (CLBlast has no such routine, or refuses the precision
// on this device): its column says n/a with the reason, which is not a failure.
class NotAvailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

#if GEMMTUNE_HAVE_CLBLAST
// CLBlast's stock routine on the same buffers, row-major NN, alpha 1, beta 0: Gemm for one GEMM
// (followed by the bias+ReLU kernel in the epilogue rows), GemmStridedBatched for a strided batch
// and GemmBatched, with the same per-entry offsets, for an offsets batch. Gemm's temporary
// buffer is allocated once, as its API allows, so that no call pays for an allocation; the
// batched routines take none and allocate what they need inside every call.
class ClblastCall {
 public:
  ClblastCall(ClEnv& env, CaseData& d, bool epilogue) : env_(env), d_(d), epilogue_(epilogue) {
    const Problem& p = d.problem;
    if (p.precision == Precision::kFP16Acc32) {
      throw NotAvailable("CLBlast has no FP16-storage/FP32-accumulate GEMM");
    }
    if (p.batch > 1) {
      for (size_t e = 0; e < d.pc.pos.size(); ++e) {
        a_offsets_.push_back(static_cast<size_t>(d.pa.pos[e]));
        b_offsets_.push_back(static_cast<size_t>(d.pb.pos[e]));
        c_offsets_.push_back(static_cast<size_t>(d.pc.pos[e]));
      }
      return;
    }
    size_t temp_bytes = 0;
    check(typed([&](auto zero) { return temp_size(zero, temp_bytes); }), "GemmTempBufferSize");
    if (temp_bytes > 0) temp_ = cl::Buffer(env.context(), CL_MEM_READ_WRITE, temp_bytes);
    if (epilogue) {
      bias_relu_ = cl::Kernel(env.build(kBiasReluSource, "", "the bias+ReLU kernel"), "bias_relu");
      bias_relu_.setArg(0, static_cast<cl_int>(p.shape.m));
      bias_relu_.setArg(1, static_cast<cl_int>(p.shape.n));
      bias_relu_.setArg(2, d.c_buf);
      bias_relu_.setArg(3, d.bias_buf);
    }
  }

  void enqueue() {
    const Problem& p = d_.problem;
    check(typed([&](auto zero) { return call(zero); }), routine());
    if (epilogue_) {
      env_.queue().enqueueNDRangeKernel(
          bias_relu_, cl::NullRange,
          cl::NDRange(static_cast<size_t>(p.shape.n), static_cast<size_t>(p.shape.m)),
          cl::NullRange);
    }
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
  clblast::StatusCode call(T) {
    const Problem& p = d_.problem;
    const T alpha = scalar<T>(p.alpha), beta = scalar<T>(p.beta);
    cl_command_queue queue = env_.queue()();
    const auto layout = clblast::Layout::kRowMajor;
    const auto no = clblast::Transpose::kNo;
    if (p.batch == 1) {
      return clblast::Gemm<T>(layout, no, no, m(), n(), k(), alpha, d_.a_buf(), 0, k(), d_.b_buf(),
                              0, n(), beta, d_.c_buf(), 0, n(), &queue, nullptr,
                              temp_() ? temp_() : nullptr);
    }
    const auto batch = static_cast<size_t>(p.batch);
    if (p.batch_layout == BatchLayout::kStrided) {
      return clblast::GemmStridedBatched<T>(
          layout, no, no, m(), n(), k(), alpha, d_.a_buf(), 0, k(),
          static_cast<size_t>(d_.pa.stride), d_.b_buf(), 0, n(), static_cast<size_t>(d_.pb.stride),
          beta, d_.c_buf(), 0, n(), static_cast<size_t>(d_.pc.stride), batch, &queue, nullptr);
    }
    const std::vector<T> alphas(batch, alpha), betas(batch, beta);
    return clblast::GemmBatched<T>(layout, no, no, m(), n(), k(), alphas.data(), d_.a_buf(),
                                   a_offsets_.data(), k(), d_.b_buf(), b_offsets_.data(), n(),
                                   betas.data(), d_.c_buf(), c_offsets_.data(), n(), batch, &queue,
                                   nullptr);
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
};
#endif

// A call of either side: enqueues its kernels, the main kernel's event into the argument when
// it has one (gemmtune), ignoring it otherwise (CLBlast).
using Call = std::function<void(cl::Event*)>;

// Runs a call once on C filled with NaN (beta is 0, so C must not be read) and checks it: the
// matrices against the reference, and the gaps between a batch's matrices for writes.
Verification verify_call(ClEnv& env, CaseData& d, const Call& call, bool epilogue) {
  fill_c_with_nan(env, d);
  env.queue().finish();
  call(nullptr);
  env.queue().finish();
  std::vector<unsigned char> c(d.c_bytes());
  env.queue().enqueueReadBuffer(d.c_buf, CL_TRUE, 0, c.size(), c.data());
  const size_t eb = d.nan.size();
  for (int64_t slot = 0; d.problem.batch > 1 && slot < d.problem.batch; ++slot) {
    for (int64_t i = slot * d.pc.stride + d.pc.size; i < (slot + 1) * d.pc.stride; ++i) {
      if (std::memcmp(c.data() + static_cast<size_t>(i) * eb, d.nan.data(), eb) != 0) {
        Verification v;
        v.wrong = 1;
        v.tolerance = relative_tolerance(d.problem.precision, d.problem.shape.k);
        v.message = fmt::format(
            "the call wrote into C outside the matrices of the batch (element {} of the "
            "buffer, between entries)",
            i);
        return v;
      }
    }
  }
  return d.reference().check(c, d.pc, epilogue ? &d.bias : nullptr);
}

// Whole-call wall time on the host, and the main kernel's time when the call gives an event.
std::pair<double, double> time_call(ClEnv& env, const Call& call, bool events) {
  cl::Event main;
  const auto t0 = Clock::now();
  call(events ? &main : nullptr);
  env.queue().finish();
  const double wall = ms_between(t0, Clock::now());
  double kernel = 0;
  if (events && main()) {
    kernel = static_cast<double>(main.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                 main.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
             1e-6;
  }
  return {wall, kernel};
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// A side's state while a row is measured.
struct Side {
  Call call;
  bool events = false;
  std::vector<double> wall, kernel;
};

class SuiteRunner {
 public:
  SuiteRunner(ClEnv& env, const std::vector<NamedDatabase>& databases,
              const BenchSuiteOptions& options)
      : env_(env), databases_(databases), options_(options) {}

  SuiteRow run_row(CaseData& d, bool epilogue) {
    SuiteRow row;
    row.shape = d.problem.shape;
    row.precision = d.problem.precision;
    row.batch = d.problem.batch;
    row.batch_layout = d.problem.batch_layout;
    row.epilogue = epilogue;

    std::optional<Side> g, b;
    std::unique_ptr<TunedCall> tuned;
    if (auto why = device_lacks(env_.device().info, row.precision)) {
      row.gemmtune.message = *why;  // n/a: not a failure of the configuration
    } else {
      row.gemmtune.available = true;
      tuned = choose(d, epilogue, row);
      if (tuned) {
        Side side;
        side.call = [t = tuned.get()](cl::Event* e) { t->enqueue(e); };
        side.events = true;
        if (verify_side(d, side.call, epilogue, row.gemmtune)) g = std::move(side);
      } else {
        row.gemmtune.status = "failed";
      }
    }

#if GEMMTUNE_HAVE_CLBLAST
    std::unique_ptr<ClblastCall> blas;
    if (options_.clblast) {
      row.clblast.available = true;
      // Its first call compiles, and CLBlast prints compiler messages on stdout.
      const StdoutToStderr quiet;
      try {
        blas = std::make_unique<ClblastCall>(env_, d, epilogue);
        Side side;
        side.call = [c = blas.get()](cl::Event*) { c->enqueue(); };
        if (verify_side(d, side.call, epilogue, row.clblast)) b = std::move(side);
      } catch (const std::exception& e) {
        fail(row.clblast, e);
      }
    }
#endif
    if (!options_.clblast || !clblast_linked()) {
      row.clblast.message =
          options_.clblast ? "CLBlast is not linked into this build" : "skipped on request";
    }

    // Interleaved: gemmtune, CLBlast, gemmtune, CLBlast ... first untimed, then timed.
    auto step = [&](std::optional<Side>& side, SideResult& result, bool timed) {
      if (!side) return;
      try {
        if (!timed) {
          side->call(nullptr);
          env_.queue().finish();
          return;
        }
        // A user's call asks for no profiling event, so the whole-call time is taken without
        // one; the kernel-only time comes from a second, separate call with an event.
        side->wall.push_back(time_call(env_, side->call, false).first);
        if (side->events) side->kernel.push_back(time_call(env_, side->call, true).second);
      } catch (const std::exception& e) {
        fail(result, e);
        side.reset();
      }
    };
    for (int i = 0; i < options_.warmup; ++i) {
      step(g, row.gemmtune, false);
      step(b, row.clblast, false);
    }
    for (int i = 0; i < options_.reps; ++i) {
      step(g, row.gemmtune, true);
      step(b, row.clblast, true);
    }
    auto finish = [&](std::optional<Side>& side, SideResult& result) {
      if (!side) return;
      result.wall = summarize(side->wall, side->kernel);
      if (!side->events) result.wall.kernel_median_ms = 0;
      result.gflops = gflops_of(d.problem, result.wall.median_ms);
      result.kernel_gflops = gflops_of(d.problem, result.wall.kernel_median_ms);
    };
    finish(g, row.gemmtune);
    finish(b, row.clblast);
    if (row.gemmtune.ok() && row.clblast.ok() && row.clblast.gflops > 0) {
      row.ratio = row.gemmtune.gflops / row.clblast.gflops;
    }
    return row;
  }

 private:
  static void fail(SideResult& result, const std::exception& e) {
    result.status = "failed";
    result.verified = false;
    if (dynamic_cast<const NotAvailable*>(&e)) {
      result.available = false;
      result.status = "n/a";
      result.message = e.what();
    } else if (auto* cl = dynamic_cast<const cl::Error*>(&e)) {
      result.message =
          std::string("OpenCL error in ") + cl->what() + ": " + cl_error_name(cl->err());
    } else {
      result.message = e.what();
    }
  }

  bool verify_side(CaseData& d, const Call& call, bool epilogue, SideResult& result) {
    try {
      const Verification v = verify_call(env_, d, call, epilogue);
      result.checked = d.reference().coverage();
      result.max_error = v.max_error;
      result.tolerance = v.tolerance;
      result.verified = v.ok;
      result.status = v.ok ? "ok" : "wrong_result";
      result.message = v.message;
      return v.ok;
    } catch (const std::exception& e) {
      fail(result, e);
      return false;
    }
  }

  // The kernels a row may draw from: the fused-epilogue ones for an epilogue row, else the
  // suite's, less those whose launch block declares no batch in the row's layout.
  std::vector<std::string> kernels_for(const Problem& p, bool epilogue) {
    if (epilogue) return epilogue_kernels(env_);
    std::vector<std::string> out;
    for (const auto& k : options_.kernels) {
      if (p.batch == 1 || supports_batch(env_.spec(k), p.batch_layout)) out.push_back(k);
    }
    return out;
  }

  // The configuration to run: the one candidate when the problem was tuned, else the fastest of
  // the nearest shapes' configurations (each verified and briefly timed here), else the
  // template defaults, reported as untuned.
  std::unique_ptr<TunedCall> choose(CaseData& d, bool epilogue, SuiteRow& row) {
    const std::vector<std::string> kernels = kernels_for(d.problem, epilogue);
    std::vector<Candidate> candidates = suite_candidates(databases_, kernels, d.problem);
    if (candidates.empty()) {
      for (const auto& kernel : kernels) {
        Candidate c;
        c.kernel = kernel;
        c.parameters = env_.spec(kernel).defaults();
        c.origin = "defaults";
        c.tuned_shape = row.shape;
        candidates.push_back(c);
      }
    }
    if (candidates.size() == 1) {
      row.chosen = candidates.front();
      try {
        return std::make_unique<TunedCall>(env_, candidates.front(), d, epilogue);
      } catch (const std::exception& e) {
        fail(row.gemmtune, e);
        return nullptr;
      }
    }
    std::unique_ptr<TunedCall> best;
    double best_ms = 0;
    std::string failures;
    for (const auto& c : candidates) {
      CandidateTrial trial;
      trial.candidate = c;
      try {
        auto call = std::make_unique<TunedCall>(env_, c, d, epilogue);
        const Call run = [t = call.get()](cl::Event* e) { t->enqueue(e); };
        const Verification v = verify_call(env_, d, run, epilogue);
        if (!v.ok) {
          trial.status = "wrong_result";
          trial.message = v.message;
        } else {
          run(nullptr);  // warm-up
          env_.queue().finish();
          std::vector<double> wall;
          for (int i = 0; i < options_.select_reps; ++i) {
            wall.push_back(time_call(env_, run, false).first);
          }
          trial.status = "ok";
          trial.median_ms = summarize(wall, wall).median_ms;
          trial.gflops = gflops_of(d.problem, trial.median_ms);
          if (!best || trial.median_ms < best_ms) {
            best = std::move(call);
            best_ms = trial.median_ms;
            row.chosen = c;
          }
        }
      } catch (const std::exception& e) {
        SideResult scratch;
        fail(scratch, e);
        trial.status = "failed";
        trial.message = scratch.message;
      }
      if (trial.status != "ok") {
        failures += (failures.empty() ? "" : "; ") + c.kernel + ": " + first_line(trial.message);
      }
      row.trials.push_back(trial);
    }
    if (!best) {
      row.gemmtune.status = "failed";
      row.gemmtune.message = "no candidate configuration ran correctly (" + failures + ")";
    }
    return best;
  }

  ClEnv& env_;
  const std::vector<NamedDatabase>& databases_;
  const BenchSuiteOptions& options_;
};

// The rows of each case, in the order they run: precisions, then batch layouts, then the
// epilogue row of an FP32 single GEMM.
struct RowPlan {
  Problem problem;
  bool epilogue_too = false;
};

std::vector<RowPlan> plan_rows(const std::vector<SuiteCase>& cases,
                               const BenchSuiteOptions& options) {
  std::vector<RowPlan> out;
  for (const auto& c : cases) {
    for (Precision precision : options.precisions) {
      const std::vector<BatchLayout> layouts =
          c.batch > 1 ? options.batch_layouts : std::vector<BatchLayout>{BatchLayout::kStrided};
      for (BatchLayout layout : layouts) {
        RowPlan r;
        r.problem.shape = c.shape;
        r.problem.precision = precision;
        r.problem.batch = c.batch;
        r.problem.batch_layout = layout;
        r.epilogue_too = options.epilogue && precision == Precision::kFP32 && c.batch == 1;
        out.push_back(r);
      }
    }
  }
  return out;
}

}  // namespace

SuiteReport run_bench_suite(const Device& device, const DeviceProfile* profile,
                            const std::vector<NamedDatabase>& databases,
                            const BenchSuiteOptions& options_in) {
  BenchSuiteOptions options = options_in;
  std::vector<SuiteCase> cases = options.cases;
  if (!cases.empty() && (!options.shapes.empty() || options.batch != 1)) {
    throw invalid_argument("a suite of cases takes no separate shapes or batch count");
  }
  if (options.batch < 1) throw invalid_argument("--batch must be at least 1");
  if (cases.empty()) {
    for (const auto& s : options.shapes.empty() ? default_suite_shapes() : options.shapes) {
      cases.push_back({s, options.batch});
    }
  }
  if (options.kernels.empty()) options.kernels = default_suite_kernels();
  if (options.precisions.empty()) throw invalid_argument("no precision to run");
  if (options.batch_layouts.empty()) throw invalid_argument("no batch layout to run");
  if (options.reps < 1) throw invalid_argument("--reps must be at least 1");
  if (options.warmup < 0) throw invalid_argument("--warmup must be at least 0");
  if (options.select_reps < 1)
    throw invalid_argument("the candidate repetitions must be at least 1");
  if (options.sample_rows < 2) throw invalid_argument("at least 2 rows must be verified");
  bool batched = false;
  for (const auto& c : cases) {
    const Shape& s = c.shape;
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) {
      throw invalid_argument("shape " + s.to_string() + " has a dimension that is not positive");
    }
    if (c.batch < 1)
      throw invalid_argument("batch " + std::to_string(c.batch) + " of " + s.to_string() +
                             " is not positive");
    batched = batched || c.batch > 1;
  }

  ClEnv env(device, profile, options);
  // Unknown kernels are bad input: refuse them before measuring anything.
  for (const auto& k : options.kernels) env.spec(k);
  if (options.epilogue) epilogue_kernels(env);
  // So is a batch layout that none of the kernels computes: every such row would fail.
  for (BatchLayout layout : options.batch_layouts) {
    if (!batched) break;
    const bool any =
        std::any_of(options.kernels.begin(), options.kernels.end(),
                    [&](const auto& k) { return supports_batch(env.spec(k), layout); });
    if (!any) {
      std::string names;
      for (const auto& k : options.kernels) names += (names.empty() ? "" : ", ") + k;
      throw invalid_argument("none of the kernels (" + names + ") computes batched GEMMs in the " +
                             to_string(layout) + " layout");
    }
  }
  const std::vector<RowPlan> plan = plan_rows(cases, options);
  if (options.epilogue &&
      std::none_of(plan.begin(), plan.end(), [](const RowPlan& r) { return r.epilogue_too; })) {
    throw invalid_argument(
        "--epilogue adds rows to FP32 single GEMMs only, and the suite has none");
  }

  SuiteReport report;
  report.device = device.info;
  report.date = iso_utc_now();
  report.command = options.command;
  report.gemmtune_version = version();
  for (const auto& d : databases) {
    report.databases.push_back(d.name);
    if (!d.db.device.same_hardware(DatabaseDevice::from(device.info))) {
      spdlog::warn("{} was tuned on {}, not on {}", d.name, d.db.device.name, device.info.name);
    }
  }
  report.clblast = options.clblast && clblast_linked();
  if (!report.clblast) {
    report.clblast_note =
        options.clblast ? "CLBlast is not linked into this build" : "skipped on request";
  }
  report.reps = options.reps;
  report.warmup = options.warmup;

  SuiteRunner runner(env, databases, options);
  for (const auto& r : plan) {
    CaseData data(env, r.problem, options);
    for (bool epilogue : {false, true}) {
      if (epilogue && !r.epilogue_too) continue;
      SuiteRow row = runner.run_row(data, epilogue);
      auto side = [](const SideResult& s) {
        if (s.ok()) return fmt::format("{:.1f} GFLOPS", s.gflops);
        return s.available ? s.status : "n/a (" + first_line(s.message) + ")";
      };
      spdlog::info("{}: gemmtune {} {}, CLBlast {}{}", row.label(),
                   row.chosen ? row.chosen->kernel : "-", side(row.gemmtune), side(row.clblast),
                   row.ratio ? fmt::format(", ratio {:.2f}", *row.ratio) : "");
      report.rows.push_back(std::move(row));
    }
  }
  return report;
}

// ---- cuBLAS column ----

CublasResults read_cublas_results(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object() || !j.contains("format") || j["format"] != kCublasBenchFormat) {
    throw invalid_file(origin,
                       std::string("not a bench-cublas.py --json output (no \"format\": \"") +
                           kCublasBenchFormat + "\")");
  }
  if (!j.contains("results") || !j["results"].is_array()) {
    throw invalid_file(origin, "missing the 'results' array");
  }
  CublasResults out;
  const auto& results = j["results"];
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const std::string where = "results[" + std::to_string(i) + "]";
    for (const char* f : {"m", "n", "k"}) {
      if (!r.is_object() || !r.contains(f) || !r[f].is_number_integer() ||
          r[f].get<int64_t>() <= 0) {
        throw invalid_file(origin, where + ": '" + f + "' must be a positive integer");
      }
    }
    if (!r.contains("gflops") || !r["gflops"].is_number()) {
      throw invalid_file(origin, where + ": 'gflops' must be a number");
    }
    const bool epilogue =
        r.contains("epilogue") && r["epilogue"].is_boolean() && r["epilogue"].get<bool>();
    // Precision and batch are optional: bench-cublas.py times single FP32 GEMMs and names neither.
    std::string precision = "32";
    if (r.contains("precision")) {
      const auto& p = r["precision"];
      try {
        precision = to_string(parse_precision(p.is_string() ? p.get<std::string>() : p.dump()));
      } catch (const Error&) {
        throw invalid_file(origin, where + ": 'precision' must be 32, 64, 16 or 16acc32");
      }
    }
    int64_t batch = 1;
    if (r.contains("batch")) {
      if (!r["batch"].is_number_integer() || r["batch"].get<int64_t>() < 1) {
        throw invalid_file(origin, where + ": 'batch' must be a positive integer");
      }
      batch = r["batch"].get<int64_t>();
    }
    const Shape s{r["m"].get<int64_t>(), r["n"].get<int64_t>(), r["k"].get<int64_t>()};
    out.gflops[{s, epilogue, precision, batch}] = r["gflops"].get<double>();
  }
  auto text = [&](const char* key, const char* fallback) {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>()
                                                 : std::string(fallback);
  };
  out.source = fmt::format("{} ({}, torch {}, CUDA {})", fs::path(origin).filename().string(),
                           text("device", "unknown device"), text("torch", "?"), text("cuda", "?"));
  return out;
}

void merge_cublas(SuiteReport& report, const CublasResults& cublas) {
  int matched = 0;
  for (auto& row : report.rows) {
    auto it = cublas.gflops.find({row.shape, row.epilogue, to_string(row.precision), row.batch});
    if (it == cublas.gflops.end()) continue;
    ++matched;
    row.cublas_gflops = it->second;
    if (row.gemmtune.ok() && it->second > 0) row.cublas_ratio = row.gemmtune.gflops / it->second;
  }
  if (matched == 0)
    spdlog::warn("{}: no shape of the suite is in the cuBLAS results", cublas.source);
  report.cublas_source = cublas.source;
}

// ---- rendering ----

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string fixed(double v, int digits) {
  return fmt::format("{:.{}f}", v, digits);
}

std::string side_gflops(const SideResult& s) {
  if (!s.available) return "n/a";
  if (s.status == "wrong_result") return "WRONG";
  if (s.status != "ok") return "FAILED";
  return fixed(s.gflops, 1);
}

std::string source_of(const SuiteRow& r) {
  if (!r.chosen) return "-";
  const Candidate& c = *r.chosen;
  std::string s;
  if (c.origin == "exact") {
    s = "exact";
  } else if (c.origin == "nearest") {
    s = "nearest " + c.tuned_shape.to_string();
  } else {
    s = "template defaults (untuned)";
  }
  if (r.trials.size() > 1) s += fmt::format(", best of {} measured", r.trials.size());
  return s;
}

std::string verified_of(const SuiteRow& r) {
  auto one = [](const SideResult& s) -> std::string {
    if (!s.available) return "n/a";
    if (s.verified) return "ok";
    return s.status == "wrong_result" ? "WRONG" : "failed";
  };
  return one(r.gemmtune) + " / " + one(r.clblast);
}

std::string ratio_of(const std::optional<double>& r) {
  return r ? fixed(*r, 2) : "n/a";
}

std::string batch_of(const SuiteRow& r) {
  return r.batch == 1 ? "1" : std::to_string(r.batch) + " " + to_string(r.batch_layout);
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // The columns before this one are words (left-aligned), the rest numbers but the last.
  static constexpr size_t kFirstNumber = 6;
};

Table suite_table(const SuiteReport& report, bool markdown) {
  const bool cublas = !report.cublas_source.empty();
  Table t;
  t.header = {
      "Shape (MxNxK)",  "Precision",          "Batch",           "Epilogue",
      "Kernel",         "Configuration from", "gemmtune GFLOPS", "gemmtune kernel-only GFLOPS",
      "CLBlast GFLOPS", "gemmtune / CLBlast"};
  if (!markdown) {
    t.header = {"shape", "precision", "batch",       "epilogue", "kernel",
                "from",  "gemmtune",  "kernel-only", "CLBlast",  "ratio"};
  }
  if (cublas) {
    t.header.push_back(markdown ? "cuBLAS GFLOPS" : "cuBLAS");
    t.header.push_back(markdown ? "gemmtune / cuBLAS" : "ratio");
  }
  t.header.push_back(markdown ? "Verified (gemmtune / CLBlast)" : "verified");
  for (const auto& r : report.rows) {
    std::vector<std::string> cells = {r.shape.to_string(),
                                      "fp" + to_string(r.precision),
                                      batch_of(r),
                                      r.epilogue ? "bias+ReLU" : "-",
                                      r.chosen ? r.chosen->kernel : "-",
                                      source_of(r),
                                      side_gflops(r.gemmtune),
                                      r.gemmtune.ok() ? fixed(r.gemmtune.kernel_gflops, 1) : "-",
                                      side_gflops(r.clblast),
                                      ratio_of(r.ratio)};
    if (cublas) {
      cells.push_back(r.cublas_gflops ? fixed(*r.cublas_gflops, 1) : "n/a");
      cells.push_back(ratio_of(r.cublas_ratio));
    }
    cells.push_back(verified_of(r));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

std::string md_escape(std::string s) {
  s = first_line(s);
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

std::vector<std::string> failures_of(const SuiteReport& report) {
  std::vector<std::string> out;
  for (const auto& r : report.rows) {
    if (r.gemmtune.available && !r.gemmtune.ok())
      out.push_back(r.label() + " gemmtune " + r.gemmtune.status + ": " + r.gemmtune.message);
    if (r.clblast.available && !r.clblast.ok()) {
      out.push_back(r.label() + " CLBlast " + r.clblast.status + ": " + r.clblast.message);
    }
  }
  return out;
}

// The sides that did not run and why (a precision the device or CLBlast lacks). A CLBlast
// column left out of the whole report is said once in the header instead.
std::vector<std::string> not_run_of(const SuiteReport& report) {
  std::vector<std::string> out;
  for (const auto& r : report.rows) {
    if (!r.gemmtune.available) out.push_back(r.label() + " gemmtune n/a: " + r.gemmtune.message);
    if (report.clblast && !r.clblast.available) {
      out.push_back(r.label() + " CLBlast n/a: " + r.clblast.message);
    }
  }
  return out;
}

}  // namespace

std::string suite_markdown(const SuiteReport& report) {
  const auto& d = report.device;
  std::string md = "# gemmtune bench-suite: " + d.name + "\n\n";
  md += fmt::format("- Device: {} ({}, {})\n", d.name, d.vendor, d.type);
  md += fmt::format("- Platform: {} ({})\n", d.platform_name, d.platform_version);
  md += fmt::format("- Driver: {}\n", d.driver_version);
  md += fmt::format("- Date: {}\n", report.date);
  md += fmt::format("- Command: `{}`\n", report.command);
  md += fmt::format("- gemmtune {}; databases: {}\n", report.gemmtune_version,
                    report.databases.empty() ? std::string("none") : join(report.databases));
  md += fmt::format("- CLBlast: {}\n",
                    report.clblast
                        ? "stock Gemm (GemmStridedBatched for strided batches, GemmBatched with "
                          "the same per-matrix offsets for offsets batches), same buffers and "
                          "queue; fp16acc32 rows n/a (CLBlast has no FP16-storage/FP32-accumulate "
                          "GEMM, and its half GEMM is a different computation)"
                        : "n/a (" + report.clblast_note + ")");
  if (!report.cublas_source.empty()) md += "- cuBLAS: " + report.cublas_source + "\n";
  md += fmt::format(
      "- Timing: row-major NN, alpha 1, beta 0, in each row's precision; median of {} "
      "interleaved calls of each side after {} warm-up call(s). GFLOPS = 2MNK x batch / "
      "whole-call time (first enqueue to the return of clFinish, host steady clock, every kernel "
      "of the call, no profiling event requested; a batch is one call). Kernel-only: gemmtune's "
      "main kernel from the profiling event of a separate call after each timed one.\n",
      report.reps, report.warmup);
  md +=
      "- Batch: GEMMs per call and where their matrices lie: strided (one buffer per operand, a "
      "fixed stride apart) or offsets (one buffer per operand and a per-matrix offset).\n";
  md +=
      "- Configuration from: the tuned database entry of the row's precision, batch and batch "
      "layout (exact shape, else the nearest tuned shape of that family), else the template "
      "defaults (untuned).\n";
  md +=
      "- Epilogue rows (FP32 single GEMMs): gemmtune's kernel with bias+ReLU fused, against "
      "CLBlast's Gemm followed by a separate bias+ReLU kernel (timed as one call).\n\n";

  const Table t = suite_table(report, true);
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + md_escape(c) + " |";
    return s + "\n";
  };
  md += line(t.header);
  md += "|";
  for (size_t i = 0; i < t.header.size(); ++i) {
    // Numbers right-aligned.
    md += i < Table::kFirstNumber || i + 1 == t.header.size() ? " --- |" : " ---: |";
  }
  md += "\n";
  for (const auto& r : t.rows) md += line(r);

  md += "\n## Configurations\n\n";
  for (const auto& r : report.rows) {
    const std::string label = r.label();
    if (!r.chosen) {
      md += "- " + label + (r.gemmtune.available ? ": none ran\n" : ": n/a\n");
      continue;
    }
    const Candidate& c = *r.chosen;
    std::string from = c.origin == "defaults"
                           ? std::string("template defaults")
                           : fmt::format("{} entry {} in {}, recorded {:.1f} GFLOPS", c.origin,
                                         c.tuned_shape.to_string(), c.database, c.recorded_gflops);
    md += fmt::format("- {}: {} `{}` ({})\n", label, c.kernel, to_string(c.parameters), from);
    for (const auto& trial : r.trials) {
      md += fmt::format("  - candidate {} from {}: {}\n", trial.candidate.kernel,
                        trial.candidate.tuned_shape.to_string(),
                        trial.status == "ok" ? fmt::format("{:.1f} GFLOPS", trial.gflops)
                                             : trial.status + ": " + md_escape(trial.message));
    }
  }
  const auto failures = failures_of(report);
  if (!failures.empty()) {
    md += "\n## Failures\n\n";
    for (const auto& f : failures) md += "- " + md_escape(f) + "\n";
  }
  const auto not_run = not_run_of(report);
  if (!not_run.empty()) {
    md += "\n## Not run (n/a)\n\n";
    for (const auto& f : not_run) md += "- " + md_escape(f) + "\n";
  }
  return md;
}

std::string suite_text(const SuiteReport& report) {
  const Table t = suite_table(report, false);
  std::vector<size_t> width(t.header.size(), 0);
  for (size_t i = 0; i < t.header.size(); ++i) width[i] = t.header[i].size();
  for (const auto& r : t.rows) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) {
      // Numbers right-aligned, words left-aligned.
      s += i >= Table::kFirstNumber && i + 1 < cells.size()
               ? fmt::format("{:>{}}", cells[i], width[i])
               : fmt::format("{:<{}}", cells[i], width[i]);
      if (i + 1 < cells.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  const auto& d = report.device;
  std::string out = fmt::format("{} ({}, driver {})\n", d.name, d.platform_name, d.driver_version);
  out += fmt::format(
      "GFLOPS from the median whole-call time of {} interleaved calls; ratio = "
      "gemmtune / other\n\n",
      report.reps);
  out += line(t.header);
  for (const auto& r : t.rows) out += line(r);
  std::vector<std::string> notes = failures_of(report);
  for (const auto& n : not_run_of(report)) notes.push_back(n);
  if (!notes.empty()) out += "\n";
  for (const auto& n : notes) out += first_line(n) + "\n";
  return out;
}

// ---- JSON ----

void to_json(nlohmann::json& j, const Candidate& c) {
  j = {{"kernel", c.kernel},     {"parameters", configuration_to_json(c.parameters)},
       {"origin", c.origin},     {"tuned_shape", c.tuned_shape},
       {"database", c.database}, {"recorded_gflops", c.recorded_gflops},
       {"distance", c.distance}};
}

void from_json(const nlohmann::json& j, Candidate& c) {
  c.kernel = j.at("kernel").get<std::string>();
  c.parameters = configuration_from_json(j.at("parameters"));
  c.origin = j.at("origin").get<std::string>();
  c.tuned_shape = j.at("tuned_shape").get<Shape>();
  c.database = j.value("database", "");
  c.recorded_gflops = j.value("recorded_gflops", 0.0);
  c.distance = j.value("distance", 0.0);
}

void to_json(nlohmann::json& j, const SideResult& s) {
  j = {{"available", s.available},        {"status", s.status},   {"message", s.message},
       {"verified", s.verified},          {"checked", s.checked}, {"max_error", s.max_error},
       {"tolerance", s.tolerance},        {"wall", s.wall},       {"gflops", s.gflops},
       {"kernel_gflops", s.kernel_gflops}};
  // Infinity (a NaN output) has no JSON form.
  if (!std::isfinite(s.max_error)) j["max_error"] = nullptr;
}

void from_json(const nlohmann::json& j, SideResult& s) {
  s.available = j.at("available").get<bool>();
  s.status = j.at("status").get<std::string>();
  s.message = j.value("message", "");
  s.verified = j.value("verified", false);
  s.checked = j.value("checked", "");
  s.max_error = j.contains("max_error") && j["max_error"].is_number()
                    ? j["max_error"].get<double>()
                    : std::numeric_limits<double>::infinity();
  s.tolerance = j.value("tolerance", 0.0);
  if (j.contains("wall")) s.wall = j["wall"].get<TimingStats>();
  s.gflops = j.value("gflops", 0.0);
  s.kernel_gflops = j.value("kernel_gflops", 0.0);
}

void to_json(nlohmann::json& j, const CandidateTrial& t) {
  j = {{"candidate", t.candidate},
       {"status", t.status},
       {"message", t.message},
       {"median_ms", t.median_ms},
       {"gflops", t.gflops}};
}

void from_json(const nlohmann::json& j, CandidateTrial& t) {
  t.candidate = j.at("candidate").get<Candidate>();
  t.status = j.at("status").get<std::string>();
  t.message = j.value("message", "");
  t.median_ms = j.value("median_ms", 0.0);
  t.gflops = j.value("gflops", 0.0);
}

void to_json(nlohmann::json& j, const SuiteRow& r) {
  j = {{"shape", r.shape},       {"precision", to_string(r.precision)},
       {"batch", r.batch},       {"batch_layout", to_string(r.batch_layout)},
       {"epilogue", r.epilogue}, {"trials", r.trials},
       {"gemmtune", r.gemmtune}, {"clblast", r.clblast}};
  j["chosen"] = r.chosen ? nlohmann::json(*r.chosen) : nlohmann::json(nullptr);
  j["ratio"] = r.ratio ? nlohmann::json(*r.ratio) : nlohmann::json(nullptr);
  if (r.cublas_gflops) j["cublas_gflops"] = *r.cublas_gflops;
  if (r.cublas_ratio) j["cublas_ratio"] = *r.cublas_ratio;
}

void from_json(const nlohmann::json& j, SuiteRow& r) {
  r.shape = j.at("shape").get<Shape>();
  // Version-1 rows name none of these: they were single FP32 GEMMs.
  r.precision = parse_precision(j.value("precision", "32"));
  r.batch = j.value("batch", int64_t{1});
  if (r.batch < 1) throw invalid_argument("batch " + std::to_string(r.batch) + " is not positive");
  r.batch_layout =
      r.batch > 1 ? parse_batch_layout(j.value("batch_layout", "strided")) : BatchLayout::kStrided;
  r.epilogue = j.value("epilogue", false);
  if (j.contains("chosen") && !j["chosen"].is_null()) r.chosen = j["chosen"].get<Candidate>();
  if (j.contains("trials")) r.trials = j["trials"].get<std::vector<CandidateTrial>>();
  r.gemmtune = j.at("gemmtune").get<SideResult>();
  r.clblast = j.at("clblast").get<SideResult>();
  if (j.contains("ratio") && j["ratio"].is_number()) r.ratio = j["ratio"].get<double>();
  if (j.contains("cublas_gflops")) r.cublas_gflops = j["cublas_gflops"].get<double>();
  if (j.contains("cublas_ratio")) r.cublas_ratio = j["cublas_ratio"].get<double>();
}

void to_json(nlohmann::json& j, const SuiteReport& r) {
  j = {{"format", kBenchSuiteFormat},
       {"schema_version", kBenchSuiteSchemaVersion},
       {"device", r.device},
       {"date", r.date},
       {"command", r.command},
       {"gemmtune_version", r.gemmtune_version},
       {"databases", r.databases},
       {"clblast", r.clblast},
       {"clblast_note", r.clblast_note},
       {"reps", r.reps},
       {"warmup", r.warmup},
       {"cublas_source", r.cublas_source},
       {"rows", r.rows}};
}

void from_json(const nlohmann::json& j, SuiteReport& r) {
  if (!j.is_object() || j.value("format", "") != kBenchSuiteFormat) {
    throw Error(ErrorCode::kInvalidFile, std::string("not a ") + kBenchSuiteFormat + " document");
  }
  r.device = j.at("device").get<DeviceInfo>();
  r.date = j.value("date", "");
  r.command = j.value("command", "");
  r.gemmtune_version = j.value("gemmtune_version", "");
  r.databases = j.value("databases", std::vector<std::string>{});
  r.clblast = j.value("clblast", false);
  r.clblast_note = j.value("clblast_note", "");
  r.reps = j.value("reps", 0);
  r.warmup = j.value("warmup", 0);
  r.cublas_source = j.value("cublas_source", "");
  r.rows = j.at("rows").get<std::vector<SuiteRow>>();
}

}  // namespace gemmtune
