// gemmtune space: count or list the valid configurations of a kernel template's named space,
// optionally against a device's limits, and check one configuration against the constraints.
#include <iostream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/problem.hpp"
#include "src/device/device.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct SpaceArgs {
  std::string kernel = "xgemm";
  std::string space = "ci";
  std::string device;
  bool use_device = false;
  ProblemOptions problem;  // the precision
  std::string check;
  bool list = false;
  bool json = false;
};

void run_space(const GlobalOptions& options, const SpaceArgs& a) {
  const auto spec = KernelSpec::load(templates_dir(options) + "/" + a.kernel + ".json");
  const Precision precision = a.problem.problem(a.kernel).precision;
  DeviceLimits limits;
  std::string against = "no device limits";
  if (a.use_device || !a.device.empty()) {
    const auto profiles = load_profiles(options);
    const auto device = select_device(a.device, &profiles);
    limits = device_limits(device.info, profiles.match(device.info));
    against = device.info.name + " [" + device.info.profile + "]";
  }
  const Context context{{"ELEM_BYTES", element_bytes(precision)}};
  const ParamSpace space(spec, a.space, limits, context);
  if (!a.check.empty()) {
    const auto config = spec.complete(parse_configuration(a.check));
    const auto why = space.check(config);
    if (why)
      throw invalid_argument("configuration " + to_string(config) + " is not valid: " + *why);
    std::cout << "valid: " << to_string(config) << "\n";
    return;
  }
  if (a.list) {
    nlohmann::json out = nlohmann::json::array();
    space.for_each([&](const Configuration& c) {
      if (a.json) {
        out.push_back(configuration_to_json(c));
      } else {
        std::cout << to_string(c) << "\n";
      }
      return true;
    });
    if (a.json) std::cout << out.dump(1) << "\n";
    return;
  }
  const uint64_t valid = space.count();
  if (a.json) {
    std::cout << nlohmann::json{{"kernel", a.kernel},
                                {"space", a.space},
                                {"valid", valid},
                                {"combinations", space.cartesian_size()},
                                {"against", against}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << fmt::format("{} space '{}': {} valid configurations of {:.0f} combinations ({})\n",
                           a.kernel, a.space, valid, space.cartesian_size(), against);
}

}  // namespace

void set_space_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd =
      app.add_subcommand("space", "Count, list or check configurations of a kernel's space");
  auto a = std::make_shared<SpaceArgs>();
  cmd->add_option("--kernel", a->kernel, "Kernel template")->capture_default_str();
  cmd->add_option("--space", a->space, "Named space (ci, cpu, gpu, ...; full = every value)")
      ->capture_default_str();
  add_device_option(*cmd, a->device);
  cmd->add_flag("--device-limits", a->use_device, "Prune by the default device's limits");
  add_problem_options(*cmd, a->problem, kPrecision);
  cmd->add_option("--check", a->check, "Check one configuration (missing names take defaults)");
  cmd->add_flag("--list", a->list, "List the valid configurations");
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->callback([&options, a]() { run_space(options, *a); });
}

}  // namespace gemmtune::cli
