// SPDX-License-Identifier: Apache-2.0
#include "src/device/device_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/int_math.hpp"
#include "src/core/json_util.hpp"
#include "src/core/text.hpp"
#include "src/device/device.hpp"

namespace gemmtune {

namespace {

// a / b rounded up; 0 for a divisor that is not positive (a figure the profile lacks).
bool contains_ci(const std::string& haystack, const std::string& needle) {
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

// `needle` in `text`, case-insensitive; with `whole_words` only an occurrence that no letter or
// digit adjoins on either side.
bool contains_name(const std::string& text, const std::string& needle, bool whole_words) {
  if (!whole_words) return contains_ci(text, needle);
  const std::string t = lower(text), n = lower(needle);
  if (n.empty()) return false;
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (size_t at = t.find(n); at != std::string::npos; at = t.find(n, at + 1)) {
    const size_t end = at + n.size();
    if ((at == 0 || !word(t[at - 1])) && (end == t.size() || !word(t[end]))) return true;
  }
  return false;
}

// Whether one of a device's names (CL_DEVICE_NAME, the AMD board name) names the profile. A model
// is not named by a name that lists several cards: a '/' before any '(' (PCI-database and libdrm
// names join the cards of one chip so; Mesa's driver details follow the '(').
bool names_profile(const DeviceProfile& p, const std::vector<std::string>& device_names) {
  return std::any_of(device_names.begin(), device_names.end(), [&](const std::string& name) {
    if (!p.model.empty() && name.substr(0, name.find('(')).find('/') != std::string::npos) {
      return false;
    }
    return std::any_of(p.name_contains.begin(), p.name_contains.end(),
                       [&](const std::string& n) { return contains_name(name, n, p.whole_words); });
  });
}

std::vector<std::string> names_of(const DeviceInfo& device) {
  std::vector<std::string> names = {device.name};
  if (!device.board_name.empty()) names.push_back(device.board_name);
  return names;
}

std::vector<std::string> string_list(const nlohmann::json& j, const std::string& field,
                                     const std::string& origin) {
  std::vector<std::string> out;
  if (!j.contains(field)) return out;
  if (!j[field].is_array()) throw invalid_file(origin, "field '" + field + "' must be an array");
  for (const auto& v : j[field]) {
    if (!v.is_string()) throw invalid_file(origin, "field '" + field + "' must hold strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::map<std::string, Figure> figures_from_json(const nlohmann::json& j, const std::string& field,
                                                const std::string& origin) {
  if (!j.is_object()) throw invalid_file(origin, "field '" + field + "' must be an object");
  std::map<std::string, Figure> out;
  for (const auto& [key, fj] : j.items()) {
    const std::string name = field + "." + key;
    if (!fj.is_object() || !fj.contains("value") || !fj["value"].is_number()) {
      throw invalid_file(origin, "field '" + name + ".value' must be a number");
    }
    if (!fj.contains("source") || !fj["source"].is_string() ||
        fj["source"].get<std::string>().empty()) {
      throw invalid_file(origin, "field '" + name + ".source' must name a public source");
    }
    if (fj["value"].get<double>() < 0)
      throw invalid_file(origin, "field '" + name + "' is negative");
    out[key] = Figure{fj["value"].get<double>(), fj["source"].get<std::string>()};
  }
  return out;
}

std::vector<ProfileModel> models_from_json(const nlohmann::json& j, const std::string& origin) {
  std::vector<ProfileModel> out;
  if (!j.contains("models")) return out;
  if (!j["models"].is_array()) throw invalid_file(origin, "field 'models' must be an array");
  for (const auto& mj : j["models"]) {
    if (!mj.is_object()) throw invalid_file(origin, "field 'models' must hold objects");
    ProfileModel m;
    m.name = require_string(mj, "name", origin + " models");
    const std::string field = "models." + m.name;
    m.name_contains = string_list(mj, "name_contains", origin + " " + field);
    if (m.name_contains.empty()) {
      throw invalid_file(origin, "field '" + field + ".name_contains' must name the device");
    }
    if (mj.contains("priority") && !mj["priority"].is_number_integer()) {
      throw invalid_file(origin, "field '" + field + ".priority' must be an integer");
    }
    m.priority = mj.value("priority", 0);
    if (!mj.contains("figures"))
      throw invalid_file(origin, "missing field '" + field + ".figures'");
    m.figures = figures_from_json(mj["figures"], field + ".figures", origin);
    out.push_back(std::move(m));
  }
  return out;
}

constexpr const char* kRegisterCapField = "register_cap";
constexpr const char* kLegacyRegisterCapField = "register_cap_option";

// A compiler option the cap is appended to: it must look like one.
std::string cap_option(const nlohmann::json& o, const std::string& field,
                       const std::string& origin) {
  if (!o.is_string() || o.get<std::string>().empty() || o.get<std::string>().front() != '-') {
    throw invalid_file(origin, "field '" + field +
                                   "' must be a compiler option such as "
                                   "\"-cl-nv-maxrregcount=\" (the cap is appended to it)");
  }
  return o.get<std::string>();
}

// "register_cap": {"method": "build_option", "option": "-X=", "source": ...} or
// {"method": "attribute", "source": ...}; or the older "register_cap_option": "-X=".
void read_register_cap(const nlohmann::json& j, const std::string& origin, DeviceProfile& p) {
  if (j.contains(kLegacyRegisterCapField)) {
    if (j.contains(kRegisterCapField)) {
      throw invalid_file(origin, std::string("field '") + kLegacyRegisterCapField +
                                     "' is the older form of '" + kRegisterCapField +
                                     "': give one of them");
    }
    p.register_cap_method = RegisterCapMethod::kBuildOption;
    p.register_cap_option = cap_option(j[kLegacyRegisterCapField], kLegacyRegisterCapField, origin);
    return;
  }
  if (!j.contains(kRegisterCapField)) return;
  const auto& c = j[kRegisterCapField];
  const std::string field = kRegisterCapField;
  if (!c.is_object()) {
    throw invalid_file(origin, "field '" + field +
                                   "' must be {\"method\": \"build_option\" or \"attribute\", "
                                   "\"source\": ...}");
  }
  const std::string method = c.contains("method") && c["method"].is_string()
                                 ? c["method"].get<std::string>()
                                 : std::string();
  if (method == "build_option") {
    p.register_cap_method = RegisterCapMethod::kBuildOption;
    if (!c.contains("option")) throw invalid_file(origin, "missing field '" + field + ".option'");
    p.register_cap_option = cap_option(c["option"], field + ".option", origin);
  } else if (method == "attribute") {
    p.register_cap_method = RegisterCapMethod::kAttribute;
    if (c.contains("option")) {
      throw invalid_file(origin,
                         "field '" + field + ".option' applies to method build_option only");
    }
  } else {
    throw invalid_file(origin, "field '" + field + ".method' must be build_option or attribute");
  }
  if (!c.contains("source") || !c["source"].is_string() || c["source"].get<std::string>().empty()) {
    throw invalid_file(origin, "field '" + field + ".source' must name a public source");
  }
  p.register_cap_source = c["source"].get<std::string>();
}

void read_starting_configurations(const nlohmann::json& j, const std::string& origin,
                                  DeviceProfile& p) {
  static const char* kField = "starting_configurations";
  if (!j.contains(kField)) return;
  const auto& s = j[kField];
  if (!s.is_object() || !s.contains("source") || !s["source"].is_string() ||
      !s.contains("entries") || !s["entries"].is_array()) {
    throw invalid_file(origin,
                       std::string("field '") + kField +
                           "' must be {\"source\": how they were chosen, \"entries\": [...]}");
  }
  p.starting_configurations_source = s["source"].get<std::string>();
  for (size_t i = 0; i < s["entries"].size(); ++i) {
    const auto& e = s["entries"][i];
    const std::string where = std::string(kField) + ".entries[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("kernel") || !e["kernel"].is_string() ||
        !e.contains("parameters") || !e["parameters"].is_object()) {
      throw invalid_file(origin, "field '" + where +
                                     "' must be {\"kernel\", \"precision\", "
                                     "\"parameters\": {...}, \"facts\"}");
    }
    StartingConfiguration c;
    c.kernel = e["kernel"].get<std::string>();
    try {
      c.precision = parse_precision(e.value("precision", std::string("32")));
    } catch (const std::exception&) {
      throw invalid_file(origin, "field '" + where + ".precision' must be 16, 16acc32, 32 or 64");
    }
    for (const auto& [name, value] : e["parameters"].items()) {
      if (!value.is_number_integer()) {
        throw invalid_file(origin,
                           "field '" + where + ".parameters." + name + "' must be an integer");
      }
      c.parameters[name] = value.get<int64_t>();
    }
    if (e.contains("facts") && !e["facts"].is_string()) {
      throw invalid_file(origin, "field '" + where + ".facts' must be a string");
    }
    c.facts = e.value("facts", std::string());
    for (const auto& [field, target] :
         {std::pair{"vgprs", &c.registers}, std::pair{"lds_bytes", &c.local_mem_bytes}}) {
      if (!e.contains(field)) continue;
      if (!e[field].is_number_integer() || e[field].get<int64_t>() < 0) {
        throw invalid_file(origin, "field '" + where + "." + field + "' must be a whole number");
      }
      *target = e[field].get<int64_t>();
    }
    p.starting_configurations.push_back(std::move(c));
  }
}

// The architecture profile with one model's figures in place: it matches that model's devices
// only, ahead of the architecture (and of lower-priority models).
DeviceProfile model_variant(const DeviceProfile& base, const ProfileModel& model) {
  DeviceProfile v = base;
  v.model = model.name;
  v.description = base.description + ", " + model.name;
  v.name_contains = model.name_contains;
  v.priority = base.priority + 1 + model.priority;
  for (const auto& [key, figure] : model.figures) v.figures[key] = figure;
  v.models.clear();
  return v;
}

}  // namespace

std::string to_string(RegisterCapMethod method) {
  switch (method) {
    case RegisterCapMethod::kBuildOption:
      return "build_option";
    case RegisterCapMethod::kAttribute:
      return "attribute";
    case RegisterCapMethod::kNone:
      break;
  }
  return "none";
}

const std::vector<std::string>& DeviceProfile::required_figures() {
  static const std::vector<std::string> kRequired = {"simds_per_cu",
                                                     "registers_per_simd_lane",
                                                     "register_granularity",
                                                     "max_registers_per_thread",
                                                     "max_waves_per_simd",
                                                     "lds_per_cu_bytes",
                                                     "lds_per_workgroup_bytes",
                                                     "lds_banks",
                                                     "cache_line_bytes",
                                                     "peak_fp32_gflops",
                                                     "peak_fp16_gflops",
                                                     "memory_bandwidth_gbs"};
  return kRequired;
}

double DeviceProfile::figure(const std::string& key) const {
  auto it = figures.find(key);
  if (it == figures.end())
    throw invalid_file(file, "profile " + name + " has no figure '" + key + "'");
  return it->second.value;
}

std::optional<double> DeviceProfile::figure_if(const std::string& key) const {
  auto it = figures.find(key);
  if (it == figures.end()) return std::nullopt;
  return it->second.value;
}

bool DeviceProfile::matches(const DeviceInfo& device) const {
  if (!match_type.empty() && match_type != device.type) return false;
  if (!name_contains.empty() && !names_profile(*this, names_of(device))) return false;
  if (!vendor_contains.empty() &&
      std::none_of(vendor_contains.begin(), vendor_contains.end(),
                   [&](const std::string& v) { return contains_ci(device.vendor, v); })) {
    return false;
  }
  return true;
}

void to_json(nlohmann::json& j, const DeviceProfile& p) {
  j = nlohmann::json{{"name", p.name},
                     {"description", p.description},
                     {"match",
                      {{"type", p.match_type},
                       {"name_contains", p.name_contains},
                       {"vendor_contains", p.vendor_contains},
                       {"whole_words", p.whole_words},
                       {"priority", p.priority}}},
                     {"wavefront_sizes", p.wavefront_sizes},
                     {"build_options", p.build_options}};
  if (p.register_cap_method != RegisterCapMethod::kNone) {
    j[kRegisterCapField] = {{"method", to_string(p.register_cap_method)},
                            {"source", p.register_cap_source}};
    if (p.register_cap_method == RegisterCapMethod::kBuildOption) {
      j[kRegisterCapField]["option"] = p.register_cap_option;
    }
  }
  if (!p.capabilities.empty()) j["capabilities"] = capabilities_to_json(p.capabilities);
  if (!p.model.empty()) j["model"] = p.model;
  if (!p.default_kernel.empty())
    j["default_kernel"] = {{"value", p.default_kernel}, {"source", p.default_kernel_source}};
  for (const auto& [k, f] : p.figures) j["figures"][k] = {{"value", f.value}, {"source", f.source}};
  if (!p.selection.is_null()) j["selection"] = p.selection;
  if (!p.starting_configurations.empty()) {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& c : p.starting_configurations) {
      entries.push_back({{"kernel", c.kernel},
                         {"precision", to_string(c.precision)},
                         {"parameters", configuration_to_json(c.parameters)},
                         {"facts", c.facts}});
      if (c.registers) entries.back()["vgprs"] = *c.registers;
      if (c.local_mem_bytes) entries.back()["lds_bytes"] = *c.local_mem_bytes;
    }
    j["starting_configurations"] = {{"source", p.starting_configurations_source},
                                    {"entries", entries}};
  }
}

DeviceProfile profile_from_json(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) throw invalid_file(origin, "a device profile must be a JSON object");
  DeviceProfile p;
  p.file = origin;
  p.name = require_string(j, "name", origin);
  p.description = j.value("description", "");
  if (!j.contains("match") || !j["match"].is_object()) {
    throw invalid_file(origin, "field 'match' must be an object");
  }
  const auto& m = j["match"];
  p.match_type = m.value("type", "");
  if (!p.match_type.empty() && p.match_type != "gpu" && p.match_type != "cpu" &&
      p.match_type != "accelerator") {
    throw invalid_file(origin, "field 'match.type' must be gpu, cpu or accelerator");
  }
  p.name_contains = string_list(m, "name_contains", origin + " match");
  p.vendor_contains = string_list(m, "vendor_contains", origin + " match");
  if (m.contains("whole_words") && !m["whole_words"].is_boolean()) {
    throw invalid_file(origin, "field 'match.whole_words' must be true or false");
  }
  p.whole_words = m.value("whole_words", false);
  if (m.contains("priority") && !m["priority"].is_number_integer()) {
    throw invalid_file(origin, "field 'match.priority' must be an integer");
  }
  p.priority = m.value("priority", 0);
  if (!j.contains("wavefront_sizes") || !j["wavefront_sizes"].is_object() ||
      !j["wavefront_sizes"].contains("value") || !j["wavefront_sizes"]["value"].is_array()) {
    throw invalid_file(origin, "field 'wavefront_sizes' must be {\"value\": [..], \"source\": ..}");
  }
  for (const auto& w : j["wavefront_sizes"]["value"]) {
    if (!w.is_number_integer() || w.get<int64_t>() <= 0) {
      throw invalid_file(origin, "field 'wavefront_sizes.value' must hold positive integers");
    }
    p.wavefront_sizes.push_back(w.get<int64_t>());
  }
  if (p.wavefront_sizes.empty()) throw invalid_file(origin, "field 'wavefront_sizes' is empty");
  if (!j.contains("figures") || !j["figures"].is_object()) {
    throw invalid_file(origin, "field 'figures' must be an object");
  }
  p.figures = figures_from_json(j["figures"], "figures", origin);
  for (const auto& key : DeviceProfile::required_figures()) {
    if (!p.figures.count(key)) throw invalid_file(origin, "missing field 'figures." + key + "'");
  }
  if (j.contains("build_options")) {
    if (!j["build_options"].is_string()) {
      throw invalid_file(origin, "field 'build_options' must be a string");
    }
    p.build_options = j["build_options"].get<std::string>();
  }
  read_register_cap(j, origin, p);
  p.capabilities = capabilities_from_json(j, p.vendor_contains, origin);
  if (j.contains("default_kernel")) {
    const auto& d = j["default_kernel"];
    if (!d.is_object() || !d.contains("value") || !d["value"].is_string() ||
        d["value"].get<std::string>().empty() || !d.contains("source") ||
        !d["source"].is_string()) {
      throw invalid_file(origin,
                         "field 'default_kernel' must be {\"value\": template, \"source\": why}");
    }
    p.default_kernel = d["value"].get<std::string>();
    p.default_kernel_source = d["source"].get<std::string>();
  }
  read_starting_configurations(j, origin, p);
  if (j.contains("selection")) {
    if (!j["selection"].is_object())
      throw invalid_file(origin, "field 'selection' must be an object");
    p.selection = j["selection"];
  }
  p.models = models_from_json(j, origin);
  return p;
}

DeviceProfile load_profile(const std::string& path) {
  return profile_from_json(read_json_file(path), path);
}

ProfileSet ProfileSet::load_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  ProfileSet set;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw invalid_file(dir, "device profile folder not found");
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<DeviceProfile> profiles;
  for (const auto& f : files) profiles.push_back(load_profile(f));
  return from_profiles(std::move(profiles));
}

