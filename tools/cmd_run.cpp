// SPDX-License-Identifier: Apache-2.0
// gemmtune run: measures and verifies one configuration of a kernel template on one problem.
// With --target (an AMD profile) it is a dry run: the configuration is built offline for that ISA
// and its resources are reported; nothing is measured.
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/tuning/search_checks.hpp"
#include "src/core/error.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/eval/gemm_call.hpp"
#include "src/offline/amd_offline.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct RunOptions {
  std::string kernel = "xgemm";
  std::string params;
  ProblemOptions problem;
  std::string device;
  EvaluatorOptions eval;
  bool json = false;
  std::string target;  // a dry run for this AMD profile
};

void dry_run(const GlobalOptions& global, const RunOptions& o, const Problem& problem) {
  const auto profiles = load_profiles(global);
  const DeviceProfile& profile = find_offline_target(profiles, o.target);
  const auto spec = KernelSpec::load_named(templates_dir(global), o.kernel);
  const AmdOfflineCompiler compiler(AmdToolchain::find(), templates_dir(global), o.eval.cache_dir);
  const AmdBuild b = compiler.build(spec, problem, parse_configuration(o.params), {&profile, 0});
  std::cout << (o.json ? nlohmann::json(b).dump(2) + "\n" : b.report());
}

// A measured configuration that did not come out ok, as the failure main maps to its exit code:
// a refused configuration is bad input (2), a kernel that does not build or computes wrongly a
// failed check (1), a launch that failed, crashed or hung a device failure (3).
void throw_for(const Result& r) {
  const std::string what = to_string(r.status) + ": " + r.message.substr(0, r.message.find('\n'));
  switch (r.status) {
    case Status::kOk:
      return;
    case Status::kInvalid:
    case Status::kDeviceLimit:
      throw invalid_argument("configuration refused: " + r.message);
    case Status::kCompileFailed:
    case Status::kWrongResult:
      throw CheckFailed(what);
    case Status::kRunFailed:
    case Status::kUnsupported:
    case Status::kCrashed:
    case Status::kTimeout:
      throw Error(ErrorCode::kDevice, what);
  }
  throw Error(ErrorCode::kInternal, what);
}

void print_summary(const std::string& kernel, const Problem& p, const Result& r,
                   const std::string& device) {
  std::cout << fmt::format("kernel     {} on {}\n", kernel, device);
  std::cout << fmt::format(
      "problem    {} {}-major {} fp{} alpha={} beta={}{}{}\n", p.shape.to_string(), p.order_name(),
      p.layout(), to_string(p.precision), p.alpha, p.beta,
      p.batch == 1 ? std::string()
                   : fmt::format(" batch={} ({})", p.batch, to_string(p.batch_layout)),
      p.epilogue.none() ? std::string() : " epilogue=" + to_string(p.epilogue));
  std::cout << fmt::format("config     {}\n", to_string(r.config));
  std::cout << fmt::format("status     {}\n", to_string(r.status));
  if (r.ok()) {
    std::cout << fmt::format("speed      {:.2f} GFLOPS\n", r.gflops);
    std::cout << fmt::format(
        "time       median {:.4f} ms (min {:.4f}, mean {:.4f}, max {:.4f}, cv {:.1f}%, {} runs)\n",
        r.time.median_ms, r.time.min_ms, r.time.mean_ms, r.time.max_ms, 100 * r.time.cv,
        r.time.runs);
    std::cout << fmt::format("clock      {}, {} calls a run{}\n", to_string(r.time.clock),
                             r.time.calls,
                             r.time.clock_note.empty() ? "" : " (" + r.time.clock_note + ")");
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

void run(const GlobalOptions& global, const RunOptions& o) {
  Problem problem = o.problem.problem();
  problem.shape = *o.problem.one_shape();
  check_index_range(problem);
  if (!o.target.empty()) return dry_run(global, o, problem);

  const auto profiles = load_profiles(global);
  const Device device = select_device(o.device, &profiles);
  const DeviceProfile* profile = profiles.match(device.info);
  check_fits_device(problem, nlohmann::json(device.info));  // before anything is built
  EvaluatorOptions eo = evaluator_options(global, o.eval);
  eo.compile_threads = 1;  // one configuration: nothing to build in the background
  Result result;
  std::optional<size_t> launches;  // kernels per call, where gemmtune launches them itself
  {
    const auto evaluator = make_evaluator(o.kernel, device, profile, eo);
    const KernelSpec& spec = evaluator->spec();
    const Configuration config = spec.complete(parse_configuration(o.params));
    // A broken constraint is bad input: refuse it before touching the device.
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    if (auto why = spec.check(config, DeviceLimits{}, ctx)) {
      throw invalid_argument("configuration refused: " + *why);
    }
    spdlog::debug("evaluating {} {} on {}", o.kernel, to_string(config), evaluator->description());
    result = evaluator->evaluate(problem, config);
    if (result.ok() && spec.backend() == Backend::kOpenCl) {
      launches = GemmCall::launches(spec, config, problem);
    }
  }
  if (o.json) {
    nlohmann::json j = result;
    j["problem"] = problem_json(problem, o.kernel);
    j["device"] = device.info.name;
    if (launches) j["launches"] = *launches;
    std::cout << j.dump(2) << "\n";
  } else {
    print_summary(o.kernel, problem, result, device.info.name);
  }
  // Multi-line build logs are in the summary above; the error names the first line.
  throw_for(result);
}

}  // namespace

void set_run_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Measure and verify one configuration of a kernel");
  cmd->add_option("--kernel", o->kernel, "Kernel template (xgemm, xgemm_direct, ...)")
      ->capture_default_str();
  cmd->add_option("-p,--params", o->params,
                  "Parameters as \"MWG=64,NWG=64,...\"; missing ones take the template's defaults");
  o->problem.m = o->problem.n = o->problem.k = 1024;
  add_problem_options(*cmd, o->problem, kWholeProblem | kMnk);
  add_device_option(*cmd, o->device);
  add_measure_options(*cmd, o->eval, kTiming | kDataSeed | kCacheDir);
  cmd->add_flag("--json", o->json, "Print the Result as JSON");
  cmd->add_option("--target", o->target,
                  "Dry run: build offline for this AMD profile (gfx906, gfx1012, ...) and report "
                  "its resources; nothing is measured")
      ->excludes(cmd->get_option("--device"))
      ->check(non_empty_text());  // empty would silently mean a run on a device
  cmd->callback([&options, o]() { run(options, *o); });
}

}  // namespace gemmtune::cli
