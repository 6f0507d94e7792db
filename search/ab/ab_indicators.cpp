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

Indicators spec_indicators(const KernelSpec& spec, const Problem& problem,
                           const Configuration& config, const Result* measured) {
  Indicators out;
  out.source = "kernel spec estimate";
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  auto add = [&](const std::string& name, std::optional<int64_t> v) {
    if (v) out.items.push_back({name, static_cast<double>(*v), std::to_string(*v)});
  };
  add("lds_bytes", spec.local_mem_bytes(config, ctx));
  add("work_group_size", spec.work_group_size(config, ctx));
  add("registers_estimate", spec.registers(config, ctx));
  const auto mwi = spec.role(Role::kRegisterTileM, config, ctx),
             nwi = spec.role(Role::kRegisterTileN, config, ctx);
  if (mwi && nwi) add("outputs_per_work_item", *mwi * *nwi);
  // The vector-width product: of the vector roles the template declares.
  std::optional<int64_t> vw;
  for (const Role role : {Role::kVectorM, Role::kVectorN}) {
    if (const auto v = spec.role(role, config, ctx)) vw = vw.value_or(1) * *v;
  }
  add("vector_width_product", vw);
  if (measured) {
    const auto& u = measured->usage;
    add("lds_bytes_measured", u.local_mem_bytes);
    add("private_bytes_measured", u.private_mem_bytes);
    add("registers_measured", u.registers);
    add("spills_measured", u.spills);
    if (!u.source.empty() && (u.local_mem_bytes || u.private_mem_bytes || u.registers)) {
      out.source += ", measured: " + u.source;
    }
  }
  return out;
}

IndicatorFunction spec_indicator_function(const KernelSpec& spec) {
  return [&spec](const Problem& p, const Configuration& c, const Result* r) {
    return spec_indicators(spec, p, c, r);
  };
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
    const DatabaseEntry entry = DatabaseEntry::from_result(problem, r, Provenance{});
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
