// SPDX-License-Identifier: Apache-2.0
// gemmtune db add-measurements and db calibrate: what search journals teach a database and the
// selection model.
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/db/cross_measurements.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/device/device_profile.hpp"
#include "src/select/model.hpp"
#include "src/select/policy.hpp"
#include "tools/cmd_db.hpp"

namespace gemmtune::cli {

namespace {

// A cross-measurement measures each of its shapes with every configuration of a database; a
// search's own results rarely reach this many at one shape.
constexpr size_t kMinCrossConfigs = 8;

}  // namespace

void set_db_add_measurements(CLI::App& db_cmd) {
  auto* cmd = db_cmd.add_subcommand(
      "add-measurements",
      "Add to a database the configurations that search journals measured at many shapes (a "
      "cross-measurement: search --space-from DB --strategy exhaustive --workload GRID), for the "
      "chooser to serve shapes between them by what ran fastest there");
  struct Args {
    std::string db, out;
    std::vector<std::string> journals;
    size_t min_configs = kMinCrossConfigs;
    bool replace = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DB", a->db, "Database of the device the journals were measured on")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("JOURNAL", a->journals, "Search journals (.jsonl or .gz)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--min-configs", a->min_configs,
                  "A problem counts when at least this many configurations ran at it")
      ->capture_default_str()
      ->check(CLI::Range(size_t{2}, size_t{1000000}));
  cmd->add_option("-o,--output", a->out, "Database to write (default: DB, in place)");
  cmd->add_flag("--replace", a->replace,
                "The journals' figures replace the database's measurements (its entries stay); "
                "default: they are added to them");
  cmd->callback([a]() {
    const std::string out = a->out.empty() ? a->db : a->out;
    Database db = Database::load(a->db);
    const DatabaseDevice measured_on = DatabaseDevice::from(journals_device(a->journals));
    if (!db.device.same_hardware(measured_on)) {
      throw invalid_argument(a->db + " holds results of '" + db.device.name +
                             "', the journals were measured on '" + measured_on.name + "'");
    }
    if (a->replace) db.clear_measurements();
    CrossMeasurementCount total;
    for (const auto& path : a->journals) {
      const auto c = add_cross_measurements(db, read_journal(path), a->min_configs);
      total.shapes += c.shapes;
      total.measurements += c.measurements;
      total.passed_over += c.passed_over;
    }
    db.save(out);
    std::cout << fmt::format(
        "{}: {} figures of {} configurations at {} shapes ({} problems with fewer than {} "
        "configurations passed over)\n",
        out, total.measurements, db.measurements().size(), total.shapes, total.passed_over,
        a->min_configs);
  });
}

namespace {

nlohmann::json constants_json(const ModelConstants& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, member] : model_constant_fields()) j[name] = c.*member;
  return j;
}

}  // namespace

void set_db_calibrate(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand(
      "calibrate",
      "Fit the selection model's constants to search journals of one device (configurations "
      "measured at several shapes predict each other) and print them beside those the device's "
      "profile gives the chooser now");
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
    const SpecLookup spec = template_lookup(templates_dir(options));
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
    // What the chooser uses on this device now: its profile's, else the defaults.
    const ModelConstants shipped = SelectionPolicy::of(profile).model;
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
    for (const auto& [name, member] : model_constant_fields()) {
      std::cout << fmt::format("{:<22} {:>10.4g} {:>10.4g}\n", name, c.constants.*member,
                               shipped.*member);
    }
    std::cout << "\nshipped: the profile's \"selection\": {\"model\": {...}}, else the defaults; "
                 "fitted constants there make them the chooser's on this device\n";
  });
}

}  // namespace gemmtune::cli
