// SPDX-License-Identifier: Apache-2.0
// gemmtune compile: builds the configurations of a kernel's space into the binary cache without
// timing them, so that a search that follows finds them compiled. Shards let several processes
// share the work, which helps where a driver serializes compilation inside one process.
// With --target (an AMD profile) it builds configurations offline for that ISA instead, with no
// device, and reports the resources each takes.
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/strategies/shard.hpp"
#include "src/core/error.hpp"
#include "src/core/problem.hpp"
#include "src/device/device.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/offline/amd_offline.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct CompileArgs {
  std::string kernel = "xgemm";
  std::string space;  // "" = cpu on a CPU device, gpu otherwise
  std::string device;
  ProblemOptions problem;  // precision, layout and order: what the kernels are built for
  std::string shard = "0/1";
  EvaluatorOptions eval;
  // Offline: the AMD profile to build for, the configurations (none: the template's defaults).
  std::string target;
  std::vector<std::string> params;
  int64_t wavefront = 0;
  bool json = false;
  bool require_fit = false;
};

void run_offline_compile(const GlobalOptions& options, const CompileArgs& a) {
  const auto profiles = load_profiles(options);
  const DeviceProfile& profile = find_offline_target(profiles, a.target);
  const auto spec = KernelSpec::load_named(templates_dir(options), a.kernel);
  const AmdOfflineCompiler compiler(AmdToolchain::find(), templates_dir(options), a.eval.cache_dir);
  Problem problem = a.problem.problem();
  std::vector<Configuration> configs;
  for (const auto& p : a.params) configs.push_back(parse_configuration(p));
  if (configs.empty()) configs.push_back(spec.defaults());
  nlohmann::json out = nlohmann::json::array();
  std::string misfits;
  for (const auto& c : configs) {
    const AmdBuild b = compiler.build(spec, problem, c, {&profile, a.wavefront});
    if (b.spills() || b.helpers_spill() || b.launch_refused())
      misfits += (misfits.empty() ? "" : "; ") + to_string(b.config);
    if (a.json) {
      out.push_back(b);
      continue;
    }
    std::cout << b.report();
  }
  if (a.json) std::cout << out.dump(2) << "\n";
  spdlog::debug("offline compiler: {} ({})", compiler.toolchain().clang,
                compiler.toolchain().version);
  if (a.require_fit && !misfits.empty()) {
    throw CheckFailed("spills (the kernel's or a helper's) or a refused work-group size on " +
                      profile.name + ": " + misfits);
  }
}

void run_compile(const GlobalOptions& options, CompileArgs a) {
  if (!a.target.empty()) return run_offline_compile(options, a);
  if (!a.params.empty()) throw invalid_argument("--params needs --target (an offline AMD build)");
  const Shard shard = Shard::parse(a.shard);
  if (a.eval.cache_dir == "none")
    throw invalid_argument("compile needs a binary cache: --cache-dir none");
  const auto profiles = load_profiles(options);
  const Device device = select_device(a.device, &profiles);
  const DeviceProfile* profile = profiles.match(device.info);
  const auto evaluator =
      make_evaluator(a.kernel, device, profile, evaluator_options(options, a.eval));
  const KernelSpec& spec = evaluator->spec();
  if (a.space.empty()) a.space = device.info.type == "cpu" ? "cpu" : "gpu";
  Problem problem = a.problem.problem();
  problem.shape = Shape{64, 64, 64};  // builds do not depend on the shape
  const ParamSpace space(spec, a.space, device_limits(device.info, profile),
                         Context{{"ELEM_BYTES", element_bytes(problem.precision)}});
  std::vector<Configuration> mine;
  uint64_t index = 0;
  space.for_each([&](const Configuration& c) {
    if (shard.owns(index++)) mine.push_back(c);
    return true;
  });
  spdlog::info("compiling {} of {} configurations of {}/{} for {} (shard {}/{})", mine.size(),
               index, a.kernel, a.space, device.info.name, shard.index, shard.count);
  const auto s = evaluator->compile(problem, mine);
  std::cout << fmt::format("{} built, {} already cached, {} failed to build, {} invalid\n", s.built,
                           s.cached, s.failed, s.invalid);
}

}  // namespace

void set_compile_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand(
      "compile", "Build a kernel's space into the binary cache ahead of a search (no timing)");
  auto a = std::make_shared<CompileArgs>();
  cmd->add_option("--kernel", a->kernel, "Kernel template")->capture_default_str();
  cmd->add_option("--space", a->space, "Named space (default: cpu on a CPU device, gpu otherwise)");
  add_device_option(*cmd, a->device);
  add_problem_options(*cmd, a->problem, kPrecision | kLayoutOrder);
  cmd->add_option("--shard", a->shard,
                  "I/N: build only the configurations whose index is I modulo N")
      ->capture_default_str();
  add_measure_options(*cmd, a->eval, kCacheDir | kCompileThreads);
  auto* target =
      cmd->add_option("--target", a->target,
                      "Build offline for this AMD profile (gfx906, gfx1012, ...) with the "
                      "LLVM AMDGPU backend and report the resources; no device needed");
  target->excludes(cmd->get_option("--device"));
  // An empty name is a mistake (an unset shell variable), never "build for the device".
  target->check(non_empty_text());
  cmd->add_option("--params", a->params,
                  "With --target: a configuration \"MWG=64,...\" (repeatable; missing names take "
                  "defaults; none: the template's defaults)");
  cmd->add_option("--wavefront", a->wavefront,
                  "With --target: the wave size (32 or 64 on RDNA; default the profile's first)")
      ->check(CLI::IsMember({32, 64}));
  cmd->add_flag("--json", a->json, "With --target: JSON output");
  cmd->add_flag(
      "--require-fit", a->require_fit,
      "With --target: exit 1 when a configuration or one of its helper kernels spills, or its "
      "work-group size would be refused at launch");
  cmd->callback([&options, a]() { run_compile(options, *a); });
}

}  // namespace gemmtune::cli
