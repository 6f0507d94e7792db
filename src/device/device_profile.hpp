// SPDX-License-Identifier: Apache-2.0
// Device profiles (devices/<arch>.json): the architecture figures that the register estimate,
// occupancy and roofline analysis need. Each figure carries the public source it comes from.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/device/device_capabilities.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

struct DeviceInfo;

struct Figure {
  double value = 0;
  std::string source;
};

// Figures that differ between models of one architecture (the H100's memory bandwidth is not the
// H200's): a model matches by device name and overrides the architecture's figures. A name that
// lists several cards before any '(' ("AMD Instinct MI60 / MI50", "Navi 21 [Radeon RX 6800/6800
// XT / 6900 XT]") names no model: such a device keeps the architecture's figures.
struct ProfileModel {
  std::string name;                        // e.g. "H100"
  std::vector<std::string> name_contains;  // any of these in a device name (as the profile's)
  int priority = 0;                        // among the models of one profile; higher wins
  std::map<std::string, Figure> figures;   // overrides
};

// How a device applies a kernel's register cap (the profile's "register_cap": {"method": ...}).
enum class RegisterCapMethod {
  kNone,         // not at all: register-cap parameters stay 0
  kBuildOption,  // a compiler option with the value appended (NVIDIA: -cl-nv-maxrregcount=)
  kAttribute,    // a source attribute the template declares under -DREGCAP_ATTRIBUTE=1 (AMD)
};
std::string to_string(RegisterCapMethod method);

// A configuration a profile declares to start from where nothing was measured on the device
// (the AMD profiles: chosen offline by `gemmtune space --target`, from real resources and a
// predicted speed; never measured). Searches measure them first; the library runs one on an
// untuned device instead of a template's defaults.
struct StartingConfiguration {
  std::string kernel;
  Precision precision = Precision::kFP32;
  Configuration parameters;
  std::string facts;  // what is known of it, e.g. "63 VGPRs, 16 waves per SIMD, no spill"
  std::optional<int64_t> registers;        // per work-item, from the offline build
  std::optional<int64_t> local_mem_bytes;  // per work-group
};

struct DeviceProfile {
  std::string name;         // e.g. "gfx1012"
  std::string model;        // "" for the architecture; the model's name for a model's variant
  std::string description;  // e.g. "AMD Radeon RX 5500 XT (RDNA1)"
  std::string file;         // where it was loaded from
  // Matching: every listed criterion must hold; a device matches the profile with highest priority.
  std::string match_type;                  // "gpu", "cpu" or "" (any)
  std::vector<std::string> name_contains;  // any of these, case-insensitive, in a device name:
                                           // CL_DEVICE_NAME or the AMD board name
  // "whole_words": a name matches only where no letter or digit adjoins it, so that "navi1" does
  // not match "navi14" nor "gfx1010" "gfx10100"; punctuation ("gfx906:sramecc+", "(navi14,") and
  // spaces bound words. Also applies to the models' names.
  bool whole_words = false;
  std::vector<std::string> vendor_contains;
  int priority = 0;
  std::vector<int64_t> wavefront_sizes;
  std::map<std::string, Figure> figures;
  std::string build_options;
  // Features the templates may use under a define the host adds (device_capabilities.hpp).
  std::vector<Capability> capabilities;
  // How register caps are applied, and the public source that says so ("register_cap"; the
  // older "register_cap_option": "-X=" still reads as method build_option with that option).
  // Without a method kernels run uncapped.
  RegisterCapMethod register_cap_method = RegisterCapMethod::kNone;
  std::string register_cap_option;  // kBuildOption: the option the value is appended to
  std::string register_cap_source;
  std::vector<ProfileModel> models;  // empty in a model's variant
  // The template `gemmtune search` tunes when none is named, and the measurement behind that
  // choice; empty where nothing was measured on the class (search then tries every template).
  std::string default_kernel;
  std::string default_kernel_source;
  // "starting_configurations": {"source": how they were chosen, "entries": [...]}; best first.
  std::vector<StartingConfiguration> starting_configurations;
  std::string starting_configurations_source;
  // "selection": how the chooser falls back and the selection model's constants on this class,
  // as written (an object, or null where the profile has none). src/select/policy.hpp reads it:
  // its meaning belongs to the layer that chooses.
  nlohmann::json selection;

  // The figure `key`, or throws Error naming the profile file and the field.
  double figure(const std::string& key) const;
  std::optional<double> figure_if(const std::string& key) const;
  bool matches(const DeviceInfo& device) const;

  // Figures every profile must have.
  static const std::vector<std::string>& required_figures();
};

void to_json(nlohmann::json& j, const DeviceProfile& p);

// Reads one profile; errors name the file and the field.
DeviceProfile load_profile(const std::string& path);
DeviceProfile profile_from_json(const nlohmann::json& j, const std::string& origin);

class ProfileSet {
 public:
  // Loads every *.json of `dir` (sorted by name).
  static ProfileSet load_dir(const std::string& dir);
  // The set of `profiles` (e.g. parsed from data compiled into a library), in this order.
  static ProfileSet from_profiles(std::vector<DeviceProfile> profiles);
  const std::vector<DeviceProfile>& profiles() const { return profiles_; }
  // The architecture profile `name`; with `device_name`, the variant of the model that device is
  // when the profile declares one (else the architecture profile). nullptr when unknown.
  const DeviceProfile* find(const std::string& name, const std::string& device_name = "") const;
  // The same, the model named by the device's name or its board name.
  const DeviceProfile* find(const std::string& name, const DeviceInfo& device) const;
  // Best-matching profile of a device, or nullptr ("generic"): a model's variant before its
  // architecture. $GEMMTUNE_DEVICE_PROFILE (a profile's name) overrides the matching.
  const DeviceProfile* match(const DeviceInfo& device) const;

 private:
  const DeviceProfile* find_in(const std::string& name,
                               const std::vector<std::string>& device_names) const;
  std::vector<DeviceProfile> profiles_;
  std::vector<DeviceProfile> variants_;  // one per declared model, figures overridden
};

// Waves per SIMD a kernel can keep resident, from a profile's register file and LDS.
struct Occupancy {
  int64_t wavefront = 0;
  int64_t allocated_registers = 0;  // per work-item, rounded up to the allocation granule
  int64_t waves_by_registers = 0;
  int64_t waves_by_lds = 0;  // max_waves when the kernel uses no LDS
  int64_t max_waves = 0;
  int64_t waves = 0;    // the minimum of the three
  std::string limiter;  // "registers", "LDS" or "hardware"
};

// `registers` per work-item, `lds_bytes` per work-group. The wavefront is the profile's first
// (native) size unless given.
Occupancy estimate_occupancy(const DeviceProfile& profile, int64_t registers, int64_t lds_bytes,
                             int64_t work_group_size, int64_t wavefront = 0);

// Peak GFLOPS of the profile for a precision; a zero figure of a CPU profile is computed from
// compute units x clock (MHz) x fp32_flops_per_cycle_per_cu, taking the device's figures (0 =
// unknown: the profile's). Nullopt when unknown.
std::optional<double> peak_gflops(const DeviceProfile& profile, Precision precision,
                                  double compute_units, double clock_mhz);

// The limits a configuration must respect on this device: the driver's work-group size and local
// memory, and the profile's register budget per work-item and register-cap method (none without a
// profile).
DeviceLimits device_limits(const DeviceInfo& device, const DeviceProfile* profile);

}  // namespace gemmtune
