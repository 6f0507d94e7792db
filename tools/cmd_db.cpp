// gemmtune db: inspect, merge and query tuned databases, and calibrate the selection model that
// answers for shapes a database lacks.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/offline_start.hpp"
#include "src/select/selection.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

void print_entries(const Database& db) {
  std::cout << fmt::format("device   {} ({}, profile {})\n", db.device.name, db.device.vendor,
                           db.device.profile);
  std::cout << fmt::format("driver   {}  {}\n", db.device.driver_version, db.device.opencl_version);
  std::cout << fmt::format("updated  {} by gemmtune {}\n", db.metadata.updated,
                           db.metadata.gemmtune_version);
  std::cout << fmt::format("entries  {}\n\n", db.entries().size());
  if (db.entries().empty()) return;
  std::cout << fmt::format(
      "{:<16} {:>7} {:>4} {:>3} {:>12} {:>16} {:>10} {:>10} {:>6} {:>9} {:<12} {}\n", "kernel",
      "prec", "ord", "op", "batch", "MxNxK", "GFLOPS", "median ms", "cv %", "error", "found by",
      "parameters");
  for (const auto& e : db.entries()) {
    const auto& k = e.key;
    std::string gflops =
        e.status == Status::kOk ? fmt::format("{:.1f}", e.gflops) : to_string(e.status);
    std::cout << fmt::format(
        "{:<16} {:>7} {:>4} {:>3} {:>12} {:>16} {:>10} {:>10.4f} {:>6.2f} {:>9.2e} {:<12} {}\n",
        k.kernel, "fp" + to_string(k.precision), k.order == Order::kRowMajor ? "row" : "col",
        k.layout,
        // A batch names where its matrices lie: two entries may differ only there.
        k.batch > 1 ? std::to_string(k.batch) + " " + to_string(k.batch_layout)
                    : std::to_string(k.batch),
        k.shape.to_string(), gflops, e.time.median_ms, e.time.cv * 100, e.max_error,
        e.found.strategy, to_string(e.parameters));
  }
}

void set_show(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand("show", "Print the entries of a tuned database");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("DB", *path, "Database file")->required();
  cmd->add_flag("--json", *json, "Print the database as JSON");
  cmd->callback([path, json, &options]() {
    const auto db = Database::load(*path, templates_dir(options));
    if (*json) {
      std::cout << db.to_json().dump(2) << "\n";
    } else {
      print_entries(db);
    }
  });
}

void set_merge(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand(
      "merge",
      "Merge databases of one device, keeping the fastest entry of each problem (an existing OUT "
      "is merged too; searches writing OUT meanwhile wait for its lock)");
  auto out = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("OUT", *out, "Database to write (may be one of the inputs)")->required();
  cmd->add_option("IN", *inputs, "Databases to merge")->required();
  cmd->callback([out, inputs, &options]() {
    const auto s = merge_database_files(*out, *inputs, templates_dir(options));
    std::cout << fmt::format("{}: {} entries from {} entries in {} databases{}\n", *out, s.entries,
                             s.input_entries, s.databases,
                             s.kept_output ? " (its own entries included)" : "");
  });
}

std::string no_entry_message(const std::string& path, const EntryKey& key, const std::string& order,
                             const std::string& kernel) {
  return path + " has no entry for " + (kernel.empty() ? std::string() : kernel + " ") + "fp" +
         to_string(key.precision) + " " + order + " " + key.layout + " batch " +
         std::to_string(key.batch) +
         (key.batch > 1 ? " " + to_string(key.batch_layout) : std::string()) +
         (key.epilogue.none() ? "" : " epilogue " + to_string(key.epilogue));
}

nlohmann::json ranked_json(const RankedCandidate& r) {
  return {{"kernel", r.kernel},
          {"parameters", configuration_to_json(r.parameters)},
          {"predicted_gflops", r.estimate.gflops},
          {"score", r.score},
          {"source", r.from.source},
          {"origin", r.from.origin},
          {"entry", r.from.entry},
          {"measured_gflops", r.from.gflops},
          {"measured_shape", r.from.problem.shape.to_string()},
          {"log_distance", r.distance},
          {"reason", r.reason}};
}

