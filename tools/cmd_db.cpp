// SPDX-License-Identifier: Apache-2.0
// gemmtune db: inspect, merge and query tuned databases, and calibrate the selection model that
// answers for shapes a database lacks.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "src/api/choice.hpp"
#include "src/core/error.hpp"
#include "src/db/cross_measurements.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/chooser.hpp"
#include "src/select/policy.hpp"
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

// Templates by name from the --templates folder, each read once; null for a kernel without a
// declaration there (its parameters then give the tiles).
SpecLookup template_lookup(const std::string& templates) {
  auto specs = std::make_shared<std::map<std::string, std::optional<KernelSpec>>>();
  return [specs, templates](const std::string& kernel) -> const KernelSpec* {
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
}

// The database's device as the chooser sees it. A database records neither the device's
// extensions nor its limits: the problem's precision is taken as supported and no limit as
// known, so that what a template or the problem refuses is refused, as the library would.
DeviceInfo recorded_device(const DatabaseDevice& d) {
  DeviceInfo info;
  info.name = d.name;
  info.vendor = d.vendor;
  info.type = d.type;
  info.profile = d.profile;
  info.compute_units = d.compute_units;
  info.max_clock_mhz = d.max_clock_mhz;
  info.has_fp16 = info.has_fp64 = true;
  return info;
}

nlohmann::json ranked_json(const RankedCandidate& r) {
  return {{"kernel", r.kernel},
          {"parameters", configuration_to_json(r.parameters)},
          {"predicted_gflops", r.estimate.gflops},
          {"score", r.score},
          {"source", to_string(r.from.source)},
          {"origin", r.from.origin},
          {"entry", r.from.entry},
          {"measured_gflops", r.from.gflops},
          {"measured_shape", r.from.problem.shape.to_string()},
          {"log_distance", r.distance},
          {"reason", r.reason}};
}

// The measurement a choice rests on: a database entry or a journal's result (null for the safe
// path, an offline choice and defaults).
const Measurement* measured(const Choice& c) {
  if (!c.selection || c.kind == ChoiceKind::kSafePath) return nullptr;
  return &c.selection->chosen->from;
}

std::string relaxed_suffix(const Choice& c) {
  return c.relaxed.empty() ? "" : " (the entry differs from the problem in: " + c.relaxed + ")";
}

void print_json(const Choice& c, const Choices& all, const EntryKey& key, const Database& db) {
  std::vector<std::string> notes;
  for (const Note& n : all.notes) notes.push_back(n.text);
  nlohmann::json out = {{"requested", key},
                        {"match", to_string(c.kind)},
                        {"kernel", c.spec->name()},
                        {"parameters", configuration_to_json(c.config)},
                        {"predicted_gflops", c.predicted_gflops},
                        {"source", c.source},
                        {"origin", c.origin},
                        {"relaxed", c.relaxed},
                        {"reason", c.reason},
                        {"rejected", c.alternatives},
                        {"notes", notes}};
  if (const Measurement* m = measured(c)) {
    out["source"] = to_string(m->source);
    out["origin"] = m->origin;
    out["log_distance"] = c.distance;
    if (m->source == MeasurementSource::kDatabase) {
      if (const DatabaseEntry* e = db.find(EntryKey::of(c.spec->name(), m->problem))) {
        out["entry"] = *e;
      }
    }
  }
  if (c.selection) {
    const Selection& s = *c.selection;
    if (s.baseline_gflops) {
      out["baseline"] = {{"predicted_gflops", *s.baseline_gflops}, {"from", s.baseline_source}};
    }
    nlohmann::json ranked = nlohmann::json::array();
    for (const auto& r : s.ranked) ranked.push_back(ranked_json(r));
    out["ranked"] = ranked;
  }
  std::cout << out.dump(2) << "\n";
}

// One line: what the problem gets and from where.
void print_headline(const Choice& c, const Shape& shape) {
  switch (c.kind) {
    case ChoiceKind::kExact:
      std::cout << fmt::format("exact match {} {}: {:.1f} GFLOPS measured{}\n", c.spec->name(),
                               c.entry, c.gflops, relaxed_suffix(c));
      return;
    case ChoiceKind::kModel: {
      const Measurement& m = *measured(c);
      std::cout << fmt::format(
          "no entry for {}; the model picks {} tuned for {} ({} {}): predicted {:.1f} GFLOPS{}\n",
          shape.to_string(), c.spec->name(), c.tuned_shape.to_string(), to_string(m.source),
          m.origin, c.predicted_gflops, relaxed_suffix(c));
      return;
    }
    case ChoiceKind::kMeasured:
      std::cout << fmt::format(
          "no entry for {}; measured nearby: {} {}: predicted {:.1f} GFLOPS{}\n", shape.to_string(),
          c.spec->name(), c.reason, c.predicted_gflops, relaxed_suffix(c));
      return;
    case ChoiceKind::kSafePath:
      std::cout << fmt::format(
          "no entry for {}; safe path: {} template defaults, predicted {:.1f} GFLOPS\n",
          shape.to_string(), c.spec->name(), c.predicted_gflops);
      return;
    case ChoiceKind::kOfflineChoice:
      std::cout << fmt::format("no entry for {}; {}: {} predicted {:.1f} GFLOPS\n",
                               shape.to_string(), c.reason, c.spec->name(), c.predicted_gflops);
      return;
    case ChoiceKind::kDefaults:
    case ChoiceKind::kFallback:
      std::cout << fmt::format("no entry for {}; {}\n", shape.to_string(), c.reason);
      return;
  }
}

void print_explanation(const Choice& c, const Choices& all) {
  std::cout << fmt::format("choice     {} {}\n", c.spec->name(), to_string(c.config));
  if (const Measurement* m = measured(c)) {
    std::cout << fmt::format(
        "source     {} {} ({:.1f} GFLOPS measured at {})\n", to_string(m->source),
        m->source == MeasurementSource::kDatabase ? m->origin + " entry " + m->entry : m->origin,
        m->gflops, m->problem.shape.to_string());
  } else {
    std::cout << fmt::format("source     {} ({})\n", c.source, c.origin);
  }
  if (c.kind == ChoiceKind::kOfflineChoice) {
    std::cout << fmt::format("predicted  {:.1f} GFLOPS (static prior, not measured)\n",
                             c.predicted_gflops);
  } else if (c.kind != ChoiceKind::kDefaults && c.kind != ChoiceKind::kFallback) {
    std::cout << fmt::format("predicted  {:.1f} GFLOPS\n", c.predicted_gflops);
  }
  std::cout << fmt::format("why        {}\n", c.reason);
  if (!c.relaxed.empty()) std::cout << fmt::format("relaxed    {}\n", c.relaxed);
  if (c.selection && c.selection->baseline_gflops) {
    std::cout << fmt::format("baseline   {:.1f} GFLOPS predicted ({})\n",
                             *c.selection->baseline_gflops, c.selection->baseline_source);
  }
  for (size_t i = 0; i < c.alternatives.size(); ++i) {
    std::cout << fmt::format("{:<10} {}\n", i == 0 ? "rejected" : "", c.alternatives[i]);
  }
  for (const Note& n : all.notes) std::cout << fmt::format("note       {}\n", n.text);
}

void set_lookup(CLI::App& db_cmd, const GlobalOptions& options) {
  auto* cmd = db_cmd.add_subcommand(
      "lookup",
      "Choose the configuration for a problem as the library does: the entry of its shape, else "
      "the candidate the selection model predicts fastest (or the safe path where a baseline "
      "would win), relaxing the problem as the device profile's policy says, else the profile's "
      "offline choice or a template's defaults");
  struct Args {
    std::string path, kernel;
    ProblemOptions problem;
    std::vector<std::string> journals;
    int per_problem = 3;
    bool json = false, explain = false;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("DB", a->path, "Database file")->required();
  cmd->add_option("--kernel", a->kernel,
                  "Only this kernel's entries and defaults (default: every kernel)");
  add_problem_options(*cmd, a->problem, kPrecision | kLayoutOrder | kBatch | kEpilogue | kMnk);
  for (const char* dim : {"m", "n", "k"}) a->problem.added.at(dim)->required();
  cmd->add_option("--journal", a->journals,
                  "Also take the fastest results per problem of this search journal as candidates "
                  "beside the database's entries (repeatable)")
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
    Database db = Database::load(a->path, templates);
    CandidatePool journals;
    for (const auto& j : a->journals) {
      CandidatePool read;
      read.add_journal(j, size_t(a->per_problem));
      for (const auto& c : read.candidates()) {
        if (!a->kernel.empty() && c.kernel != a->kernel) continue;
        for (const auto& m : c.measurements) journals.add(c.kernel, c.parameters, m);
      }
    }
    if (!a->kernel.empty()) {
      std::vector<EntryKey> others;
      for (const auto& e : db.entries()) {
        if (e.key.kernel != a->kernel) others.push_back(e.key);
      }
      for (const auto& k : others) db.erase(k);
    }
    const ProfileSet profiles = load_profiles(options);
    const DeviceInfo device = recorded_device(db.device);
    const Refusal library = api::call_refusal(device, DeviceLimits{}, problem);
    // The choices point at the lookup's templates: it lives as long as they are printed.
    const SpecLookup specs = template_lookup(templates);
    const Choices chosen = choose_configurations(
        {{"database", a->path, &db, true, journals.empty() ? nullptr : &journals}}, problem, device,
        profiles.find(db.device.profile, db.device.name), specs,
        [&](const KernelSpec& spec, const Configuration& config) -> std::string {
          if (!a->kernel.empty() && spec.name() != a->kernel) return "not --kernel " + a->kernel;
          return library(spec, config);
        });
    if (chosen.choices.empty()) {
      std::string message = "no configuration runs this problem";
      for (const Note& n : chosen.notes) message += "; " + n.text;
      throw invalid_argument(message);
    }
    const Choice& c = chosen.choices.front();
    if (a->json) {
      print_json(c, chosen, key, db);
      return;
    }
    print_headline(c, problem.shape);
    if (a->explain) {
      print_explanation(c, chosen);
    } else {
      std::cout << to_string(c.config) << "\n";
    }
  });
}

// The device the journals were measured on, as their first headers record it; journals of
// different devices would fit one model to two machines, so they are refused.
// A cross-measurement measures each of its shapes with every configuration of a database; a
// search's own results rarely reach this many at one shape.
constexpr size_t kMinCrossConfigs = 8;

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

void set_add_measurements(CLI::App& db_cmd) {
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

nlohmann::json constants_json(const ModelConstants& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, member] : model_constant_fields()) j[name] = c.*member;
  return j;
}

void set_calibrate(CLI::App& db_cmd, const GlobalOptions& options) {
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

}  // namespace

void set_db_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand("db", "Inspect, merge and query tuned databases");
  cmd->require_subcommand(1);
  set_show(*cmd, options);
  set_merge(*cmd, options);
  set_lookup(*cmd, options);
  set_calibrate(*cmd, options);
  set_add_measurements(*cmd);
}

}  // namespace gemmtune::cli
