#include "src/bench_suite.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <Eigen/Dense>

#if GEMMTUNE_HAVE_CLBLAST
#include <clblast.h>
#endif

#include "src/binary_cache.hpp"
#include "src/device_profile.hpp"
#include "src/error.hpp"
#include "src/gemm_view.hpp"
#include "src/kernel_source.hpp"
#include "src/kernel_spec.hpp"
#include "src/opencl.hpp"
#include "src/reference.hpp"
#include "src/version.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

std::vector<Shape> default_suite_shapes() {
  return {{256, 256, 256},    {1000, 1000, 1000}, {1024, 1024, 1024}, {2048, 2048, 2048},
          {4096, 4096, 4096}, {4097, 4097, 4097}, {8192, 8192, 8192}, {128, 4096, 1024},
          {64, 4096, 4096},   {8192, 64, 8192}};
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

namespace {

// Templates whose kernels fuse the bias+ReLU epilogue (BIAS/ACTIVATION defines, bias argument).
const std::vector<std::string> kEpilogueKernels = {"xgemm_fast"};

EntryKey suite_key(const std::string& kernel, const Shape& shape) {
  EntryKey k;
  k.kernel = kernel;
  k.precision = Precision::kFP32;
  k.order = Order::kRowMajor;
  k.layout = "NN";
  k.batch = 1;
  k.shape = shape;
  return k;
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
                                        const Shape& shape) {
  // The exact shape: one candidate, the fastest recorded entry (the first on a tie).
  const DatabaseEntry* best = nullptr;
  std::string best_db;
  for (const auto& kernel : kernels) {
    for (const auto& d : databases) {
      const DatabaseEntry* e = d.db.find(suite_key(kernel, shape));
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
      const Database::Match m = d.db.nearest(suite_key(kernel, shape));
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

bool SuiteReport::all_ok() const {
  for (const auto& r : rows) {
    if (!r.gemmtune.ok()) return false;
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

double gflops_of(const Shape& s, double ms) {
  return ms > 0 ? 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                      static_cast<double>(s.k) / (ms * 1e6)
                : 0.0;
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

  // The padding helper of templates that declare "pad".
  cl::Program& pad_program() {
    if (!pad_program_) {
      pad_program_ = build(load_kernel_source(templates_dir_, "pad.cl"),
                           "-DPRECISION=32" + (extra_options_.empty() ? "" : " " + extra_options_),
                           "the pad helper");
    }
    return *pad_program_;
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
  std::optional<cl::Program> pad_program_;
};

// One shape's inputs: host copies for the reference, device buffers shared by both sides.
struct ShapeData {
  Problem problem;  // FP32, row-major, NN, alpha 1, beta 0
  std::vector<double> a, b, bias;
  cl::Buffer a_buf, b_buf, c_buf, bias_buf;

  ShapeData(ClEnv& env, const Shape& shape, uint64_t seed) {
    problem.shape = shape;
    HostMatrices h = make_inputs(problem, seed);
    a = std::move(h.a);
    b = std::move(h.b);
    // Bias in [-1.5K, -0.5K): with products near K, about half of the outputs are clipped by
    // the ReLU, so both branches of it are checked.
    SplitMix rng(seed ^ 0xb1a5b1a5ull);
    bias.resize(static_cast<size_t>(shape.n));
    for (auto& v : bias) {
      v = round_to_precision(-static_cast<double>(shape.k) * (0.5 + rng.unit()), Precision::kFP32);
    }
    auto upload = [&](const std::vector<double>& host, cl_mem_flags flags) {
      const auto bytes = pack_elements(host, Precision::kFP32);
      cl::Buffer buf(env.context(), flags, bytes.size());
      env.queue().enqueueWriteBuffer(buf, CL_TRUE, 0, bytes.size(), bytes.data());
      return buf;
    };
    a_buf = upload(a, CL_MEM_READ_ONLY);
    b_buf = upload(b, CL_MEM_READ_ONLY);
    bias_buf = upload(bias, CL_MEM_READ_ONLY);
    c_buf = cl::Buffer(env.context(), CL_MEM_READ_WRITE,
                       static_cast<size_t>(shape.m * shape.n) * sizeof(float));
  }
};

// The Eigen reference (double precision) for all rows, or for a fixed-seed sample of rows (all
// columns, first and last row always included) when the shape is too large to check whole on
// the host in reasonable time. The tolerance rule is that of src/reference.hpp, with |bias|
// added to the scale in the epilogue rows.
class SampledReference {
 public:
  SampledReference(const ShapeData& d, int64_t full_check_limit, int sample_rows, uint64_t seed)
      : shape_(d.problem.shape) {
    const int64_t m = shape_.m, n = shape_.n, k = shape_.k;
    const bool full = m * n * k <= full_check_limit || m <= sample_rows;
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
    const Eigen::Map<const RowMatrix> a(d.a.data(), m, k);
    const Eigen::Map<const RowMatrix> b(d.b.data(), k, n);
    RowMatrix a_rows(static_cast<Eigen::Index>(rows_.size()), k);
    for (size_t r = 0; r < rows_.size(); ++r)
      a_rows.row(static_cast<Eigen::Index>(r)) = a.row(rows_[r]);
    product_.noalias() = a_rows * b;
    scale_.noalias() = a_rows.cwiseAbs() * b.cwiseAbs();
  }

  std::string coverage() const {
    if (static_cast<int64_t>(rows_.size()) == shape_.m) {
      return fmt::format("all {} outputs", shape_.m * shape_.n);
    }
    return fmt::format("{} of {} rows (all {} columns)", rows_.size(), shape_.m, shape_.n);
  }

  // Checks a row-major M x N result; `bias` set for the bias+ReLU epilogue.
  Verification check(const std::vector<float>& c, const std::vector<double>* bias) const {
    Verification v;
    v.tolerance = relative_tolerance(Precision::kFP32, shape_.k);
    int64_t nans = 0, checked = 0, worst_i = -1, worst_j = -1, nan_i = -1, nan_j = -1;
    double worst_got = 0, worst_expected = 0;
    for (size_t r = 0; r < rows_.size(); ++r) {
      const int64_t i = rows_[r];
      for (int64_t j = 0; j < shape_.n; ++j) {
        double expected = product_(static_cast<Eigen::Index>(r), j);
        double scale = scale_(static_cast<Eigen::Index>(r), j);
        if (bias) {
          expected = std::max(expected + (*bias)[static_cast<size_t>(j)], 0.0);
          scale += std::abs((*bias)[static_cast<size_t>(j)]);
        }
        const double got = c[static_cast<size_t>(i * shape_.n + j)];
        ++checked;
        if (!std::isfinite(got)) {
          if (nans++ == 0) {
            nan_i = i;
            nan_j = j;
          }
          continue;
        }
        const double err = std::abs(got - expected);
        const double rel =
            scale > 0 ? err / scale : (err == 0 ? 0.0 : std::numeric_limits<double>::infinity());
        if (rel > v.tolerance) ++v.wrong;
        if (rel > v.max_error || worst_i < 0) {
          v.max_error = std::max(v.max_error, rel);
          worst_i = i;
          worst_j = j;
          worst_got = got;
          worst_expected = expected;
        }
      }
    }
    if (nans > 0) {
      v.wrong += nans;
      v.max_error = std::numeric_limits<double>::infinity();
      v.message = fmt::format("{} of {} checked outputs are NaN or infinite, the first at C({},{})",
                              nans, checked, nan_i, nan_j);
      return v;
    }
    v.ok = v.wrong == 0;
    if (!v.ok) {
      v.message = fmt::format(
          "{} of {} checked outputs wrong: max error {:.3g} exceeds tolerance {:.3g}; C({},{}) = "
          "{:.9g}, expected {:.9g}",
          v.wrong, checked, v.max_error, v.tolerance, worst_i, worst_j, worst_got, worst_expected);
    }
    return v;
  }

 private:
  Shape shape_;
  std::vector<int64_t> rows_;
  Eigen::MatrixXd product_, scale_;  // rows_.size() x N
};

// One launch of a call.
struct Step {
  cl::Kernel kernel;
  cl::NDRange global, local;
  bool main = false;
};

// gemmtune's call for one configuration, prepared once and enqueued many times: the kernel of
// the template, with the padding copies and the split-K reduction its launch block declares.
// This mirrors what the OpenCL evaluator does inside evaluate(), which exposes no prepared call.
class TunedCall {
 public:
  TunedCall(ClEnv& env, const Candidate& candidate, ShapeData& d, bool epilogue) : env_(env) {
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
    if (std::max({g.m * g.k, g.k * g.n, g.m * g.n}) > std::numeric_limits<int32_t>::max()) {
      throw Error(ErrorCode::kUnsupported,
                  "matrices of more than 2^31 elements exceed the kernels' int indices");
    }
    std::string options =
        build_options(config, problem.precision, view.trans_a, view.trans_b, env.extra_options());
    if (epilogue) options += " -DBIAS=1 -DACTIVATION=1";  // bias per row of the kernel's view
    const cl::Program program = env.build(env.source(candidate.kernel), options,
                                          candidate.kernel + " " + to_string(config));
    cl::Kernel kernel(program, spec.entry_point().c_str());
    const cl_uint nargs = kernel.getInfo<CL_KERNEL_NUM_ARGS>();
    if (nargs != 14 && nargs != 16) {
      throw Error(ErrorCode::kInternal, fmt::format("kernel {} takes {} arguments, not 14 or 16",
                                                    spec.entry_point(), nargs));
    }
    if (epilogue && nargs != 16) {
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

    const size_t eb = sizeof(float);
    auto scratch = [&](int64_t elements) {
      return cl::Buffer(env.context(), CL_MEM_READ_WRITE,
                        std::max<size_t>(static_cast<size_t>(elements), 1) * eb);
    };
    const cl::Buffer& a_buf = view.swap_ab ? d.b_buf : d.a_buf;
    const cl::Buffer& b_buf = view.swap_ab ? d.a_buf : d.b_buf;
    const int64_t pa_rows = view.trans_a ? g.k : g.m, pa_cols = view.trans_a ? g.m : g.k;
    const int64_t pb_rows = view.trans_b ? g.n : g.k, pb_cols = view.trans_b ? g.k : g.n;
    const bool pad_a = pa_rows != view.a_rows() || pa_cols != view.a_cols();
    const bool pad_b = pb_rows != view.b_rows() || pb_cols != view.b_cols();
    const bool pad_c = g.m != view.m || g.n != view.n;
    if (pad_a) {
      scratch_a_ = scratch(pa_rows * pa_cols);
      add_pad(view.a_rows(), view.a_cols(), a_buf, pa_rows, pa_cols, scratch_a_);
    }
    if (pad_b) {
      scratch_b_ = scratch(pb_rows * pb_cols);
      add_pad(view.b_rows(), view.b_cols(), b_buf, pb_rows, pb_cols, scratch_b_);
    }
    // beta is 0: a padded C is written, never read, so it needs no copy in.
    if (pad_c) scratch_c_ = scratch(g.m * g.n);
    const cl::Buffer& c_main = pad_c ? scratch_c_ : d.c_buf;
    workspace_ = scratch(g.split_k ? g.split_k->workspace_elements : 1);

    kernel.setArg(0, static_cast<cl_int>(g.m));
    kernel.setArg(1, static_cast<cl_int>(g.n));
    kernel.setArg(2, static_cast<cl_int>(g.k));
    kernel.setArg(3, static_cast<cl_float>(problem.alpha));
    kernel.setArg(4, static_cast<cl_float>(problem.beta));
    kernel.setArg(5, pad_a ? scratch_a_ : a_buf);
    kernel.setArg(6, cl_int{0});
    kernel.setArg(7, static_cast<cl_int>(pa_rows));
    kernel.setArg(8, pad_b ? scratch_b_ : b_buf);
    kernel.setArg(9, cl_int{0});
    kernel.setArg(10, static_cast<cl_int>(pb_rows));
    kernel.setArg(11, c_main);
    kernel.setArg(12, cl_int{0});
    kernel.setArg(13, static_cast<cl_int>(g.m));
    if (nargs == 16) {
      kernel.setArg(14, d.bias_buf);
      kernel.setArg(15, workspace_);
    }
    steps_.push_back(Step{kernel, to_range(g.global), to_range(g.local), true});
    if (g.split_k && g.split_k->factor > 1) {
      Step reduce;
      reduce.kernel = cl::Kernel(program, g.split_k->reduce_entry.c_str());
      reduce.kernel.setArg(0, static_cast<cl_int>(g.m));
      reduce.kernel.setArg(1, static_cast<cl_int>(g.n));
      reduce.kernel.setArg(2, static_cast<cl_float>(problem.alpha));
      reduce.kernel.setArg(3, static_cast<cl_float>(problem.beta));
      reduce.kernel.setArg(4, c_main);
      reduce.kernel.setArg(5, cl_int{0});
      reduce.kernel.setArg(6, static_cast<cl_int>(g.m));
      reduce.kernel.setArg(7, d.bias_buf);
      reduce.kernel.setArg(8, workspace_);
      reduce.global = to_range(g.split_k->reduce_global);
      reduce.local = to_range(g.split_k->reduce_local);
      steps_.push_back(reduce);
    }
    if (pad_c) add_pad(g.m, g.n, scratch_c_, view.m, view.n, d.c_buf);
  }

  // Enqueues every kernel of the call; the main kernel's event goes to `main_event`.
  void enqueue(cl::Event* main_event) {
    for (auto& s : steps_) {
      env_.queue().enqueueNDRangeKernel(s.kernel, cl::NullRange, s.global, s.local, nullptr,
                                        s.main ? main_event : nullptr);
    }
  }

 private:
  void add_pad(int64_t src_rows, int64_t src_cols, const cl::Buffer& src, int64_t dst_rows,
               int64_t dst_cols, const cl::Buffer& dst) {
    constexpr size_t kLocal = 16;  // pad.cl requires 16 x 16 work-groups
    Step step;
    step.kernel = cl::Kernel(env_.pad_program(), "pad_copy");
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

#if GEMMTUNE_HAVE_CLBLAST
// CLBlast's stock Gemm (row-major, NN, alpha 1, beta 0) on the same buffers, followed by the
// bias+ReLU kernel in the epilogue rows. The temporary buffer CLBlast may need is allocated once,
// as its API allows, so that no call pays for an allocation.
class ClblastCall {
 public:
  ClblastCall(ClEnv& env, ShapeData& d, bool epilogue) : env_(env), d_(d), epilogue_(epilogue) {
    const Shape& s = d.problem.shape;
    size_t temp_bytes = 0;
    cl_command_queue queue = env.queue()();
    const auto status = clblast::GemmTempBufferSize<float>(
        clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m(), n(), k(),
        0, static_cast<size_t>(s.k), 0, static_cast<size_t>(s.n), 0, static_cast<size_t>(s.n),
        &queue, temp_bytes);
    if (status != clblast::StatusCode::kSuccess) {
      throw Error(ErrorCode::kDevice, fmt::format("CLBlast GemmTempBufferSize returned status {}",
                                                  static_cast<int>(status)));
    }
    if (temp_bytes > 0) temp_ = cl::Buffer(env.context(), CL_MEM_READ_WRITE, temp_bytes);
    if (epilogue) {
      bias_relu_ = cl::Kernel(env.build(kBiasReluSource, "", "the bias+ReLU kernel"), "bias_relu");
      bias_relu_.setArg(0, static_cast<cl_int>(s.m));
      bias_relu_.setArg(1, static_cast<cl_int>(s.n));
      bias_relu_.setArg(2, d.c_buf);
      bias_relu_.setArg(3, d.bias_buf);
    }
  }

  void enqueue() {
    cl_command_queue queue = env_.queue()();
    const auto status = clblast::Gemm<float>(
        clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m(), n(), k(),
        1.0f, d_.a_buf(), 0, k(), d_.b_buf(), 0, n(), 0.0f, d_.c_buf(), 0, n(), &queue, nullptr,
        temp_() ? temp_() : nullptr);
    if (status != clblast::StatusCode::kSuccess) {
      throw Error(ErrorCode::kDevice,
                  fmt::format("CLBlast Gemm returned status {}", static_cast<int>(status)));
    }
    if (epilogue_) {
      env_.queue().enqueueNDRangeKernel(bias_relu_, cl::NullRange, cl::NDRange(n(), m()),
                                        cl::NullRange);
    }
  }

 private:
  size_t m() const { return static_cast<size_t>(d_.problem.shape.m); }
  size_t n() const { return static_cast<size_t>(d_.problem.shape.n); }
  size_t k() const { return static_cast<size_t>(d_.problem.shape.k); }

  ClEnv& env_;
  ShapeData& d_;
  bool epilogue_;
  cl::Buffer temp_;
  cl::Kernel bias_relu_;
};
#endif

// A call of either side: enqueues its kernels, the main kernel's event into the argument when
// it has one (gemmtune), ignoring it otherwise (CLBlast).
using Call = std::function<void(cl::Event*)>;

// Runs a call once on C filled with NaN (beta is 0, so C must not be read) and checks it.
Verification verify_call(ClEnv& env, ShapeData& d, const SampledReference& ref, const Call& call,
                         bool epilogue) {
  const size_t count = static_cast<size_t>(d.problem.shape.m * d.problem.shape.n);
  env.queue().enqueueFillBuffer(d.c_buf, std::numeric_limits<float>::quiet_NaN(), 0,
                                count * sizeof(float));
  env.queue().finish();
  call(nullptr);
  env.queue().finish();
  std::vector<float> c(count);
  env.queue().enqueueReadBuffer(d.c_buf, CL_TRUE, 0, count * sizeof(float), c.data());
  return ref.check(c, epilogue ? &d.bias : nullptr);
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

  SuiteRow run_row(ShapeData& d, const SampledReference& ref, bool epilogue) {
    SuiteRow row;
    row.shape = d.problem.shape;
    row.epilogue = epilogue;
    std::unique_ptr<TunedCall> tuned = choose(d, ref, epilogue, row);

    std::optional<Side> g, b;
    if (tuned) {
      row.gemmtune.available = true;
      Side side;
      side.call = [t = tuned.get()](cl::Event* e) { t->enqueue(e); };
      side.events = true;
      if (verify_side(d, ref, side.call, epilogue, row.gemmtune)) g = std::move(side);
    } else {
      row.gemmtune.available = true;
      row.gemmtune.status = "failed";
    }

#if GEMMTUNE_HAVE_CLBLAST
    std::unique_ptr<ClblastCall> blas;
    if (options_.clblast) {
      row.clblast.available = true;
      try {
        blas = std::make_unique<ClblastCall>(env_, d, epilogue);
        Side side;
        side.call = [c = blas.get()](cl::Event*) { c->enqueue(); };
        if (verify_side(d, ref, side.call, epilogue, row.clblast)) b = std::move(side);
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
        const auto [wall, kernel] = time_call(env_, side->call, side->events);
        side->wall.push_back(wall);
        side->kernel.push_back(kernel);
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
      result.gflops = gflops_of(row.shape, result.wall.median_ms);
      result.kernel_gflops = gflops_of(row.shape, result.wall.kernel_median_ms);
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
    if (auto* cl = dynamic_cast<const cl::Error*>(&e)) {
      result.message =
          std::string("OpenCL error in ") + cl->what() + ": " + cl_error_name(cl->err());
    } else {
      result.message = e.what();
    }
  }

  bool verify_side(ShapeData& d, const SampledReference& ref, const Call& call, bool epilogue,
                   SideResult& result) {
    try {
      const Verification v = verify_call(env_, d, ref, call, epilogue);
      result.checked = ref.coverage();
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

  // The configuration to run: the one candidate when the shape was tuned, else the fastest of
  // the nearest shapes' configurations (each verified and briefly timed here).
  std::unique_ptr<TunedCall> choose(ShapeData& d, const SampledReference& ref, bool epilogue,
                                    SuiteRow& row) {
    const std::vector<std::string> kernels = epilogue ? kEpilogueKernels : kernels_();
    std::vector<Candidate> candidates = suite_candidates(databases_, kernels, row.shape);
    if (candidates.empty()) {
      // No tuned entry of any of the kernels: their template defaults, reported as untuned.
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
        const Verification v = verify_call(env_, d, ref, run, epilogue);
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
          trial.gflops = gflops_of(row.shape, trial.median_ms);
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

  std::vector<std::string> kernels_() const {
    return options_.kernels.empty() ? default_suite_kernels() : options_.kernels;
  }

  ClEnv& env_;
  const std::vector<NamedDatabase>& databases_;
  const BenchSuiteOptions& options_;
};

}  // namespace

SuiteReport run_bench_suite(const Device& device, const DeviceProfile* profile,
                            const std::vector<NamedDatabase>& databases,
                            const BenchSuiteOptions& options_in) {
  BenchSuiteOptions options = options_in;
  if (options.shapes.empty()) options.shapes = default_suite_shapes();
  if (options.kernels.empty()) options.kernels = default_suite_kernels();
  if (options.reps < 1) throw invalid_argument("--reps must be at least 1");
  if (options.warmup < 0) throw invalid_argument("--warmup must be at least 0");
  if (options.select_reps < 1)
    throw invalid_argument("the candidate repetitions must be at least 1");
  if (options.sample_rows < 2) throw invalid_argument("at least 2 rows must be verified");
  for (const auto& s : options.shapes) {
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) {
      throw invalid_argument("shape " + s.to_string() + " has a dimension that is not positive");
    }
  }

  ClEnv env(device, profile, options);
  // Unknown kernels are bad input: refuse them before measuring anything.
  for (const auto& k : options.kernels) env.spec(k);
  if (options.epilogue) {
    for (const auto& k : kEpilogueKernels) env.spec(k);
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
  for (const auto& shape : options.shapes) {
    const auto t0 = Clock::now();
    ShapeData data(env, shape, options.seed);
    const SampledReference ref(data, options.full_check_limit, options.sample_rows, options.seed);
    spdlog::debug("{}: inputs and reference ready in {:.0f} ms", shape.to_string(),
                  ms_between(t0, Clock::now()));
    for (bool epilogue : {false, true}) {
      if (epilogue && !options.epilogue) continue;
      SuiteRow row = runner.run_row(data, ref, epilogue);
      spdlog::info(
          "{}{}: gemmtune {} {}, CLBlast {}{}", shape.to_string(), epilogue ? " +bias+relu" : "",
          row.chosen ? row.chosen->kernel : "-",
          row.gemmtune.ok() ? fmt::format("{:.1f} GFLOPS", row.gemmtune.gflops)
                            : row.gemmtune.status,
          row.clblast.ok() ? fmt::format("{:.1f} GFLOPS", row.clblast.gflops) : row.clblast.status,
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
    const Shape s{r["m"].get<int64_t>(), r["n"].get<int64_t>(), r["k"].get<int64_t>()};
    out.gflops[{s, epilogue}] = r["gflops"].get<double>();
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
    auto it = cublas.gflops.find({row.shape, row.epilogue});
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

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Table suite_table(const SuiteReport& report, bool markdown) {
  const bool cublas = !report.cublas_source.empty();
  Table t;
  t.header = {"Shape (MxNxK)",      "Epilogue",          "Kernel",
              "Configuration from", "gemmtune GFLOPS",   "gemmtune kernel-only GFLOPS",
              "CLBlast GFLOPS",     "gemmtune / CLBlast"};
  if (!markdown) {
    t.header = {"shape",    "epilogue",    "kernel",  "from",
                "gemmtune", "kernel-only", "CLBlast", "ratio"};
  }
  if (cublas) {
    t.header.push_back(markdown ? "cuBLAS GFLOPS" : "cuBLAS");
    t.header.push_back(markdown ? "gemmtune / cuBLAS" : "ratio");
  }
  t.header.push_back(markdown ? "Verified (gemmtune / CLBlast)" : "verified");
  for (const auto& r : report.rows) {
    std::vector<std::string> cells = {r.shape.to_string(),
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
    const std::string label = r.shape.to_string() + (r.epilogue ? " bias+ReLU" : "");
    if (!r.gemmtune.ok())
      out.push_back(label + " gemmtune " + r.gemmtune.status + ": " + r.gemmtune.message);
    if (r.clblast.available && !r.clblast.ok()) {
      out.push_back(label + " CLBlast " + r.clblast.status + ": " + r.clblast.message);
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
  md += fmt::format("- CLBlast: {}\n", report.clblast ? "stock Gemm, same buffers and queue"
                                                      : "n/a (" + report.clblast_note + ")");
  if (!report.cublas_source.empty()) md += "- cuBLAS: " + report.cublas_source + "\n";
  md += fmt::format(
      "- Timing: FP32 row-major NN, alpha 1, beta 0; median of {} interleaved calls of each side "
      "after {} warm-up call(s). GFLOPS = 2MNK / whole-call time (first enqueue to the return of "
      "clFinish, host steady clock, every kernel of the call). Kernel-only: gemmtune's main "
      "kernel from profiling events.\n",
      report.reps, report.warmup);
  md +=
      "- Epilogue rows: gemmtune's kernel with bias+ReLU fused, against CLBlast's Gemm followed "
      "by a separate bias+ReLU kernel (timed as one call).\n\n";

  const Table t = suite_table(report, true);
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const auto& c : cells) s += " " + md_escape(c) + " |";
    return s + "\n";
  };
  md += line(t.header);
  md += "|";
  for (size_t i = 0; i < t.header.size(); ++i) {
    md += i < 4 || i + 1 == t.header.size() ? " --- |" : " ---: |";  // numbers right-aligned
  }
  md += "\n";
  for (const auto& r : t.rows) md += line(r);

  md += "\n## Configurations\n\n";
  for (const auto& r : report.rows) {
    const std::string label = r.shape.to_string() + (r.epilogue ? " bias+ReLU" : "");
    if (!r.chosen) {
      md += "- " + label + ": none ran\n";
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
      s += i >= 4 && i + 1 < cells.size() ? fmt::format("{:>{}}", cells[i], width[i])
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
  for (const auto& f : failures_of(report)) out += "\n" + first_line(f);
  if (!failures_of(report).empty()) out += "\n";
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
  j = {{"shape", r.shape},
       {"epilogue", r.epilogue},
       {"trials", r.trials},
       {"gemmtune", r.gemmtune},
       {"clblast", r.clblast}};
  j["chosen"] = r.chosen ? nlohmann::json(*r.chosen) : nlohmann::json(nullptr);
  j["ratio"] = r.ratio ? nlohmann::json(*r.ratio) : nlohmann::json(nullptr);
  if (r.cublas_gflops) j["cublas_gflops"] = *r.cublas_gflops;
  if (r.cublas_ratio) j["cublas_ratio"] = *r.cublas_ratio;
}

void from_json(const nlohmann::json& j, SuiteRow& r) {
  r.shape = j.at("shape").get<Shape>();
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
