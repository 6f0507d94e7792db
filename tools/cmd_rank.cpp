// SPDX-License-Identifier: Apache-2.0
// gemmtune rank: ranks the configurations recorded in search journals by the prior alone (no
// measurement: structure and resources, src/select/prior.hpp) and says how good the best of the
// first k is against the measured optimum, beside a random ranking. With --fit, the prior's
// constants are first fitted on the journals given.
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/db/journal.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/rank_validation.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct RankArgs {
  std::vector<std::string> journals;
  std::string resources;
  std::string device_profile;
  std::string registers = "recorded";
  std::vector<size_t> top = {20, 50};
  bool include_failed = false;
  size_t show = 0;
  bool fit = false;
  bool json = false;
};

// One journal's device as the prior sees it: the profile named (or the header's), the model
// variant of the recorded device's name, its compute units and clock.
struct JournalDevice {
  std::string name;
  const DeviceProfile* profile = nullptr;
  DeviceModel model;
};

JournalDevice journal_device(const Journal& journal, const ProfileSet& profiles,
                             const std::string& profile_name) {
  JournalDevice d;
  const nlohmann::json none = nlohmann::json::object();
  const std::optional<JsonReader> recorded =
      journal.headers.empty() ? std::nullopt : journal.header(0).optional_object("device");
  const JsonReader info = recorded ? *recorded : JsonReader(none);
  d.name = info.string_or("name", "");
  const std::string name = profile_name.empty() ? info.string_or("profile", "") : profile_name;
  if (name.empty()) {
    throw invalid_argument("journal " + journal.path +
                           " names no device profile in its header: pass --device-profile");
  }
  d.profile = profiles.find(name, d.name);
  if (!d.profile) throw invalid_argument("no device profile named " + name);
  auto number = [&](const char* field) { return info.number_or(field, 0.0); };
  d.model = DeviceModel::of(d.profile, number("compute_units"), number("max_clock_mhz"));
  return d;
}

std::string problem_line(const std::string& kernel, const Problem& p) {
  return fmt::format("{} {} fp{} {}-major {}{}", kernel, p.shape.to_string(),
                     to_string(p.precision), p.order_name(), p.layout(),
                     p.batch > 1 ? fmt::format(" batch {}", p.batch) : std::string());
}

nlohmann::json constants_json(const PriorConstants& c) {
  return {{"efficiency", c.efficiency},
          {"latency_cycles", c.latency_cycles},
          {"spill_cost", c.spill_cost},
          {"lds_cost", c.lds_cost},
          {"tile_traffic_cost", c.tile_traffic_cost},
          {"issue_cost", c.issue_cost}};
}

