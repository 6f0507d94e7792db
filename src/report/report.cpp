#include "src/report/report.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/expression.hpp"

namespace gemmtune {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

std::string kib(double bytes) { return fmt::format("{:.1f} KiB", bytes / 1024.0); }

bool is_cpu(const DeviceProfile& p, const DatabaseDevice& d) {
  return p.match_type == "cpu" || d.type == "cpu";
}

// Reads values of a configuration the same way for every template: an optional "report" block
// in the template json maps a name to an expression; otherwise the spec's parameters and derived
// values; without a spec, the entry's parameters.
class Values {
 public:
  Values(const KernelSpec* spec, const Configuration& config, Context context)
      : spec_(spec), config_(config), context_(std::move(context)) {}

  std::optional<int64_t> get(const std::string& name) const {
    if (spec_ && spec_->raw().contains("report") && spec_->raw()["report"].is_object()) {
      const auto& r = spec_->raw()["report"];
      if (r.contains(name) && r[name].is_string()) {
        try {
          return spec_->evaluate(Expression::parse(r[name].get<std::string>()), config_, context_);
        } catch (const Error&) {
          return std::nullopt;
        }
      }
    }
    if (auto it = config_.find(name); it != config_.end()) return it->second;
    if (auto it = context_.find(name); it != context_.end()) return it->second;
    if (!spec_) return std::nullopt;
    try {
      return spec_->value_of(name, config_, context_);
    } catch (const Error&) {
      return std::nullopt;  // not a name this template knows
    }
  }

  // Work per work-item along one dimension: the derived value, else tile / threads.
  std::optional<int64_t> per_thread(const std::string& derived, const std::string& tile,
                                    const std::string& threads) const {
    if (auto v = get(derived)) return v;
    auto t = get(tile), d = get(threads);
    if (t && d && *d > 0) return *t / *d;
    return std::nullopt;
  }

 private:
  const KernelSpec* spec_;
  const Configuration& config_;
  Context context_;
};

ReportItem unknown_item(const std::string& id, const std::string& title, const std::string& why) {
  ReportItem item;
  item.id = id;
  item.title = title;
  item.value_text = "n/a";
  item.verdict = Verdict::kUnknown;
  item.note = why;
  return item;
}

std::string md_cell(std::string s) {
  for (size_t p = 0; (p = s.find('|', p)) != std::string::npos; p += 2) s.replace(p, 1, "\\|");
  return s;
}

}  // namespace

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kOk: return "ok";
    case Verdict::kWarn: return "warn";
    case Verdict::kBad: return "bad";
    case Verdict::kUnknown: return "n/a";
  }
  return "n/a";
}

const ReportItem* EntryReport::item(const std::string& id) const {
  for (const auto& i : items) {
    if (i.id == id) return &i;
  }
  return nullptr;
}

Occupancy estimate_occupancy(const DeviceProfile& profile, int64_t registers, int64_t lds_bytes,
                             int64_t work_group_size, int64_t wavefront) {
  Occupancy o;
  o.wavefront = wavefront > 0 ? wavefront
                              : (profile.wavefront_sizes.empty() ? 1 : profile.wavefront_sizes[0]);
  o.max_waves = static_cast<int64_t>(profile.figure("max_waves_per_simd"));
  const auto granule = std::max<int64_t>(1, static_cast<int64_t>(profile.figure("register_granularity")));
  const auto file = static_cast<int64_t>(profile.figure("registers_per_simd_lane"));
  o.allocated_registers = ceil_div(std::max<int64_t>(registers, 1), granule) * granule;
  o.waves_by_registers = std::min(o.max_waves, file / o.allocated_registers);
  o.waves_by_lds = o.max_waves;
  if (lds_bytes > 0) {
    // Work-groups that fit in one CU's LDS, each bringing its waves, spread over the SIMDs.
    const auto lds_cu = static_cast<int64_t>(profile.figure("lds_per_cu_bytes"));
    const auto simds = std::max<int64_t>(1, static_cast<int64_t>(profile.figure("simds_per_cu")));
    const int64_t groups = lds_cu / lds_bytes;
    const int64_t waves_per_group = ceil_div(std::max<int64_t>(work_group_size, 1), o.wavefront);
    o.waves_by_lds = std::min(o.max_waves, groups * waves_per_group / simds);
  }
  o.waves = std::min({o.waves_by_registers, o.waves_by_lds, o.max_waves});
  if (o.waves == o.max_waves) {
    o.limiter = "hardware";
  } else if (o.waves_by_registers <= o.waves_by_lds) {
    o.limiter = "registers";
  } else {
    o.limiter = "LDS";
  }
  return o;
}

