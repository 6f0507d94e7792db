// SPDX-License-Identifier: Apache-2.0
// What the selection reads from search journals, apart from the rest of src/select so that a
// program that never reads a journal (libgemmtune) does not link the journal reader and zlib.
#include <algorithm>
#include <map>

#include "src/core/error.hpp"
#include "src/db/journal.hpp"
#include "src/select/model.hpp"
#include "src/select/selection.hpp"

namespace gemmtune {

std::vector<CalibrationSample> journal_observations(
    const std::string& journal_path,
    const std::function<const KernelSpec*(const std::string&)>& specs, const DeviceModel& device) {
  const Journal journal = read_journal(journal_path);
  std::map<std::string, CalibrationSample> best;
  for (const auto& e : journal.entries) {
    if (e.result.status != Status::kOk || e.result.gflops <= 0) continue;
    const std::string key = problem_key(e) + "|" + to_string(e.result.config);
    auto it = best.find(key);
    if (it != best.end() && it->second.gflops >= e.result.gflops) continue;
    CalibrationSample o;
    o.kernel = e.kernel;
    o.config = e.result.config;
    o.problem = e.problem;
    o.gflops = e.result.gflops;
    o.geometry = TileGeometry::of(specs ? specs(o.kernel) : nullptr, o.config, e.problem.precision,
                                  e.result.usage, device);
    best[key] = std::move(o);
  }
  std::vector<CalibrationSample> out;
  for (auto& [key, o] : best) out.push_back(std::move(o));
  return out;
}

void CandidatePool::add_journal(const std::string& path, size_t per_problem) {
  // A file whose first line is no journal record (a database given by mistake) is refused here.
  const Journal journal = read_journal(path);
  std::map<std::string, std::vector<const JournalEntry*>> by_problem;
  for (const auto& e : journal.entries) {
    if (e.result.status == Status::kOk && e.result.gflops > 0) {
      by_problem[problem_key(e)].push_back(&e);
    }
  }
  for (auto& [key, results] : by_problem) {
    std::stable_sort(results.begin(), results.end(), [](const auto* a, const auto* b) {
      return a->result.gflops > b->result.gflops;
    });
    size_t taken = 0;
    std::map<std::string, bool> seen;  // a configuration measured twice counts once
    for (const JournalEntry* e : results) {
      if (taken == per_problem) break;
      if (!seen.emplace(to_string(e->result.config), true).second) continue;
      Measurement m;
      m.problem = e->problem;
      m.gflops = e->result.gflops;
      m.source = MeasurementSource::kJournal;
      m.origin = path;
      m.entry = e->problem.shape.to_string() + " in the journal";
      m.usage = e->result.usage;
      add(e->kernel, e->result.config, std::move(m));
      ++taken;
    }
  }
}

}  // namespace gemmtune
