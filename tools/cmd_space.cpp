// SPDX-License-Identifier: Apache-2.0
// gemmtune space: count or list the valid configurations of a kernel template's named space,
// optionally against a device's limits, and check one configuration against the constraints.
// With --target (an AMD profile) it prunes the space by the real resources the offline AMD build
// gives and prints the short list a search on that card would start from.
#include <iostream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/problem.hpp"
#include "src/device/device.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/offline/shortlist.hpp"
#include "src/select/prior.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

// The shape a short list is ranked for when none is given: large enough to be compute-bound.
const Shape kDefaultRankingShape{2048, 2048, 2048};

struct SpaceArgs {
  std::string kernel = "xgemm";
  std::string space = "ci";
  std::string device;
  bool use_device = false;
  ProblemOptions problem;  // the precision
  std::string check;
  bool list = false;
  bool json = false;
  // Offline pruning for an AMD profile.
  std::string target;
  int64_t wavefront = 0;
  ShortlistCriteria criteria;
  std::string cache_dir;
  std::string fix;
};

nlohmann::json shortlist_json(const SpaceArgs& a, const Problem& problem, const Shortlist& list) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : list.entries) {
    nlohmann::json j = e.build;
    j["predicted_gflops"] = e.predicted;
    entries.push_back(j);
  }
  return {{"kernel", a.kernel},
          {"space", a.space},
          {"target", a.target},
          {"shape", problem.shape.to_string()},
          {"valid", list.valid},
          {"predicted_fit", list.predicted_fit},
          {"min_waves", a.criteria.min_waves},
          {"allow_spill", a.criteria.allow_spill},
          {"calibration",
           {{"slope", list.calibration.slope},
            {"intercept", list.calibration.intercept},
            {"samples", list.calibration.samples},
            {"max_relative_error", list.calibration.max_relative_error}}},
          {"compiled", list.compiled},
          {"shortlist", entries}};
}

void run_offline_space(const GlobalOptions& options, const SpaceArgs& a) {
  const auto profiles = load_profiles(options);
  const DeviceProfile& profile = find_offline_target(profiles, a.target);
  const auto spec = KernelSpec::load_named(templates_dir(options), a.kernel);
  const AmdOfflineCompiler compiler(AmdToolchain::find(), templates_dir(options), a.cache_dir);
  Problem problem = a.problem.problem();
  problem.shape = a.problem.one_shape().value_or(kDefaultRankingShape);
  const DeviceModel device = DeviceModel::of(&profile, 0, 0);
  const auto predict = [&](const Configuration& c, const ResourceUsage& usage) {
    return prior_estimate(&spec, c, problem, usage, device).gflops;
  };
  ShortlistCriteria criteria = a.criteria;
  criteria.fixed = parse_configuration(a.fix);
  for (const auto& [name, value] : criteria.fixed) {
    if (!spec.find_parameter(name))
      throw invalid_argument("--fix: " + a.kernel + " has no parameter " + name);
  }
  const Shortlist list =
      make_shortlist(compiler, spec, a.space, problem, {&profile, a.wavefront}, criteria, predict);
  if (a.json) {
    std::cout << shortlist_json(a, problem, list).dump(2) << "\n";
    return;
  }
  std::cout << fmt::format(
      "{} space '{}' on {}: {} valid configurations; {} predicted with no spill and >= {} waves "
      "per SIMD (register estimate calibrated on {} offline builds: VGPRs ~ {:.2f} x estimate "
      "{:+.0f}, "
      "within {:.0f}%)\n",
      a.kernel, a.space, profile.name, list.valid, list.predicted_fit, a.criteria.min_waves,
      list.calibration.samples, list.calibration.slope, list.calibration.intercept,
      100 * list.calibration.max_relative_error);
  std::cout << fmt::format(
      "short list for {} ({} built offline, {} meet the criteria for real), "
      "ranked by predicted speed, not measured:\n",
      problem.shape.to_string(), list.compiled, list.entries.size());
  for (const auto& e : list.entries) {
    std::cout << fmt::format("  {:8.0f} GFLOPS predicted  {:3} VGPRs {:2} waves  LDS {:5}  {}\n",
                             e.predicted, e.build.vgprs, e.build.occupancy.waves, e.build.lds_bytes,
                             to_string(e.build.config));
  }
}

void run_space(const GlobalOptions& options, const SpaceArgs& a) {
  const bool offline = !a.target.empty();
  // --check and --list with --target: against the limits the short list prunes by.
  if (offline && a.check.empty() && !a.list) return run_offline_space(options, a);
  const auto spec = KernelSpec::load(templates_dir(options) + "/" + a.kernel + ".json");
  const Precision precision = a.problem.problem().precision;
  DeviceLimits limits;
  std::string against = "no device limits";
  if (offline) {
    const auto profiles = load_profiles(options);
    const DeviceProfile& profile = find_offline_target(profiles, a.target);
    target_wavefront({&profile, a.wavefront});
    limits = offline_limits(profile);
    against = profile.name + " (offline)";
  } else if (a.use_device || !a.device.empty()) {
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
    if (why) {
      throw invalid_argument("configuration " + to_string(config) + " is not valid" +
                             (offline ? " on " + a.target : std::string()) + ": " + *why);
    }
    std::cout << "valid" << (offline ? " on " + a.target : std::string()) << ": "
              << to_string(config) << "\n";
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
  add_problem_options(*cmd, a->problem, kPrecision | kLayoutOrder | kOneShape);
  auto* target = cmd->add_option(
      "--target", a->target,
      "Prune offline for this AMD profile (gfx906, gfx1012, ...): real resources from the LLVM "
      "AMDGPU backend, then a short list ranked by predicted speed (-s: the shape, default "
      "2048^3)");
  target->excludes(cmd->get_option("--device"));
  // An empty name is a mistake (an unset shell variable), never "no target".
  target->check(non_empty_text());
  cmd->add_option("--wavefront", a->wavefront,
                  "With --target: the wave size (default the profile's first)")
      ->check(CLI::IsMember({32, 64}));
  cmd->add_option("--min-waves", a->criteria.min_waves, "With --target: waves per SIMD at least")
      ->check(whole_number(1, 64))
      ->capture_default_str();
  cmd->add_flag("--allow-spill", a->criteria.allow_spill,
                "With --target: keep configurations that spill");
  cmd->add_option("--shortlist", a->criteria.length, "With --target: length of the short list")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_option("--calibration-builds", a->criteria.calibration_samples,
                  "With --target: builds that calibrate the register estimate")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd->add_option("--max-builds", a->criteria.max_compiles,
                  "With --target: builds spent on the short list at most")
      ->check(whole_number(1, 100000))
      ->capture_default_str();
  cmd->add_option("--seed", a->criteria.seed, "With --target: seed of the calibration sample")
      ->check(seed_number())
      ->capture_default_str();
  cmd->add_option("--cache-dir", a->cache_dir, "With --target: cache folder (none: no cache)");
  cmd->add_option("--fix", a->fix,
                  "With --target: only configurations with these values (\"DOT2=1,...\")");
  cmd->add_option("--check", a->check, "Check one configuration (missing names take defaults)");
  cmd->add_flag("--list", a->list, "List the valid configurations");
  cmd->add_flag("--json", a->json, "JSON output");
  cmd->callback([&options, a]() { run_space(options, *a); });
}

}  // namespace gemmtune::cli
