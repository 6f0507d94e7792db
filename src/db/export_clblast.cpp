// SPDX-License-Identifier: Apache-2.0
// Exports for CLBlast: its JSON device database, OverrideParameters calls, and the mapping of
// gemmtune's kernels and parameters to CLBlast's.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/text.hpp"
#include "src/db/export_internal.hpp"

namespace gemmtune {

using namespace export_detail;

namespace {

struct KernelMapping {
  const char* gemmtune_kernel;
  const char* clblast_kernel;
  const char* family;
  // Values CLBlast needs that the gemmtune kernel fixes implicitly.
  std::map<std::string, int64_t> fixed;
};

// gemmtune's xgemm is CLBlast's Xgemm restricted to GEMMK=0, KREG=1; the clblast-* templates
// describe CLBlast's own kernels and carry every parameter already.
const std::vector<KernelMapping>& mappings() {
  static const std::vector<KernelMapping> kMappings = {
      {"xgemm", "Xgemm", "xgemm", {{"GEMMK", 0}, {"KREG", 1}}},
      {"clblast-xgemm", "Xgemm", "xgemm", {}},
      {"xgemm_direct", "XgemmDirect", "xgemm_direct", {}},
      {"clblast-xgemm-direct", "XgemmDirect", "xgemm_direct", {}},
  };
  return kMappings;
}

// CLBlast's short vendor names, as its device database uses them.
std::string clblast_vendor(const std::string& vendor) {
  const std::string v = lower(vendor);
  if (v.find("nvidia") != std::string::npos) return "NVIDIA";
  if (v.find("advanced micro devices") != std::string::npos || v.find("amd") != std::string::npos) {
    return "AMD";
  }
  if (v.find("intel") != std::string::npos) return "Intel";
  if (v.find("arm") != std::string::npos) return "ARM";
  if (v.find("qualcomm") != std::string::npos) return "QUALCOMM";
  if (v.find("apple") != std::string::npos) return "Apple";
  return vendor;
}

// CLBlast's architecture string: "SM9.0" for NVIDIA, the gfx name for AMD, else empty.
std::string clblast_architecture(const DatabaseDevice& d) {
  const std::string p = lower(d.profile);
  if (p.rfind("sm_", 0) == 0 && p.size() >= 5) {
    const std::string digits = p.substr(3);
    return "SM" + digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
  }
  if (p.rfind("gfx", 0) == 0) return d.profile;
  if (lower(d.name).rfind("gfx", 0) == 0) return d.name.substr(0, d.name.find(':'));
  return "";
}

}  // namespace

namespace export_detail {

ExportResult export_clblast_json(const Database& db) {
  ExportResult r;
  std::set<std::string> names;
  for (const auto& e : db.entries()) {
    std::string why;
    auto p = to_clblast(e, &why);
    if (!p) {
      r.notes.push_back(e.key.to_string() + ": skipped (" + why + ")");
      continue;
    }
    if (e.status != Status::kOk) {
      r.notes.push_back(e.key.to_string() + ": skipped (status " + to_string(e.status) + ")");
      continue;
    }
    if (!p->left_out.empty()) {
      r.notes.push_back(e.key.to_string() + ": left out " + join(p->left_out, ", ") +
                        " (no CLBlast equivalent)");
    }
    // CLBlast's tuner names its file by kernel family and precision; the rest of the name keeps
    // one file per entry: the problem, and the gemmtune kernel where two share a family
    // (xgemm and clblast-xgemm).
    const std::string kernel = e.key.kernel == p->family ? "" : lower(ident(e.key.kernel)) + "_";
    const std::string name = fmt::format("clblast_{}_1_{}_{}{}.json", p->family, p->precision,
                                         kernel, problem_ident(e.key));
    r.files.push_back({name, clblast_tuner_json(db.device, e, *p).dump(2) + "\n"});
    // Every key part is in the name, so two entries never share a file; were they to, the second
    // would replace the first without a word.
    if (!names.insert(name).second) {
      throw Error(ErrorCode::kInternal, "two entries would be exported to one file " + name);
    }
  }
  return r;
}

ExportResult export_clblast_override(const Database& db, const std::string& source) {
  ExportResult r;
  std::ostringstream out;
  out << header_comment_lines(db, source, "// ");
  out << "// CLBlast keeps one parameter set per device, kernel and precision, whatever the "
         "shape:\n"
         "// call the function of the shape that matters most before the first clblast::Gemm of\n"
         "// that precision. CLBlast runs XgemmDirect below its GemmRoutine parameter\n"
         "// XGEMM_MIN_INDIRECT_SIZE and Xgemm above it.\n"
         "#pragma once\n\n#include <clblast.h>\n";
  size_t written = 0;
  for (const auto& e : db.entries()) {
    std::string why;
    auto p = to_clblast(e, &why);
    if (!p || e.status != Status::kOk) {
      r.notes.push_back(e.key.to_string() + ": skipped (" +
                        (p ? "status " + to_string(e.status) : why) + ")");
      continue;
    }
    out << "\n"
        << fmt::format("// {}: {:.1f} GFLOPS, {:.4f} ms", e.key.to_string(), e.gflops,
                       entry_time_ms(e));
    out << "\n";
    if (!p->left_out.empty()) {
      out << "// Left out (no CLBlast equivalent): " << join(p->left_out, ", ") << "\n";
      r.notes.push_back(e.key.to_string() + ": left out " + join(p->left_out, ", ") +
                        " (no CLBlast equivalent)");
    }
    if (!p->added.empty()) {
      out << "// Added as CLBlast requires: " << join(p->added, ", ") << "\n";
    }
    std::vector<std::string> pairs;
    for (const auto& [name, value] : p->parameters) {
      pairs.push_back(fmt::format("{{\"{}\", {}}}", name, value));
    }
    out << "inline clblast::StatusCode gemmtune_override_" << entry_ident(e.key)
        << "(cl_device_id device) {\n";
    out << "  return clblast::OverrideParameters(device, \"" << p->kernel
        << "\", clblast::Precision::" << p->precision_enum << ",\n";
    // Wrapped at four pairs a line to stay readable.
    out << "                                     {";
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (i) out << (i % 4 == 0 ? ",\n                                      " : ", ");
      out << pairs[i];
    }
    out << "});\n}\n";
    ++written;
  }
  // Nothing to override: no file, so that the caller says how to get an entry CLBlast can use.
  if (written > 0) r.files.push_back({"clblast_override.hpp", out.str()});
  return r;
}

}  // namespace export_detail

