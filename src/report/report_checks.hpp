// SPDX-License-Identifier: Apache-2.0
// The checks of the bottleneck report, one function each; analyze_entry (report.cpp) gathers the
// facts of an entry once and runs them in the report's order. Internal to src/report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "src/core/int_math.hpp"
#include "src/report/report.hpp"

namespace gemmtune::report_checks {

// Reads the roles of a configuration the same way for every template: from the template's
// declaration (its "roles"); without one, by the conventional parameter names.
class Values {
 public:
  Values(const KernelSpec* spec, const Configuration& config, Context context)
      : roles_(spec, config, std::move(context)) {}

  std::optional<int64_t> get(Role role) const { return roles_.get(role); }
  // Work per work-item along one dimension: the register tile, else tile / threads.
  std::optional<int64_t> per_thread(Role register_tile, Role tile, Role threads) const;

 private:
  RoleValues roles_;
};

// What the checks read: the entry with its template, device and profile, and the figures that
// several checks share, each measured by the driver where it was, else estimated from the spec.
struct EntryFacts {
  EntryFacts(const DatabaseEntry& entry, const KernelSpec* spec, const DeviceProfile* profile,
             const DatabaseDevice& device, Configuration params);
  // Not copyable: `values` refers to `params`.
  EntryFacts(const EntryFacts&) = delete;
  EntryFacts& operator=(const EntryFacts&) = delete;

  const DatabaseEntry& entry;
  const KernelSpec* spec;  // null when there is none or it does not match the entry
  const DeviceProfile* profile;
  const DatabaseDevice& device;
  const Configuration params;  // the entry's parameters, completed with the template's defaults
  const int64_t elem;          // bytes per matrix element
  const Context ctx;           // ELEM_BYTES, COMPUTE_UNITS
  const Values values;
  const bool cpu;  // a CPU device: occupancy means nothing and registers are vector registers

  std::optional<int64_t> lds;  // bytes per work-group
  std::string lds_basis;
  std::optional<int64_t> regs;  // per work-item
  std::string regs_basis;
  std::optional<int64_t> wg;   // work-items per work-group
  int64_t wave = 0;            // the profile's native wavefront, 0 when unknown
  std::optional<double> peak;  // GFLOPS of the profile in the entry's precision
};

// The basis words of a figure the driver measured.
std::string measured_basis(const DatabaseEntry& entry);
extern const char* const kEstimateBasis;

ReportItem lds_check(const EntryFacts& f);
ReportItem registers_check(const EntryFacts& f);
ReportItem occupancy_check(const EntryFacts& f);
ReportItem wave_utilization_check(const EntryFacts& f);
ReportItem work_per_thread_check(const EntryFacts& f);
ReportItem vector_width_check(const EntryFacts& f);
ReportItem bound_check(const EntryFacts& f);
ReportItem parallelism_check(const EntryFacts& f);
ReportItem peak_check(const EntryFacts& f);

// Work-groups one launch of the entry runs: from the template's launch block (split-K and the
// batch included, as the evaluator launches it), else tiles x batch x SPLITK from the parameters.
// Nullopt without tile sizes.
std::optional<int64_t> work_groups(const EntryFacts& f);

}  // namespace gemmtune::report_checks
