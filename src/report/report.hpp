// SPDX-License-Identifier: Apache-2.0
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

// Peak GFLOPS of the profile for a precision on `device` (its compute units and clock where the
// profile computes the peak from them; see the overload in device_profile.hpp).
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