const std::vector<std::string>& clblast_parameter_names(const std::string& clblast_kernel) {
  // The names CLBlast 1.5's OverrideParameters requires for each kernel.
  static const std::vector<std::string> kXgemm = {
      "GEMMK", "KREG", "KWG", "KWI", "MDIMA", "MDIMC", "MWG", "NDIMB",
      "NDIMC", "NWG",  "SA",  "SB",  "STRM",  "STRN",  "VWM", "VWN"};
  static const std::vector<std::string> kDirect = {"KWID", "MDIMAD", "MDIMCD", "NDIMBD", "NDIMCD",
                                                   "PADA", "PADB",   "VWMD",   "VWND",   "WGD"};
  static const std::vector<std::string> kNone;
  if (clblast_kernel == "Xgemm") return kXgemm;
  if (clblast_kernel == "XgemmDirect") return kDirect;
  return kNone;
}

std::string clblast_export_hint() {
  std::vector<std::string> kernels;
  for (const auto& m : mappings()) kernels.push_back(m.gemmtune_kernel);
  return "only entries of " + join(kernels, ", ") +
         " have CLBlast equivalents: tune one with gemmtune search --kernel clblast-xgemm (or "
         "--kernel xgemm); the default search tunes xgemm_fast, which CLBlast does not have";
}

std::optional<ClblastParameters> to_clblast(const DatabaseEntry& entry, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<ClblastParameters> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const KernelMapping* mapping = nullptr;
  for (const auto& m : mappings()) {
    if (entry.key.kernel == m.gemmtune_kernel) mapping = &m;
  }
  if (!mapping) return fail("kernel " + entry.key.kernel + " has no CLBlast equivalent");
  ClblastParameters p;
  p.kernel = mapping->clblast_kernel;
  p.family = mapping->family;
  switch (entry.key.precision) {
    case Precision::kFP32:
      p.precision = "32", p.precision_enum = "kSingle";
      break;
    case Precision::kFP64:
      p.precision = "64", p.precision_enum = "kDouble";
      break;
    case Precision::kFP16:
      p.precision = "16", p.precision_enum = "kHalf";
      break;
    case Precision::kFP16Acc32:
      return fail("CLBlast has no fp16 GEMM with fp32 accumulation");
  }
  const auto& names = clblast_parameter_names(p.kernel);
  for (const auto& [name, value] : entry.parameters) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      p.left_out.push_back(name);
      continue;
    }
    if (value < 0) return fail("parameter " + name + " is negative");
    p.parameters[name] = value;
  }
  for (const auto& [name, value] : mapping->fixed) {
    auto it = p.parameters.find(name);
    if (it != p.parameters.end() && it->second != value) {
      return fail(name + "=" + std::to_string(it->second) + " differs from the CLBlast kernel's " +
                  std::to_string(value));
    }
    if (it == p.parameters.end()) {
      p.parameters[name] = value;
      p.added.push_back(name + "=" + std::to_string(value));
    }
  }
  std::vector<std::string> missing;
  for (const auto& n : names) {
    if (!p.parameters.count(n)) missing.push_back(n);
  }
  if (!missing.empty()) return fail("CLBlast needs " + join(missing, ", ") + ", which are absent");
  return p;
}

