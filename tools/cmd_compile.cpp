// gemmtune compile: builds the configurations of a kernel's space into the binary cache without
// timing them, so that a search that follows finds them compiled. Shards let several processes
// share the work, which helps where a driver serializes compilation inside one process.
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/strategies/shard.hpp"
#include "src/core/error.hpp"
#include "src/core/problem.hpp"
#include "src/device/device.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/kernel/kernel_spec.hpp"
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
};

void run_compile(const GlobalOptions& options, CompileArgs a) {
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
  Problem problem = a.problem.problem(a.kernel);
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
  cmd->callback([&options, a]() { run_compile(options, *a); });
}

}  // namespace gemmtune::cli