std::optional<double> peak_gflops(const DeviceProfile& profile, Precision precision,
                                  const DatabaseDevice& device) {
  auto computed_fp32 = [&]() -> std::optional<double> {
    const double fp32 = profile.figure_if("peak_fp32_gflops").value_or(0);
    if (fp32 > 0) return fp32;
    const auto per_cycle = profile.figure_if("fp32_flops_per_cycle_per_cu");
    double cus = device.compute_units, mhz = device.max_clock_mhz;
    if (cus <= 0) cus = profile.figure_if("compute_units").value_or(0);
    if (mhz <= 0) mhz = profile.figure_if("boost_clock_mhz").value_or(0);
    if (!per_cycle || cus <= 0 || mhz <= 0) return std::nullopt;
    return cus * mhz * *per_cycle / 1000.0;
  };
  switch (precision) {
    case Precision::kFP32: return computed_fp32();
    case Precision::kFP16:
    case Precision::kFP16Acc32: {
      const double fp16 = profile.figure_if("peak_fp16_gflops").value_or(0);
      if (fp16 > 0) return fp16;
      return computed_fp32();  // no packed FP16 rate known: FP16 runs at the FP32 rate
    }
    case Precision::kFP64: {
      const double fp64 = profile.figure_if("peak_fp64_gflops").value_or(0);
      if (fp64 > 0) return fp64;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

EntryReport analyze_entry(const DatabaseEntry& entry, const KernelSpec* spec,
                          const DeviceProfile* profile, const DatabaseDevice& device) {
  EntryReport r;
  r.key = entry.key;
  r.gflops = entry.gflops;
  r.parameters = entry.parameters;
  const int64_t elem = element_bytes(entry.key.precision);
  const Context ctx{{"ELEM_BYTES", elem}};
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
  Values values(spec, params, ctx);
  const std::string measured =
      "measured (" + (entry.usage.source.empty() ? std::string("driver") : entry.usage.source) + ")";
  const std::string estimate = "estimate (kernel spec)";
  if (!had_spec) r.notes.push_back("no kernel spec for " + entry.key.kernel + ": estimates skipped");
  if (!profile) r.notes.push_back("no device profile: device figures unknown");
  if (entry.status != Status::kOk) {
    r.notes.push_back("entry status is " + to_string(entry.status) + ": " + entry.message);
  }
  const bool cpu = profile && is_cpu(*profile, device);

  // Local memory per work-group.
  std::optional<int64_t> lds;
  std::string lds_basis;
  if (entry.usage.local_mem_bytes) {
    lds = *entry.usage.local_mem_bytes;
    lds_basis = measured;
  } else if (spec) {
    lds = spec->local_mem_bytes(params, ctx);
    lds_basis = estimate;
  }
  {
    ReportItem item;
    item.id = "lds";
    item.title = "Local memory (LDS) per work-group";
    if (!lds) {
      item = unknown_item(item.id, item.title, "no measurement and no local_memory_bytes formula");
    } else {
      item.value = static_cast<double>(*lds);
      item.value_text = kib(static_cast<double>(*lds));
      item.basis = lds_basis;
      if (profile) {
        const double per_wg = profile->figure("lds_per_workgroup_bytes");
        const double per_cu = profile->figure("lds_per_cu_bytes");
        item.target = fmt::format("<= {} per work-group; <= {} leaves room for 2 work-groups/CU",
                                  kib(per_wg), kib(per_cu / 2));
        item.verdict = *lds > per_wg ? Verdict::kBad
                       : *lds > per_cu / 2 ? Verdict::kWarn
                                           : Verdict::kOk;
        if (*lds > 0) {
          item.note = fmt::format("{} work-group(s) per CU by LDS",
                                  static_cast<int64_t>(per_cu / static_cast<double>(*lds)));
        }
      }
    }
    r.items.push_back(item);
  }

  // Registers per work-item.
  std::optional<int64_t> regs;
  std::string regs_basis;
  if (entry.usage.registers) {
    regs = *entry.usage.registers;
    regs_basis = measured;
  } else if (spec) {
    regs = spec->registers(params, ctx);
    regs_basis = estimate;
  }
  {
    ReportItem item;
    item.id = "registers";
    item.title = "Registers per work-item";
    if (!regs) {
      item = unknown_item(item.id, item.title, "no measurement and no registers formula");
    } else {
      item.value = static_cast<double>(*regs);
      item.value_text = std::to_string(*regs) + " registers";
      item.basis = regs_basis;
      const bool spills = entry.usage.spills && *entry.usage.spills > 0;
      if (spills) item.note = fmt::format("{} spilled", *entry.usage.spills);
      if (profile) {
        const auto max_regs = static_cast<int64_t>(profile->figure("max_registers_per_thread"));
        const auto file = static_cast<int64_t>(profile->figure("registers_per_simd_lane"));
        const auto granule =
            std::max<int64_t>(1, static_cast<int64_t>(profile->figure("register_granularity")));
        if (cpu || max_regs == 0) {
          item.target = fmt::format("<= {} vector registers (more spill to cache)", file);
          item.verdict = spills ? Verdict::kBad : *regs > file ? Verdict::kWarn : Verdict::kOk;
        } else {
          // The most registers that still let 4 waves share a SIMD.
          const int64_t for_four = (file / 4) / granule * granule;
          item.target = fmt::format("<= {} (hardware limit); <= {} for 4 waves/SIMD", max_regs,
                                    std::min(for_four, max_regs));
          item.verdict = (spills || *regs > max_regs) ? Verdict::kBad
                         : *regs > for_four           ? Verdict::kWarn
                                                      : Verdict::kOk;
        }
      } else if (spills) {
        item.verdict = Verdict::kBad;
      }
    }
    r.items.push_back(item);
  }

  // Work-group size and the wavefront.
  std::optional<int64_t> wg;
  if (spec) wg = spec->work_group_size(params, ctx);
  if (!wg) {
    auto mc = values.get("MDIMC"), nc = values.get("NDIMC");
    if (mc && nc) wg = *mc * *nc;
  }
  const int64_t wave =
      profile && !profile->wavefront_sizes.empty() ? profile->wavefront_sizes.front() : 0;

  // Occupancy.
  {
    const std::string id = "occupancy", title = "Occupancy (waves per SIMD)";
    if (!profile) {
      r.items.push_back(unknown_item(id, title, "needs a device profile"));
    } else if (!regs || !lds || !wg) {
      r.items.push_back(unknown_item(id, title, "needs registers, LDS and work-group size"));
    } else {
      const auto o = estimate_occupancy(*profile, *regs, *lds, *wg);
      ReportItem item;
      item.id = id;
      item.title = title;
      item.value = static_cast<double>(o.waves);
      item.value_text = fmt::format("{} of {} (limited by {})", o.waves, o.max_waves, o.limiter);
      item.basis = (regs_basis == measured || lds_basis == measured ? "from measured figures"
                                                                     : "from estimates") +
                   std::string(" and the profile");
      item.note = fmt::format(
          "registers allocated {} (granule {}) allow {} waves; LDS allows {}; wave{}",
          o.allocated_registers, static_cast<int64_t>(profile->figure("register_granularity")),
          o.waves_by_registers, o.waves_by_lds, o.wavefront);
      if (cpu) {
        item.target = "not meaningful on a CPU device";
        item.verdict = Verdict::kUnknown;
      } else {
        const int64_t want = std::min<int64_t>(4, o.max_waves);
        item.target = fmt::format(">= {} waves to hide memory latency", want);
        item.verdict = o.waves >= want ? Verdict::kOk
                       : o.waves >= 2  ? Verdict::kWarn
                                       : Verdict::kBad;
      }
      r.items.push_back(item);
    }
  }

  // Wave utilization: lanes of the last, partial wave of a work-group are wasted.
  {
    const std::string id = "wave_utilization", title = "Wave utilization";
    if (!wg || wave <= 0) {
      r.items.push_back(unknown_item(id, title, "needs the work-group size and a wavefront size"));
    } else {
      ReportItem item;
      item.id = id;
      item.title = title;
      const int64_t lanes = ceil_div(*wg, wave) * wave;
      const double util = static_cast<double>(*wg) / static_cast<double>(lanes);
      item.value = util * 100;
      item.value_text = fmt::format("{:.0f} % ({} work-items in {} wave(s) of {})", util * 100,
                                    *wg, ceil_div(*wg, wave), wave);
      item.target = fmt::format("100 %: work-group size a multiple of {}", wave);
      item.basis = "kernel spec and profile";
      item.verdict = util >= 1.0 ? Verdict::kOk : util >= 0.5 ? Verdict::kWarn : Verdict::kBad;
      r.items.push_back(item);
    }
  }

  // Outputs computed per work-item: register tiling amortizes each load over this many FMAs.
  const auto mwi = values.per_thread("MWI", "MWG", "MDIMC");
  const auto nwi = values.per_thread("NWI", "NWG", "NDIMC");
  {
    const std::string id = "work_per_thread", title = "Outputs per work-item (MWI x NWI)";
    if (!mwi || !nwi) {
      r.items.push_back(unknown_item(id, title, "the template declares no MWI/NWI-like values"));
    } else {
      ReportItem item;
      item.id = id;
      item.title = title;
      const int64_t outputs = *mwi * *nwi;
      item.value = static_cast<double>(outputs);
      item.value_text = fmt::format("{} ({} x {})", outputs, *mwi, *nwi);
      item.target = ">= 16 outputs per work-item";
      item.basis = spec ? "kernel spec" : "parameters";
      item.verdict = outputs >= 16 ? Verdict::kOk : outputs >= 4 ? Verdict::kWarn : Verdict::kBad;
      r.items.push_back(item);
    }
  }

  // Vector width of loads and stores.
  {
    const std::string id = "vector_width", title = "Vector width (VWM x VWN)";
    auto vwm = values.get("VWM"), vwn = values.get("VWN");
    if (!vwm || !vwn) {
      r.items.push_back(unknown_item(id, title, "the template declares no VWM/VWN-like values"));
    } else {
      ReportItem item;
      item.id = id;
      item.title = title;
      const int64_t width = *vwm * *vwn;
      item.value = static_cast<double>(width);
      item.value_text = fmt::format("{} ({} x {}; {} and {} bytes per access)", width, *vwm, *vwn,
                                    *vwm * elem, *vwn * elem);
      item.target = ">= 4 (wide loads along M and N)";
      item.basis = spec ? "kernel spec" : "parameters";
      item.verdict = width >= 4 ? Verdict::kOk : Verdict::kWarn;
      r.items.push_back(item);
    }
  }

  // Memory- or compute-bound: FLOPs per byte loaded for one work-group tile,
  // 2*MWG*NWG*KWG / (ELEM_BYTES*KWG*(MWG+NWG)), against the profile's ridge point.
  const auto peak = profile ? peak_gflops(*profile, entry.key.precision, device) : std::nullopt;
  {
    const std::string id = "bound", title = "Arithmetic intensity of the tile";
    auto mwg = values.get("MWG"), nwg = values.get("NWG"), kwg = values.get("KWG");
    if (!mwg || !nwg || *mwg + *nwg <= 0) {
      r.items.push_back(unknown_item(id, title, "the template declares no MWG/NWG-like values"));
    } else {
      const double k = kwg ? static_cast<double>(*kwg) : 1.0;
      const double ai = 2.0 * *mwg * *nwg * k / (static_cast<double>(elem) * k * (*mwg + *nwg));
      ReportItem item;
      item.id = id;
      item.title = title;
      item.value = ai;
      item.basis = "kernel spec and profile";
      const auto bw = profile ? profile->figure_if("memory_bandwidth_gbs") : std::nullopt;
      if (peak && bw && *bw > 0) {
        const double ridge = *peak / *bw;
        const bool compute = ai >= ridge;
        item.value_text = fmt::format("{:.1f} FLOP/byte: {}-bound", ai,
                                      compute ? "compute" : "memory");
        item.target = fmt::format(">= {:.1f} FLOP/byte (ridge: {:.0f} GFLOPS / {:.0f} GB/s)",
                                  ridge, *peak, *bw);
        item.verdict = compute ? Verdict::kOk : Verdict::kWarn;
        item.note = "global loads of one tile, ignoring reuse through caches";
      } else {
        item.value_text = fmt::format("{:.1f} FLOP/byte", ai);
        item.target = "needs peak GFLOPS and bandwidth of the profile";
      }
      r.items.push_back(item);
    }
  }

  // Work-groups against compute units: a small problem leaves units idle.
  {
    const std::string id = "parallelism", title = "Work-groups per compute unit";
    auto mwg = values.get("MWG"), nwg = values.get("NWG");
    const double cus = device.compute_units > 0
                           ? device.compute_units
                           : (profile ? profile->figure_if("compute_units").value_or(0) : 0);
    if (!mwg || !nwg || cus <= 0) {
      r.items.push_back(unknown_item(id, title, "needs MWG/NWG-like values and compute units"));
    } else {
      // Row-major problems run as their column-major transpose: the kernel's M is the problem's N.
      const bool row = entry.key.order == Order::kRowMajor;
      const int64_t km = row ? entry.key.shape.n : entry.key.shape.m;
      const int64_t kn = row ? entry.key.shape.m : entry.key.shape.n;
      const int64_t groups = ceil_div(km, *mwg) * ceil_div(kn, *nwg) * entry.key.batch;
      ReportItem item;
      item.id = id;
      item.title = title;
      item.value = groups / cus;
      item.value_text = fmt::format("{:.2f} ({} work-groups, {} CUs)", groups / cus, groups,
                                    static_cast<int64_t>(cus));
      item.target = ">= 2 work-groups per CU";
      item.basis = "shape and tile";
      item.verdict = groups >= 2 * cus ? Verdict::kOk
                     : groups >= cus   ? Verdict::kWarn
                                       : Verdict::kBad;
      r.items.push_back(item);
    }
  }

  // Fraction of the profile's peak.
  {
    const std::string id = "peak", title = "Fraction of peak";
    if (!peak || *peak <= 0) {
      r.items.push_back(unknown_item(id, title, "the profile gives no peak for this precision"));
    } else {
      ReportItem item;
      item.id = id;
      item.title = title;
      item.value = entry.gflops / *peak * 100;
      item.value_text = fmt::format("{:.1f} % ({:.1f} of {:.0f} GFLOPS)", *item.value,
                                    entry.gflops, *peak);
      item.target = ">= 50 % of peak";
      item.basis = "measured GFLOPS and profile peak";
      item.verdict = *item.value >= 50 ? Verdict::kOk
                     : *item.value >= 20 ? Verdict::kWarn
                                         : Verdict::kBad;
      r.items.push_back(item);
    }
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
        if (std::filesystem::exists(path)) spec = KernelSpec::load(path);
        else spec_errors[e.key.kernel] = "no kernel spec " + path;
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

std::string to_markdown(const DatabaseReport& report) {
  std::ostringstream out;
  out << "# Bottleneck report: " << report.device.name << "\n\n";
  out << fmt::format("Device {} ({}), driver {}, {} compute units at {} MHz. ",
                     report.device.name, report.device.vendor, report.device.driver_version,
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
  j = {{"id", item.id},         {"title", item.title},   {"value_text", item.value_text},
       {"target", item.target}, {"verdict", to_string(item.verdict)},
       {"basis", item.basis},   {"note", item.note}};
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