ProfileSet ProfileSet::from_profiles(std::vector<DeviceProfile> profiles) {
  ProfileSet set;
  for (auto& p : profiles) {
    if (set.find(p.name)) throw invalid_file(p.file, "profile name '" + p.name + "' is used twice");
    for (const auto& model : p.models) set.variants_.push_back(model_variant(p, model));
    set.profiles_.push_back(std::move(p));
  }
  return set;
}

const DeviceProfile* ProfileSet::find(const std::string& name,
                                      const std::string& device_name) const {
  return find_in(name, device_name.empty() ? std::vector<std::string>{}
                                           : std::vector<std::string>{device_name});
}

const DeviceProfile* ProfileSet::find(const std::string& name, const DeviceInfo& device) const {
  return find_in(name, names_of(device));
}

const DeviceProfile* ProfileSet::find_in(const std::string& name,
                                         const std::vector<std::string>& device_names) const {
  const DeviceProfile* best = nullptr;
  for (const auto& p : profiles_) {
    if (lower(p.name) == lower(name)) best = &p;
  }
  if (!best || device_names.empty()) return best;
  for (const auto& v : variants_) {
    if (lower(v.name) == lower(name) && names_profile(v, device_names) &&
        v.priority > best->priority) {
      best = &v;
    }
  }
  return best;
}

