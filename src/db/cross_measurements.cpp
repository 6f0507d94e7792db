// SPDX-License-Identifier: Apache-2.0
#include "src/db/cross_measurements.hpp"

#include <map>
#include <set>
#include <string>

namespace gemmtune {

CrossMeasurementCount add_cross_measurements(Database& db, const Journal& journal,
                                             size_t min_configs) {
  // By problem (kernel and problem key): its successful entries.
  std::map<std::string, std::vector<const JournalEntry*>> by_problem;
  for (const auto& e : journal.entries) {
    if (e.result.ok() && e.result.gflops > 0) by_problem[problem_key(e)].push_back(&e);
  }
  CrossMeasurementCount count;
  for (const auto& [key, entries] : by_problem) {
    std::set<std::string> configs;
    for (const JournalEntry* e : entries) configs.insert(to_string(e->result.config));
    if (configs.size() < min_configs) {
      ++count.passed_over;
      continue;
    }
    ++count.shapes;
    for (const JournalEntry* e : entries) {
      const EntryKey at = EntryKey::of(e->kernel, e->problem);
      db.add_measurement(at, e->result.config, at.shape, e->result.gflops);
      ++count.measurements;
    }
  }
  return count;
}

}  // namespace gemmtune