void run_rank(const GlobalOptions& options, const RankArgs& a) {
  RankValidationOptions o;
  o.top = a.top;
  o.include_failed = a.include_failed;
  o.show = a.show;
  o.registers = a.registers == "estimate" ? RegisterSource::kEstimate : RegisterSource::kRecorded;
  const ProfileSet profiles = load_profiles(options);
  const std::string templates = templates_dir(options);
  std::map<std::string, std::unique_ptr<KernelSpec>> specs;
  auto spec_of = [&](const std::string& kernel) -> const KernelSpec* {
    auto it = specs.find(kernel);
    if (it == specs.end()) {
      std::unique_ptr<KernelSpec> spec;
      try {
        spec = std::make_unique<KernelSpec>(KernelSpec::load_named(templates, kernel));
      } catch (const Error&) {
        spdlog::warn("no template {} in {}: the prior reads the parameters by name", kernel,
                     templates);
      }
      it = specs.emplace(kernel, std::move(spec)).first;
    }
    return it->second.get();
  };
  std::optional<ResourceTable> table;
  if (!a.resources.empty()) table = ResourceTable::load(a.resources);
  const ResourceTable* resources = table ? &*table : nullptr;

  struct Loaded {
    std::string path;
    JournalDevice device;
    std::vector<RecordedProblem> problems;
  };
  std::vector<Loaded> loaded;
  for (const auto& path : a.journals) {
    const Journal journal = read_journal(path);
    if (journal.entries.empty()) throw invalid_file(path, "holds no result");
    loaded.push_back(
        {path, journal_device(journal, profiles, a.device_profile), recorded_problems(journal)});
  }

  nlohmann::json out = {{"journals", nlohmann::json::array()}};
  if (a.fit) {
    std::vector<PriorSample> samples;
    std::optional<DeviceModel> device;
    for (const auto& l : loaded) {
      if (device && l.device.profile != device->profile) {
        throw invalid_argument("--fit takes journals of one device model; " + l.path +
                               " is of another");
      }
      device = l.device.model;
      for (const auto& p : l.problems) {
        auto s = prior_samples(p, spec_of(p.kernel), l.device.model, resources, o.registers);
        samples.insert(samples.end(), s.begin(), s.end());
      }
    }
    const PriorFit fit = fit_prior(samples, *device);
    o.constants = fit.constants;
    const auto& c = fit.constants;
    if (a.json) {
      out["fit"] = {{"samples", fit.samples}, {"loss", fit.loss}};
    } else {
      std::cout << fmt::format(
          "fitted on {} measured configurations (pinball loss {:.4f}): efficiency {:.3f}, "
          "latency_cycles {}, spill_cost {}, lds_cost {}, tile_traffic_cost {}, issue_cost {}\n\n",
          fit.samples, fit.loss, c.efficiency, c.latency_cycles, c.spill_cost, c.lds_cost,
          c.tile_traffic_cost, c.issue_cost);
    }
  }
  out["constants"] = constants_json(o.constants);

  std::map<size_t, std::pair<double, double>> sums;  // k -> (model, random)
  size_t problems = 0;
  for (const auto& l : loaded) {
    for (const auto& p : l.problems) {
      const ProblemRanking r = validate_ranking(p, spec_of(p.kernel), l.device.model, resources, o);
      ++problems;
      for (const auto& t : r.top) {
        sums[t.k].first += t.model;
        sums[t.k].second += t.random;
      }
      const std::string profile_name =
          l.device.profile->name +
          (l.device.profile->model.empty() ? "" : " " + l.device.profile->model);
      if (a.json) {
        nlohmann::json j = {{"journal", l.path},
                            {"problem", problem_json(r.problem, r.kernel)},
                            {"device", l.device.name},
                            {"profile", profile_name},
                            {"recorded", r.recorded},
                            {"ranked", r.ranked},
                            {"failed_left_out", r.failed_left_out},
                            {"without_resources", r.without_resources},
                            {"registers",
                             {{"resources_file", r.from_table},
                              {"journal", r.from_journal},
                              {"estimated", r.estimated},
                              {"implausible", r.implausible_registers}}},
                            {"optimum",
                             {{"gflops", r.optimum_gflops},
                              {"config", configuration_to_json(r.optimum)},
                              {"rank", r.optimum_rank},
                              {"ties", r.optimum_ties}}}};
        j["top"] = nlohmann::json::array();
        for (const auto& t : r.top) {
          j["top"].push_back({{"k", t.k}, {"model", t.model}, {"random", t.random}});
        }
        j["first"] = nlohmann::json::array();
        for (const auto& f : r.first) {
          j["first"].push_back({{"rank", f.rank},
                                {"config", configuration_to_json(f.config)},
                                {"predicted_gflops", f.predicted},
                                {"measured_gflops", f.measured},
                                {"registers", f.registers},
                                {"spills", f.spills},
                                {"registers_measured", f.measured_registers}});
        }
        out["journals"].push_back(j);
        continue;
      }
      std::cout << fmt::format("{}: {} on {} ({})\n", l.path, problem_line(r.kernel, r.problem),
                               l.device.name.empty() ? "an unnamed device" : l.device.name,
                               profile_name);
      std::string left;
      if (r.failed_left_out) left += fmt::format(", {} failed left out", r.failed_left_out);
      if (r.without_resources) {
        left += fmt::format(", {} not in the resources file", r.without_resources);
      }
      std::string regs;
      if (r.from_table) regs += fmt::format(", {} from the resources file", r.from_table);
      if (r.from_journal) regs += fmt::format(", {} recorded", r.from_journal);
      if (r.estimated) regs += fmt::format(", {} estimated", r.estimated);
      if (r.implausible_registers) {
        regs += fmt::format(" ({} recorded counts below the accumulators replaced)",
                            r.implausible_registers);
      }
      std::cout << fmt::format("  ranked {} of {} recorded configurations{}; registers: {}\n",
                               r.ranked, r.recorded, left, regs.substr(2));
      std::cout << fmt::format(
          "  optimum {:.0f} GFLOPS ({}), ranked {} by the prior{}\n", r.optimum_gflops,
          to_string(r.optimum), r.optimum_rank,
          r.optimum_ties ? fmt::format(" (predicted as fast as {} others)", r.optimum_ties) : "");
      for (const auto& t : r.top) {
        std::cout << fmt::format("  top {:>4}: {:.3f} of the optimum (random ranking: {:.3f})\n",
                                 t.k, t.model, t.random);
      }
      for (const auto& f : r.first) {
        std::cout << fmt::format(
            "  #{:<4} predicted {:>8.0f} measured {:>8.0f}  {} registers {}{}  {}\n", f.rank,
            f.predicted, f.measured, f.registers, f.measured_registers ? "measured" : "estimated",
            f.spills ? fmt::format(", {} spilled", f.spills) : "", to_string(f.config));
      }
    }
  }
  if (a.json) {
    std::cout << out.dump(2) << "\n";
    return;
  }
  if (problems > 1) {
    std::cout << fmt::format("mean over {} problems:", problems);
    for (const auto& [k, s] : sums) {
      std::cout << fmt::format(" top {} {:.3f} (random {:.3f});", k, s.first / double(problems),
                               s.second / double(problems));
    }
    std::cout << "\n";
  }
}

}  // namespace

