// SPDX-License-Identifier: Apache-2.0
#include "src/report/report.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "src/core/error.hpp"
#include "src/report/report_checks.hpp"

namespace gemmtune {


std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kWarn:
      return "warn";
    case Verdict::kBad:
      return "bad";
    case Verdict::kUnknown:
      return "n/a";
  }
  return "n/a";
}

const ReportItem* EntryReport::item(const std::string& id) const {
  for (const auto& i : items) {
    if (i.id == id) return &i;
  }
  return nullptr;
}

std::optional<double> peak_gflops(const DeviceProfile& profile, Precision precision,
                                  const DatabaseDevice& device) {
  return peak_gflops(profile, precision, device.compute_units, device.max_clock_mhz);
}

EntryReport analyze_entry(const DatabaseEntry& entry, const KernelSpec* spec,
                          const DeviceProfile* profile, const DatabaseDevice& device) {
  EntryReport r;
  r.key = entry.key;
  r.gflops = entry.gflops;
  r.parameters = entry.parameters;
  // Estimates need every parameter the template knows; an entry written by an older template
  // gets the defaults for what it lacks (said in the notes), and one with names the template no
  // longer has gets no estimates at all.
  Configuration params = entry.parameters;
  const bool had_spec = spec != nullptr;
  if (spec) {
    std::vector<std::string> missing;
    for (const auto& p : spec->parameters()) {
      if (!params.count(p.name)) missing.push_back(p.name);
    }
    try {
      params = spec->complete(entry.parameters);
      if (!missing.empty()) {
        std::string names;
        for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
        r.notes.push_back("parameters missing from the entry, estimated with template defaults: " +
                          names);
      }
    } catch (const Error& e) {
      r.notes.push_back(std::string("parameters do not match the kernel spec (") + e.what() +
                        "): estimates skipped");
      spec = nullptr;
    }
  }
  if (!had_spec) {
    r.notes.push_back("no kernel spec for " + entry.key.kernel +
                      ": estimates skipped; tile, work-item and vector sizes read by the "
                      "conventional parameter names");
  }
  if (!profile) r.notes.push_back("no device profile: device figures unknown");
  if (entry.status != Status::kOk) {
    r.notes.push_back("entry status is " + to_string(entry.status) + ": " + entry.message);
  }
  namespace checks = report_checks;
  const checks::EntryFacts facts(entry, spec, profile, device, std::move(params));
  for (const auto check :
       {checks::lds_check, checks::registers_check, checks::occupancy_check,
        checks::wave_utilization_check, checks::work_per_thread_check, checks::vector_width_check,
        checks::bound_check, checks::parallelism_check, checks::peak_check}) {
    r.items.push_back(check(facts));
  }
  return r;
}

DatabaseReport analyze_database(const Database& db, const std::string& templates_dir,
                                const DeviceProfile* profile) {
  DatabaseReport report;
  report.device = db.device;
  report.profile = profile ? profile->name : "";
  std::map<std::string, std::optional<KernelSpec>> specs;
  std::map<std::string, std::string> spec_errors;
  for (const auto& e : db.entries()) {
    auto it = specs.find(e.key.kernel);
    if (it == specs.end()) {
      std::optional<KernelSpec> spec;
      const std::string path = templates_dir + "/" + e.key.kernel + ".json";
      try {
        if (std::filesystem::exists(path))
          spec = KernelSpec::load(path);
        else
          spec_errors[e.key.kernel] = "no kernel spec " + path;
      } catch (const Error& err) {
        spec_errors[e.key.kernel] = err.what();
      }
      it = specs.emplace(e.key.kernel, std::move(spec)).first;
    }
    auto entry = analyze_entry(e, it->second ? &*it->second : nullptr, profile, db.device);
    if (auto err = spec_errors.find(e.key.kernel); err != spec_errors.end()) {
      entry.notes.push_back(err->second);
    }
    report.entries.push_back(std::move(entry));
  }
  return report;
}

}  // namespace gemmtune
