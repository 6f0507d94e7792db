// gemmtune run: measures and verifies one configuration of a kernel template on one problem.
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct RunOptions {
  std::string kernel = "xgemm";
  std::string params;
  int64_t m = 1024, n = 1024, k = 1024;
  std::string layout = "NN";
  std::string order = "row";
  double alpha = 1.0, beta = 0.0;
  std::string precision = "32";
  int64_t batch = 1;
  std::string batch_layout = "strided";
  std::string epilogue;
  std::string device;
  std::string cache_dir;
  int warmup = 1;
  int min_runs = 3;
  double min_time_ms = 20.0;
  int max_runs = 200;
  uint64_t seed = 42;
  bool json = false;
};

// Exit status of a measured configuration that did not come out ok (0 when it did).
int exit_code_for(Status s) {
  switch (s) {
    case Status::kOk:
      return 0;
    case Status::kInvalid:
    case Status::kDeviceLimit:
      return 2;
    case Status::kRunFailed:
    case Status::kUnsupported:
    case Status::kCrashed:
    case Status::kTimeout:
      return 3;
    case Status::kCompileFailed:
    case Status::kWrongResult:
      return 1;
  }
  return 4;
}

void print_summary(const Problem& p, const Result& r, const std::string& device) {
  std::cout << fmt::format("kernel     {} on {}\n", p.kernel, device);
  std::cout << fmt::format(
      "problem    {} {}-major {} fp{} alpha={} beta={}{}{}\n", p.shape.to_string(), p.order_name(),
      p.layout(), to_string(p.precision), p.alpha, p.beta,
      p.batch == 1 ? std::string()
                   : fmt::format(" batch={} ({})", p.batch, to_string(p.batch_layout)),
      p.epilogue.empty() ? std::string() : " epilogue=" + p.epilogue);
  std::cout << fmt::format("config     {}\n", to_string(r.config));
  std::cout << fmt::format("status     {}\n", to_string(r.status));
  if (r.ok()) {
    std::cout << fmt::format("speed      {:.2f} GFLOPS\n", r.gflops);
    std::cout << fmt::format(
        "time       median {:.4f} ms (min {:.4f}, mean {:.4f}, max {:.4f}, cv {:.1f}%, {} runs)\n",
        r.time.median_ms, r.time.min_ms, r.time.mean_ms, r.time.max_ms, 100 * r.time.cv,
        r.time.runs);
    std::cout << fmt::format("kernel     median {:.4f} ms{}\n", r.time.kernel_median_ms,
                             r.helper_kernels ? " (padding kernels included above)" : "");
  }
  if (r.tolerance > 0) {
    std::cout << fmt::format("verified   max error {:.3g}, tolerance {:.3g}\n", r.max_error,
                             r.tolerance);
  }
  std::cout << fmt::format("build      {} ({:.0f} ms)\n",
                           r.binary_cached ? "binary cache hit" : "compiled", r.compile_ms);
  if (r.usage.local_mem_bytes || r.usage.private_mem_bytes) {
    std::string line =
        fmt::format("resources  local {} B, private {} B", r.usage.local_mem_bytes.value_or(0),
                    r.usage.private_mem_bytes.value_or(0));
    if (r.usage.registers) line += fmt::format(", {} registers", *r.usage.registers);
    if (r.usage.spills) line += fmt::format(", {} B spilled", *r.usage.spills);
    std::cout << line << " (" << r.usage.source << ")\n";
  }
  if (!r.message.empty()) std::cout << "message    " << r.message << "\n";
}

