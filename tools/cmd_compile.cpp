// gemmtune compile: builds the configurations of a kernel's space into the binary cache without
// timing them, so that a search that follows finds them compiled. Shards let several processes
// share the work, which helps where a driver serializes compilation inside one process.
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/strategies/shard.hpp"
#include "src/device/device.hpp"
#include "src/core/error.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "src/core/problem.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct CompileArgs {
  std::string kernel = "xgemm";
  std::string space;  // "" = cpu on a CPU device, gpu otherwise
  std::string device;
  std::string precision = "32";
  std::string layout = "NN";
  std::string order = "row";
  std::string shard = "0/1";
  int compile_threads = 0;
  std::string cache_dir;
};

void run_compile(const GlobalOptions& options, CompileArgs a) {
  const Shard shard = Shard::parse(a.shard);
  if (a.cache_dir == "none") throw invalid_argument("compile needs a binary cache: --cache-dir none");
  const auto profiles = load_profiles(options);
  const Device device = select_device(a.device, &profiles);
  const DeviceProfile* profile = profiles.match(device.info);
  const auto spec = KernelSpec::load(templates_dir(options) + "/" + a.kernel + ".json");
  if (a.space.empty()) a.space = device.info.type == "cpu" ? "cpu" : "gpu";
  Problem problem;
  problem.kernel = a.kernel;
  problem.precision = parse_precision(a.precision);
  problem.order = parse_order(a.order);
  set_layout(problem, a.layout);
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
  OpenClEvaluatorOptions o;
  o.templates_dir = templates_dir(options);
  o.cache_dir = a.cache_dir;
  o.compile_threads = a.compile_threads;
  OpenClEvaluator evaluator(device, profile, std::move(o));
  const auto s = evaluator.compile(problem, mine);
  std::cout << fmt::format("{} built, {} already cached, {} failed to build, {} invalid\n", s.built,
                           s.cached, s.failed, s.invalid);
}

}  // namespace

void set_compile_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand(
      "compile", "Build a kernel's space into the binary cache ahead of a search (no timing)");
  auto a = std::make_shared<CompileArgs>();
  cmd->add_option("--kernel", a->kernel, "Kernel template")->capture_default_str();
  cmd->add_option("--space", a->space,
                  "Named space (default: cpu on a CPU device, gpu otherwise)");
  add_device_option(*cmd, a->device);
  cmd->add_option("--precision", a->precision, "32, 64, 16 or 16acc32")->capture_default_str();
  cmd->add_option("--layout", a->layout, "NN, NT, TN or TT")->capture_default_str();
  cmd->add_option("--order", a->order, "row or col")->capture_default_str();
  cmd->add_option("--shard", a->shard,
                  "I/N: build only the configurations whose index is I modulo N")
      ->capture_default_str();
  cmd->add_option("--compile-threads", a->compile_threads,
                  "Compile threads (default: the cores available)");
  cmd->add_option("--cache-dir", a->cache_dir, "Kernel binary cache (default: the user's cache)");
  cmd->callback([&options, a]() { run_compile(options, *a); });
}

}  // namespace gemmtune::cli
