#include "src/report/report.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "src/core/error.hpp"
#include "src/report/report_checks.hpp"

namespace gemmtune {

using report_checks::ceil_div;

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

Occupancy estimate_occupancy(const DeviceProfile& profile, int64_t registers, int64_t lds_bytes,
                             int64_t work_group_size, int64_t wavefront) {
  Occupancy o;
  o.wavefront = wavefront > 0 ? wavefront
                              : (profile.wavefront_sizes.empty() ? 1 : profile.wavefront_sizes[0]);
  o.max_waves = static_cast<int64_t>(profile.figure("max_waves_per_simd"));
  const auto granule =
      std::max<int64_t>(1, static_cast<int64_t>(profile.figure("register_granularity")));
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
    case Precision::kFP32:
      return computed_fp32();
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
  if (!had_spec)
    r.notes.push_back("no kernel spec for " + entry.key.kernel + ": estimates skipped");
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
