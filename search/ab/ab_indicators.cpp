// SPDX-License-Identifier: Apache-2.0
// The bottleneck indicators recorded beside each A/B decision (search/ab/ab_protocol.hpp).
#include "search/ab/ab_protocol.hpp"
#include "src/db/database.hpp"
#include "src/report/report.hpp"

namespace gemmtune {

// ---- bottleneck indicators ----

std::optional<double> Indicators::get(const std::string& name) const {
  for (const auto& i : items) {
    if (i.name == name) return i.value;
  }
  return std::nullopt;
}

IndicatorFunction report_indicator_function(const KernelSpec& spec, const DeviceProfile* profile,
                                            const DatabaseDevice& device) {
  return [&spec, profile, device](const Problem& problem, const Configuration& config,
                                  const Result* measured) {
    Result r;
    if (measured) {
      r = *measured;
    } else {
      r.config = config;
    }
    const DatabaseEntry entry = DatabaseEntry::from_result(spec.name(), problem, r, Provenance{});
    const EntryReport report = analyze_entry(entry, &spec, profile, device);
    Indicators out;
    out.source = "bottleneck report";
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    if (auto wg = spec.work_group_size(config, ctx)) {
      out.items.push_back({"work_group_size", static_cast<double>(*wg), std::to_string(*wg)});
    }
    for (const auto& item : report.items) {
      if (!item.value) continue;
      std::string text = item.value_text;
      if (item.verdict != Verdict::kUnknown) text += " [" + to_string(item.verdict) + "]";
      out.items.push_back({item.id, *item.value, text});
    }
    return out;
  };
}

}  // namespace gemmtune