void print_explanation(const Selection& s) {
  const RankedCandidate& c = *s.chosen;
  std::cout << fmt::format("choice     {} {}\n", c.kernel, to_string(c.parameters));
  if (s.kind == Selection::Kind::kSafePath) {
    std::cout << "source     the safe path (template defaults)\n";
  } else {
    std::cout << fmt::format(
        "source     {} {} ({:.1f} GFLOPS measured at {})\n", c.from.source,
        c.from.source == "database" ? c.from.origin + " entry " + c.from.entry : c.from.origin,
        c.from.gflops, c.from.problem.shape.to_string());
  }
  std::cout << fmt::format("predicted  {:.1f} GFLOPS\n", c.estimate.gflops);
  std::cout << fmt::format("why        {}\n", s.reason);
  if (s.baseline_gflops) {
    std::cout << fmt::format("baseline   {:.1f} GFLOPS predicted ({})\n", *s.baseline_gflops,
                             s.baseline_source);
  }
  for (size_t i = 0; i < s.rejected.size(); ++i) {
    std::cout << fmt::format("{:<10} {}\n", i == 0 ? "rejected" : "", s.rejected[i]);
  }
  for (const auto& n : s.notes) std::cout << fmt::format("note       {}\n", n);
}

void print_offline_start(const OfflineStart& start, const EntryKey& key, bool json, bool explain) {
  if (json) {
    std::cout << nlohmann::json{{"requested", key},
                                {"match", "offline choice"},
                                {"kernel", start.spec->name()},
                                {"parameters", configuration_to_json(start.config)},
                                {"predicted_gflops", start.predicted_gflops},
                                {"source", start.source},
                                {"origin", start.origin},
                                {"reason", start.reason}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << fmt::format("no entry for {}; {}: {} predicted {:.1f} GFLOPS\n",
                           key.shape.to_string(), start.reason, start.spec->name(),
                           start.predicted_gflops);
  if (!explain) {
    std::cout << to_string(start.config) << "\n";
    return;
  }
  std::cout << fmt::format("choice     {} {}\n", start.spec->name(), to_string(start.config));
  std::cout << fmt::format("source     {} ({})\n", start.source, start.origin);
  std::cout << fmt::format("predicted  {:.1f} GFLOPS (static prior, not measured)\n",
                           start.predicted_gflops);
  std::cout << fmt::format("why        {}\n", start.reason);
}

void set_lookup(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand(
      "lookup",
      "Choose the parameters for a problem: the entry of its shape, else the candidate the "
      "selection model predicts fastest (or the safe path where a baseline would win)");
  struct Args {
    std::string path, kernel;
    ProblemOptions problem;
    std::vector<std::string> journals;
    int per_problem = 3;
    bool json = false, explain = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DB", a->path, "Database file")->required();
  cmd->add_option("--kernel", a->kernel, "Only this kernel's entries (default: every kernel)");
  add_problem_options(*cmd, a->problem, kPrecision | kLayoutOrder | kBatch | kEpilogue | kMnk);
  for (const char* dim : {"m", "n", "k"}) a->problem.added.at(dim)->required();
  cmd->add_option("--journal", a->journals,
                  "Also take the fastest results per problem of this search journal as candidates "
                  "(repeatable)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--per-problem", a->per_problem, "Results taken per problem of each journal")
      ->capture_default_str()
      ->check(whole_number(1, 1000));
  cmd->add_flag("--explain", a->explain,
                "Print the choice, its source, predicted speed and why, and the alternatives it "
                "rejected");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a, &options]() {
    Problem problem = a->problem.problem();
    problem.shape = *a->problem.one_shape();
    const EntryKey key = EntryKey::of(a->kernel.empty() ? kDefaultKernel : a->kernel, problem);
    const std::string templates = templates_dir(options);
    const auto db = Database::load(a->path, templates);
    CandidatePool pool;
    pool.add_database(db, a->path);
    for (const auto& j : a->journals) pool.add_journal(j, size_t(a->per_problem));
    std::vector<SelectionCandidate> candidates;
    for (const auto& c : pool.candidates()) {
      if (a->kernel.empty() || c.kernel == a->kernel) candidates.push_back(c);
    }

    const ProfileSet profiles = load_profiles(options);
    const DeviceModel device = DeviceModel::of(profiles.find(db.device.profile, db.device.name),
                                               db.device.compute_units, db.device.max_clock_mhz);
    auto specs = std::make_shared<std::map<std::string, std::optional<KernelSpec>>>();
    SelectOptions select;
    select.specs = [specs, templates](const std::string& kernel) -> const KernelSpec* {
      auto it = specs->find(kernel);
      if (it == specs->end()) {
        std::optional<KernelSpec> spec;
        try {
          spec = KernelSpec::load_named(templates, kernel);
        } catch (const Error&) {
          // A kernel without a declaration here: its parameters give the tiles.
        }
        it = specs->emplace(kernel, std::move(spec)).first;
      }
      return it->second ? &*it->second : nullptr;
    };
    if (const KernelSpec* direct = select.specs("xgemm_direct")) {
      select.safe_kernel = direct->name();
      select.safe_parameters = direct->defaults();
    }
    const Selection s = select_configuration(candidates, key, problem, device, select);
    if (!s.chosen) {
      // An untuned problem on a profile with starting configurations: what the library runs.
      const auto start = offline_start(
          profiles.find(db.device.profile, db.device.name), problem, device, select.specs,
          [&](const KernelSpec& spec, const Configuration& config) -> std::string {
            if (!a->kernel.empty() && spec.name() != a->kernel) return "another kernel";
            const auto why = spec.check(config, DeviceLimits{},
                                        {{"ELEM_BYTES", element_bytes(problem.precision)}});
            return why.value_or("");
          });
      if (!start)
        throw invalid_argument(no_entry_message(a->path, key, a->problem.order, a->kernel));
      print_offline_start(*start, key, a->json, a->explain);
      return;
    }
    const RankedCandidate& c = *s.chosen;
    if (a->json) {
      nlohmann::json out = {{"requested", key},
                            {"match", to_string(s.kind)},
                            {"kernel", c.kernel},
                            {"parameters", configuration_to_json(c.parameters)},
                            {"predicted_gflops", c.estimate.gflops},
                            {"log_distance", c.distance},
                            {"reason", s.reason},
                            {"rejected", s.rejected},
                            {"notes", s.notes}};
      if (s.kind != Selection::Kind::kSafePath) out["source"] = c.from.source;
      if (s.kind != Selection::Kind::kSafePath && c.from.source == "database") {
        const EntryKey entry_key = EntryKey::of(c.kernel, c.from.problem);
        if (const DatabaseEntry* e = db.find(entry_key)) out["entry"] = *e;
      }
      if (s.baseline_gflops) {
        out["baseline"] = {{"predicted_gflops", *s.baseline_gflops}, {"from", s.baseline_source}};
      }
      nlohmann::json ranked = nlohmann::json::array();
      for (const auto& r : s.ranked) ranked.push_back(ranked_json(r));
      out["ranked"] = ranked;
      std::cout << out.dump(2) << "\n";
      return;
    }
    if (s.kind == Selection::Kind::kExact) {
      std::cout << fmt::format("exact match {} {}: {:.1f} GFLOPS measured\n", c.kernel,
                               c.from.entry, c.from.gflops);
    } else if (s.kind == Selection::Kind::kSafePath) {
      std::cout << fmt::format(
          "no entry for {}; safe path: {} template defaults, predicted {:.1f} GFLOPS\n",
          key.shape.to_string(), c.kernel, c.estimate.gflops);
    } else {
      std::cout << fmt::format(
          "no entry for {}; the model picks {} tuned for {} ({} {}): predicted {:.1f} GFLOPS\n",
          key.shape.to_string(), c.kernel, c.from.problem.shape.to_string(), c.from.source,
          c.from.origin, c.estimate.gflops);
    }
    if (a->explain) {
      print_explanation(s);
    } else {
      std::cout << to_string(c.parameters) << "\n";
    }
  });
}

// The device the journals were measured on, as their first headers record it; journals of
// different devices would fit one model to two machines, so they are refused.
DeviceInfo journals_device(const std::vector<std::string>& journals) {
  std::optional<DeviceInfo> device;
  std::string first_id, first_path;
  for (const auto& path : journals) {
    const Journal journal = read_journal(path);
    const auto recorded =
        journal.headers.empty() ? std::nullopt : journal.header(0).optional_object("device");
    if (!recorded || !recorded->has("name")) {
      throw invalid_file(path, "has no header naming the device it was measured on");
    }
    const std::string id = recorded->string_or("id", recorded->string("name"));
    if (!device) {
      device = recorded->convert<DeviceInfo>();
      first_id = id;
      first_path = path;
    } else if (id != first_id) {
      throw invalid_argument("journals of two devices: " + first_path + " (" + first_id + ") and " +
                             path + " (" + id + "); calibrate one device at a time");
    }
  }
  return *device;
}

// The model's constants by name, in the order model.hpp declares them.
const std::vector<std::pair<const char*, double ModelConstants::*>>& constant_names() {
  static const std::vector<std::pair<const char*, double ModelConstants::*>> names = {
      {"saturation_groups", &ModelConstants::saturation_groups},
      {"group_overhead", &ModelConstants::group_overhead},
      {"edge_cost", &ModelConstants::edge_cost},
      {"bandwidth_efficiency", &ModelConstants::bandwidth_efficiency},
      {"launch_us", &ModelConstants::launch_us},
      {"rate_cap", &ModelConstants::rate_cap},
      {"distance_penalty", &ModelConstants::distance_penalty}};
  return names;
}

nlohmann::json constants_json(const ModelConstants& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, member] : constant_names()) j[name] = c.*member;
  return j;
}

