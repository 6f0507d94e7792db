// SPDX-License-Identifier: Apache-2.0
#include <sstream>

#include <fmt/format.h>

#include "src/report/report.hpp"

namespace gemmtune {

namespace {

std::string md_cell(std::string s) {
  for (size_t p = 0; (p = s.find('|', p)) != std::string::npos; p += 2) s.replace(p, 1, "\\|");
  return s;
}

}  // namespace

std::string to_markdown(const DatabaseReport& report) {
  std::ostringstream out;
  out << "# Bottleneck report: " << report.device.name << "\n\n";
  out << fmt::format("Device {} ({}), driver {}, {} compute units at {} MHz. ", report.device.name,
                     report.device.vendor, report.device.driver_version,
                     report.device.compute_units, report.device.max_clock_mhz);
  out << (report.profile.empty() ? std::string("No device profile matched: device figures are "
                                               "unknown.")
                                 : "Device figures from profile " + report.profile + ".")
      << "\n\n";
  out << "Verdicts: ok, warn (worth a look), bad (a likely bottleneck), n/a (cannot tell). "
         "\"estimate\" values come from the kernel spec's formulas, \"measured\" ones from the "
         "driver.\n";
  for (const auto& e : report.entries) {
    out << "\n## " << e.key.to_string() << "\n\n";
    out << fmt::format("{:.1f} GFLOPS with {}\n\n", e.gflops, to_string(e.parameters));
    out << "| check | value | target | verdict | basis |\n";
    out << "| --- | --- | --- | --- | --- |\n";
    for (const auto& i : e.items) {
      std::string value = i.value_text;
      if (!i.note.empty()) value += " — " + i.note;
      out << "| " << md_cell(i.title) << " | " << md_cell(value) << " | " << md_cell(i.target)
          << " | " << (i.verdict == Verdict::kBad ? "**bad**" : to_string(i.verdict)) << " | "
          << md_cell(i.basis) << " |\n";
    }
    for (const auto& n : e.notes) out << "\n- " << n;
    if (!e.notes.empty()) out << "\n";
  }
  if (report.entries.empty()) out << "\nThe database has no entries.\n";
  return out.str();
}

void to_json(nlohmann::json& j, const ReportItem& item) {
  j = {{"id", item.id},
       {"title", item.title},
       {"value_text", item.value_text},
       {"target", item.target},
       {"verdict", to_string(item.verdict)},
       {"basis", item.basis},
       {"note", item.note}};
  j["value"] = item.value ? nlohmann::json(*item.value) : nlohmann::json(nullptr);
}

void to_json(nlohmann::json& j, const EntryReport& entry) {
  j = {{"key", entry.key},
       {"gflops", entry.gflops},
       {"parameters", configuration_to_json(entry.parameters)},
       {"items", entry.items},
       {"notes", entry.notes}};
}

void to_json(nlohmann::json& j, const DatabaseReport& report) {
  j = {{"device", report.device}, {"profile", report.profile}, {"entries", report.entries}};
}

}  // namespace gemmtune
