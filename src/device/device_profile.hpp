// Device profiles (devices/<arch>.json): the architecture figures that the register estimate,
// occupancy and roofline analysis need. Each figure carries the public source it comes from.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

struct DeviceInfo;

struct Figure {
  double value = 0;
  std::string source;
};

// Figures that differ between models of one architecture (the H100's memory bandwidth is not the
// H200's): a model matches by device name and overrides the architecture's figures.
struct ProfileModel {
  std::string name;                        // e.g. "H100"
  std::vector<std::string> name_contains;  // any of these, case-insensitive, in CL_DEVICE_NAME
  int priority = 0;                        // among the models of one profile; higher wins
  std::map<std::string, Figure> figures;   // overrides
};

struct DeviceProfile {
  std::string name;         // e.g. "gfx1012"
  std::string model;        // "" for the architecture; the model's name for a model's variant
  std::string description;  // e.g. "AMD Radeon RX 5500 XT (RDNA1)"
  std::string file;         // where it was loaded from
  // Matching: every listed criterion must hold; a device matches the profile with highest priority.
  std::string match_type;                  // "gpu", "cpu" or "" (any)
  std::vector<std::string> name_contains;  // any of these, case-insensitive, in CL_DEVICE_NAME
  std::vector<std::string> vendor_contains;
  int priority = 0;
  std::vector<int64_t> wavefront_sizes;
  std::map<std::string, Figure> figures;
  std::string build_options;
  // The compiler option that caps registers per work-item, the value appended (NVIDIA:
  // "-cl-nv-maxrregcount="); empty where the driver has none, and then kernels run uncapped.
  std::string register_cap_option;
  std::vector<ProfileModel> models;  // empty in a model's variant
  // The template `gemmtune search` tunes when none is named, and the measurement behind that
  // choice; empty where nothing was measured on the class (search then tries every template).
  std::string default_kernel;
  std::string default_kernel_source;

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
  // Best-matching profile of a device, or nullptr ("generic"): a model's variant before its
  // architecture.
  const DeviceProfile* match(const DeviceInfo& device) const;

 private:
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
// memory, and the profile's register budget per work-item and register-cap option (none without a
// profile).
DeviceLimits device_limits(const DeviceInfo& device, const DeviceProfile* profile);

}  // namespace gemmtune
