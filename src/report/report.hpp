// Bottleneck report of tuned entries: for each, what limits it on its device (occupancy, local
// memory, registers, wave utilization, work per thread, vector width, memory- or compute-bound,
// fraction of peak), each item with its value, its target and a verdict. Figures come from the
// kernel spec (estimates) and the device profile, or from the driver where it measured them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/db/database.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

enum class Verdict { kOk, kWarn, kBad, kUnknown };
std::string to_string(Verdict v);  // "ok", "warn", "bad", "n/a"

struct ReportItem {
  std::string id;     // "occupancy", "lds", "registers", ...
  std::string title;  // "Occupancy"
  std::optional<double> value;
  std::string value_text;  // the value in words, with its unit
  std::string target;      // what would be good, in words
  Verdict verdict = Verdict::kUnknown;
  std::string basis;  // "measured (AMDGPU metadata)", "estimate (kernel spec)", "profile", ...
  std::string note;
};

struct EntryReport {
  EntryKey key;
  double gflops = 0;
  Configuration parameters;
  std::vector<ReportItem> items;
  std::vector<std::string> notes;  // what could not be analyzed and why
  const ReportItem* item(const std::string& id) const;
};

struct DatabaseReport {
  DatabaseDevice device;
  std::string profile;  // the profile used, "" when none
  std::vector<EntryReport> entries;
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
// compute units x clock (MHz) x fp32_flops_per_cycle_per_cu. Nullopt when unknown.
std::optional<double> peak_gflops(const DeviceProfile& profile, Precision precision,
                                  const DatabaseDevice& device);

// One entry. `spec` and `profile` may be null: the items that need them say so.
EntryReport analyze_entry(const DatabaseEntry& entry, const KernelSpec* spec,
                          const DeviceProfile* profile, const DatabaseDevice& device);

// Every entry; kernel specs are read from `templates_dir` (a missing one is noted, not an error).
DatabaseReport analyze_database(const Database& db, const std::string& templates_dir,
                                const DeviceProfile* profile);

std::string to_markdown(const DatabaseReport& report);
void to_json(nlohmann::json& j, const ReportItem& item);
void to_json(nlohmann::json& j, const EntryReport& entry);
void to_json(nlohmann::json& j, const DatabaseReport& report);

}  // namespace gemmtune