int run(const GlobalOptions& global, const RunOptions& o) {
  Problem problem;
  problem.kernel = o.kernel;
  problem.shape = Shape{o.m, o.n, o.k};
  if (o.m <= 0 || o.n <= 0 || o.k <= 0) {
    throw invalid_argument("-m, -n and -k must be positive (got " + problem.shape.to_string() +
                           ")");
  }
  problem.order = parse_order(o.order);
  set_layout(problem, o.layout);
  problem.alpha = o.alpha;
  problem.beta = o.beta;
  problem.precision = parse_precision(o.precision);
  if (o.batch < 1) throw invalid_argument("--batch must be at least 1");
  problem.batch = o.batch;
  problem.batch_layout = parse_batch_layout(o.batch_layout);
  problem.epilogue = canonical_epilogue(o.epilogue);
  if (o.min_runs < 1 || o.max_runs < 1 || o.warmup < 0) {
    throw invalid_argument("--min-runs and --max-runs must be at least 1, --warmup at least 0");
  }

  const auto profiles = load_profiles(global);
  const Device device = select_device(o.device, &profiles);
  const DeviceProfile* profile = profiles.find(device.info.profile);
  OpenClEvaluatorOptions eo;
  eo.templates_dir = templates_dir(global);
  eo.cache_dir = o.cache_dir;
  eo.warmup_runs = o.warmup;
  eo.min_runs = o.min_runs;
  eo.min_time_ms = o.min_time_ms;
  eo.max_runs = o.max_runs;
  eo.data_seed = o.seed;
  eo.compile_threads = 1;
  Result result;
  {
    OpenClEvaluator evaluator(device, profile, eo);
    const KernelSpec& spec = evaluator.spec(o.kernel);
    const Configuration config = spec.complete(parse_configuration(o.params));
    // A broken constraint is bad input: refuse it before touching the device.
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    if (auto why = spec.check(config, DeviceLimits{}, ctx)) {
      throw invalid_argument("configuration refused: " + *why);
    }
    spdlog::debug("evaluating {} {} on {}", o.kernel, to_string(config), evaluator.description());
    result = evaluator.evaluate(problem, config);
  }
  if (o.json) {
    nlohmann::json j = result;
    j["problem"] = problem;
    j["device"] = device.info.name;
    std::cout << j.dump(2) << "\n";
  } else {
    print_summary(problem, result, device.info.name);
  }
  if (result.status == Status::kDeviceLimit || result.status == Status::kInvalid) {
    throw invalid_argument("configuration refused: " + result.message);
  }
  if (!result.ok()) {
    // Multi-line build logs go to the log; the summary above already holds the message.
    spdlog::error("{}: {}", to_string(result.status),
                  result.message.substr(0, result.message.find('\n')));
  }
  return exit_code_for(result.status);
}

}  // namespace

void set_run_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Measure and verify one configuration of a kernel");
  cmd->add_option("--kernel", o->kernel, "Kernel template (xgemm, xgemm_direct, ...)")
      ->capture_default_str();
  cmd->add_option("-p,--params", o->params,
                  "Parameters as \"MWG=64,NWG=64,...\"; missing ones take the template's defaults");
  cmd->add_option("-m", o->m, "Rows of C")->capture_default_str();
  cmd->add_option("-n", o->n, "Columns of C")->capture_default_str();
  cmd->add_option("-k", o->k, "Inner dimension")->capture_default_str();
  cmd->add_option("--layout", o->layout, "NN, NT, TN or TT (op(A), op(B))")->capture_default_str();
  cmd->add_option("--order", o->order, "row or col (storage order)")->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Scale of A*B")->capture_default_str();
  cmd->add_option("--beta", o->beta, "Scale of C (0: C is not read)")->capture_default_str();
  cmd->add_option("--precision", o->precision,
                  "32, 64, 16 (half arithmetic, needs cl_khr_fp16) or 16acc32 (half storage, "
                  "float arithmetic)")
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "Independent GEMMs of this shape, computed by one launch")
      ->capture_default_str();
  cmd->add_option("--batch-layout", o->batch_layout,
                  "strided (matrices a fixed stride apart) or offsets (an array of per-matrix "
                  "offsets)")
      ->capture_default_str();
  cmd->add_option("--epilogue", o->epilogue,
                  "Fused epilogue C = act(alpha*A*B + beta*C + bias): \"\" (none), bias, relu, "
                  "gelu, bias,relu or bias,gelu (bias: one value per column of C)");
  add_device_option(*cmd, o->device);
  cmd->add_option("--cache-dir", o->cache_dir,
                  "Binary cache folder (default $XDG_CACHE_HOME/gemmtune; none disables)");
  cmd->add_option("--warmup", o->warmup, "Untimed runs before timing")->capture_default_str();
  cmd->add_option("--min-runs", o->min_runs, "Timed runs at least")->capture_default_str();
  cmd->add_option("--min-time-ms", o->min_time_ms, "Total timed milliseconds at least")
      ->capture_default_str();
  cmd->add_option("--max-runs", o->max_runs, "Timed runs at most")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the input data")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the Result as JSON");
  cmd->callback([&options, o]() {
    const int code = run(options, *o);
    if (code != 0) {
      std::cout.flush();
      std::exit(code);
    }
  });
}

}  // namespace gemmtune::cli