void set_calibrate(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand(
      "calibrate",
      "Fit the selection model's constants to search journals of one device (configurations "
      "measured at several shapes predict each other) and print them beside the shipped ones");
  struct Args {
    std::vector<std::string> journals;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("JOURNAL", a->journals, "Search journals (.jsonl or .gz) of one device")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a, &options]() {
    const DeviceInfo info = journals_device(a->journals);
    const ProfileSet profiles = load_profiles(options);
    const DeviceProfile* profile = profiles.find(info.profile, info.name);
    const DeviceModel device = DeviceModel::of(profile, info.compute_units, info.max_clock_mhz);
    const std::string templates = templates_dir(options);
    std::map<std::string, std::optional<KernelSpec>> specs;
    auto spec = [&](const std::string& kernel) -> const KernelSpec* {
      auto it = specs.find(kernel);
      if (it == specs.end()) {
        std::optional<KernelSpec> loaded;
        try {
          loaded = KernelSpec::load_named(templates, kernel);
        } catch (const Error&) {
          // A kernel without a declaration here: its parameters give the tiles.
        }
        it = specs.emplace(kernel, std::move(loaded)).first;
      }
      return it->second ? &*it->second : nullptr;
    };
    // The best measurement of each configuration and problem over all the journals, as
    // journal_observations keeps it within one.
    std::map<std::string, CalibrationSample> best;
    for (const auto& path : a->journals) {
      for (auto& o : journal_observations(path, spec, device)) {
        const std::string key = problem_key(o.kernel, o.problem) + "|" + to_string(o.config);
        auto it = best.find(key);
        if (it == best.end() || it->second.gflops < o.gflops) best[key] = std::move(o);
      }
    }
    std::vector<CalibrationSample> observations;
    for (auto& [key, o] : best) observations.push_back(std::move(o));
    const Calibration c = calibrate(observations, device, CalibrationGrid::standard());
    const ModelConstants shipped = calibrated_constants();
    if (a->json) {
      std::cout << nlohmann::json{{"device", info.name},
                                  {"profile", profile ? profile->name : std::string()},
                                  {"journals", a->journals},
                                  {"observations", observations.size()},
                                  {"pairs", c.pairs},
                                  {"mean_abs_log_error", c.mean_abs_log_error},
                                  {"unmodelled_mean_abs_log_error",
                                   c.unmodelled_mean_abs_log_error},
                                  {"constants", constants_json(c.constants)},
                                  {"shipped", constants_json(shipped)}}
                       .dump(2)
                << "\n";
      return;
    }
    std::cout << fmt::format("device     {} (profile {})\n", info.name,
                             profile ? profile->name : std::string("none"));
    std::cout << fmt::format("fitted on  {} measurements in {} journals: {} transfer pairs\n",
                             observations.size(), a->journals.size(), c.pairs);
    std::cout << fmt::format(
        "error      mean |log(predicted/measured)| {:.3f} (the same GFLOPS at every shape: "
        "{:.3f})\n\n",
        c.mean_abs_log_error, c.unmodelled_mean_abs_log_error);
    std::cout << fmt::format("{:<22} {:>10} {:>10}\n", "constant", "fitted", "shipped");
    for (const auto& [name, member] : constant_names()) {
      std::cout << fmt::format("{:<22} {:>10.4g} {:>10.4g}\n", name, c.constants.*member,
                               shipped.*member);
    }
  });
}

}  // namespace

void set_db_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand("db", "Inspect, merge and query tuned databases");
  cmd->require_subcommand(1);
  set_show(*cmd, options);
  set_merge(*cmd, options);
  set_lookup(*cmd, options);
  set_calibrate(*cmd, options);
}

}  // namespace gemmtune::cli