void set_rank_command(CLI::App& app, GlobalOptions& options) {
  auto a = std::make_shared<RankArgs>();
  auto* cmd = app.add_subcommand(
      "rank",
      "Rank recorded configurations by the prior alone (structure and resources, no measurement) "
      "and compare the best of the first k with the measured optimum");
  cmd->add_option("--journal", a->journals,
                  "Search journal or replay (repeatable): each problem in it is ranked")
      ->required();
  cmd->add_option("--resources", a->resources,
                  "JSONL of measured resources per configuration (kernel, config, registers, "
                  "spills, local_mem_bytes): only the configurations it holds are ranked, with "
                  "its counts");
  cmd->add_option("--device-profile", a->device_profile,
                  "Device profile (default: the one the journal's header names)");
  cmd->add_option("--registers", a->registers,
                  "Registers where the resources file has none: recorded (the journal's, else the "
                  "template's estimate) or estimate (the template's)")
      ->check(CLI::IsMember({"recorded", "estimate"}))
      ->capture_default_str();
  cmd->add_option("--top", a->top, "Lengths of the ranking's head to score")
      ->delimiter(',')
      ->check(whole_number(1))
      ->capture_default_str();
  cmd->add_flag("--include-failed", a->include_failed,
                "Rank failed results too, as 0 GFLOPS (default: rank what ran)");
  cmd->add_option("--show", a->show, "Print the first N of each ranking")->check(whole_number(0));
  cmd->add_flag("--fit", a->fit,
                "Fit the prior's constants on these journals first and rank with them");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a, &options]() { run_rank(options, *a); });
}

}  // namespace gemmtune::cli
