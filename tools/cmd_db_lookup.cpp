// SPDX-License-Identifier: Apache-2.0
// gemmtune db lookup: the configuration the library would choose for a problem, and why.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "src/api/choice.hpp"
#include "src/core/error.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/device/device_profile.hpp"
#include "src/select/chooser.hpp"
#include "src/select/policy.hpp"
#include "src/select/selection.hpp"
#include "tools/cmd_db.hpp"

namespace gemmtune::cli {

namespace {

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

}  // namespace

void set_db_lookup(CLI::App& db_cmd, const GlobalOptions& options) {
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

}  // namespace gemmtune::cli