nlohmann::ordered_json clblast_tuner_json(const DatabaseDevice& device, const DatabaseEntry& entry,
                                          const ClblastParameters& params) {
  // The parameters with PRECISION, sorted by name as CLBlast's tuner prints them.
  std::map<std::string, int64_t> with_precision = params.parameters;
  with_precision["PRECISION"] = std::stoll(params.precision);
  std::string best;
  nlohmann::ordered_json pj = nlohmann::ordered_json::object();
  for (const auto& [name, value] : with_precision) {
    best += (best.empty() ? "" : " ") + name + "=" + std::to_string(value);
    pj[name] = value;
  }
  std::string type = upper(device.type.empty() ? std::string("gpu") : device.type);
  const std::string arch = clblast_architecture(device);
  const double time_ms = entry_time_ms(entry);
  nlohmann::ordered_json j;
  j["kernel_family"] = params.family + "_1";
  j["precision"] = params.precision;
  j["best_kernel"] = params.kernel;
  j["best_time"] = fmt::format("{:.2f}", time_ms);
  j["best_parameters"] = best;
  j["arg_m"] = std::to_string(entry.key.shape.m);
  j["arg_n"] = std::to_string(entry.key.shape.n);
  j["arg_k"] = std::to_string(entry.key.shape.k);
  j["arg_alpha"] = fmt::format("{:.2f}", entry.alpha);
  j["arg_beta"] = fmt::format("{:.2f}", entry.beta);
  j["clblast_device_type"] = type;
  j["clblast_device_vendor"] = clblast_vendor(device.vendor);
  j["clblast_device_architecture"] = arch;
  j["clblast_device_name"] = device.name;
  j["device"] = device.name;
  // The database keeps the device's vendor, not the platform's; they agree on GPU drivers.
  j["platform_vendor"] = device.vendor;
  j["platform_version"] = device.platform_version;
  j["device_vendor"] = device.vendor;
  j["device_type"] = type;
  j["device_core_clock"] = std::to_string(device.max_clock_mhz);
  j["device_compute_units"] = std::to_string(device.compute_units);
  j["device_extra_info"] = arch;
  nlohmann::ordered_json result;
  result["kernel"] = params.kernel;
  result["time"] = time_ms;
  result["parameters"] = pj;
  j["results"] = nlohmann::ordered_json::array({result});
  return j;
}

CompilerOptions register_cap_options(const std::string& templates_dir,
                                     const DeviceProfile* profile) {
  if (!profile || profile->register_cap_method == RegisterCapMethod::kNone) return {};
  // The profile's method as the evaluators apply it: the option with the value, or the define
  // that makes the template declare the cap as an attribute.
  DeviceLimits limits = device_limits(DeviceInfo{}, profile);
  // Declarations are read once per kernel; a kernel without one exports no options.
  auto specs = std::make_shared<std::map<std::string, std::optional<KernelSpec>>>();
  return [templates_dir, limits, specs](const DatabaseEntry& e) -> std::string {
    auto it = specs->find(e.key.kernel);
    if (it == specs->end()) {
      const auto path = std::filesystem::path(templates_dir) / (e.key.kernel + ".json");
      std::error_code ec;
      std::optional<KernelSpec> spec;
      if (std::filesystem::exists(path, ec)) spec = KernelSpec::load(path.string());
      it = specs->emplace(e.key.kernel, std::move(spec)).first;
    }
    return it->second ? it->second->register_cap_option(e.parameters, limits) : "";
  };
}

}  // namespace gemmtune