const DeviceProfile* ProfileSet::match(const DeviceInfo& device) const {
  // A card whose driver names it in a way no profile knows yet: the user names the profile.
  if (const char* forced = std::getenv("GEMMTUNE_DEVICE_PROFILE"); forced && *forced) {
    if (const DeviceProfile* p = find(forced, device)) return p;
    static std::once_flag warned;
    std::call_once(warned, [&] {
      spdlog::warn("GEMMTUNE_DEVICE_PROFILE={} names no device profile: matching by name", forced);
    });
  }
  const DeviceProfile* best = nullptr;
  for (const auto* set : {&variants_, &profiles_}) {
    for (const auto& p : *set) {
      if (p.matches(device) && (!best || p.priority > best->priority)) best = &p;
    }
  }
  return best;
}

DeviceLimits device_limits(const DeviceInfo& device, const DeviceProfile* profile) {
  DeviceLimits limits;
  limits.max_work_group_size = static_cast<int64_t>(device.max_work_group_size);
  limits.local_mem_bytes = static_cast<int64_t>(device.local_mem_bytes);
  for (auto s : device.max_work_item_sizes)
    limits.max_work_item_sizes.push_back(static_cast<int64_t>(s));
  // Without a profile nothing is known of a register-cap method: caps are refused then.
  limits.register_cap_known = true;
  if (profile) {
    limits.max_registers_per_thread =
        static_cast<int64_t>(profile->figure_if("max_registers_per_thread").value_or(0));
    if (profile->register_cap_method == RegisterCapMethod::kBuildOption) {
      limits.register_cap_option = profile->register_cap_option;
    }
    limits.register_cap_attribute = profile->register_cap_method == RegisterCapMethod::kAttribute;
  }
  return limits;
}

Occupancy estimate_occupancy(const DeviceProfile& profile, int64_t registers, int64_t lds_bytes,
                             int64_t work_group_size, int64_t wavefront) {
  Occupancy o;
  o.wavefront = wavefront > 0 ? wavefront
                              : (profile.wavefront_sizes.empty() ? 1 : profile.wavefront_sizes[0]);
  o.max_waves = static_cast<int64_t>(profile.figure("max_waves_per_simd"));
  auto granule = std::max<int64_t>(1, static_cast<int64_t>(profile.figure("register_granularity")));
  auto file = static_cast<int64_t>(profile.figure("registers_per_simd_lane"));
  // The register figures are the native wave size's. A wider wave (wave64 on RDNA) holds each
  // register for twice the lanes: half the registers per lane, allocated in half the granule.
  const int64_t native = profile.wavefront_sizes.empty() ? o.wavefront : profile.wavefront_sizes[0];
  if (native > 0 && o.wavefront > native) {
    file = file * native / o.wavefront;
    granule = std::max<int64_t>(1, granule * native / o.wavefront);
  }
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
                                  double compute_units, double clock_mhz) {
  auto computed_fp32 = [&]() -> std::optional<double> {
    const double fp32 = profile.figure_if("peak_fp32_gflops").value_or(0);
    if (fp32 > 0) return fp32;
    const auto per_cycle = profile.figure_if("fp32_flops_per_cycle_per_cu");
    double cus = compute_units, mhz = clock_mhz;
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

}  // namespace gemmtune
