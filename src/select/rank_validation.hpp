// SPDX-License-Identifier: Apache-2.0
// How well the prior (prior.hpp) ranks configurations, checked where they were measured: each
// problem of a search journal (a replay of a whole space, or any search) has its recorded
// configurations ranked by the prior alone, and the best measured among the first k of that
// ranking is divided by the best measured of all. A random ranking is the baseline: its expected
// best of k, computed exactly over all orderings.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/db/journal.hpp"
#include "src/select/prior.hpp"

namespace gemmtune {

class KernelSpec;

// One configuration of a problem and its best measurement (a success before a failure).
struct RecordedConfiguration {
  Configuration config;
  Status status = Status::kOk;
  double gflops = 0;  // 0 unless it ran and was verified (status ok)
  ResourceUsage usage;
};

struct RecordedProblem {
  std::string kernel;  // the template measured
  Problem problem;
  std::vector<RecordedConfiguration> configurations;  // distinct, in the order first recorded
};

// The journal's results grouped by problem (problem_key), problems in the order first recorded.
std::vector<RecordedProblem> recorded_problems(const Journal& journal);

// Measured resources by configuration, read from a JSONL file of one object per line:
//   {"kernel": "xgemm_fast", "config": {"MWG": 128, ...}, "registers": 127, "spills": 0,
//    "local_mem_bytes": 8256}
// ("spills" in 32-bit words and "local_mem_bytes" optional; other fields ignored). Errors name
// the file, the line and the field.
class ResourceTable {
 public:
  static ResourceTable load(const std::string& path);
  void put(const std::string& kernel, const Configuration& config, const ResourceUsage& usage);
  const ResourceUsage* find(const std::string& kernel, const Configuration& config) const;
  size_t size() const { return usage_.size(); }

 private:
  std::map<std::string, ResourceUsage> usage_;
};

// Where the registers of a recorded configuration come from when no resource table has it.
enum class RegisterSource {
  kRecorded,  // the journal's usage (ptxas, AMDGPU metadata), else the declaration's estimate
  kEstimate,  // the declaration's estimate, whatever the journal says
};

struct RankValidationOptions {
  std::vector<size_t> top = {20, 50};
  RegisterSource registers = RegisterSource::kRecorded;
  // Failed results (a launch refused, a wrong result) ranked as 0 GFLOPS; by default they are
  // left out, ranking what ran.
  bool include_failed = false;
  size_t show = 0;  // the first `show` of the ranking, with prediction and measurement
  PriorConstants constants = fitted_prior_constants();
  ModelConstants model = SelectionPolicy::defaults().model;
};

struct TopFraction {
  size_t k = 0;
  // Best measured in the prior's first k / best measured of all; equal predictions across the
  // k-th place count as a random choice among them (the expectation).
  double model = 0;
  double random = 0;  // the same, expected over every ordering
};

struct RankedRow {
  size_t rank = 0;  // 1-based
  Configuration config;
  double predicted = 0, measured = 0;
  int64_t registers = 0, spills = 0;
  bool measured_registers = false;
};

struct ProblemRanking {
  std::string kernel;
  Problem problem;
  size_t recorded = 0;           // distinct configurations recorded
  size_t ranked = 0;             // of those, ranked
  size_t failed_left_out = 0;    // failed results not ranked
  size_t without_resources = 0;  // not in the resource table (when one is given): not ranked
  // Where the ranked ones' registers come from.
  size_t from_table = 0, from_journal = 0, estimated = 0;
  // Recorded register counts that, spills included, fall below the accumulators the
  // configuration holds (a misread build log): the estimate was taken instead.
  size_t implausible_registers = 0;
  double optimum_gflops = 0;
  Configuration optimum;
  // Where the prior puts the measured optimum: 1 + those it predicts faster, and how many others
  // it predicts exactly as fast (it cannot tell them apart).
  size_t optimum_rank = 0, optimum_ties = 0;
  std::vector<TopFraction> top;
  std::vector<RankedRow> first;  // options.show rows
};

// Ranks one recorded problem. `resources` (may be null) restricts the ranking to the
// configurations it holds and gives their registers. Throws Error(kInvalidArgument) when nothing
// is left to rank or nothing ranked was measured.
ProblemRanking validate_ranking(const RecordedProblem& recorded, const KernelSpec* spec,
                                const DeviceModel& device, const ResourceTable* resources,
                                const RankValidationOptions& options);

// The expected best of `k` of `measured` taken in a uniformly random order, divided by the best
// (exact: the chance that the j-th best is the best of k is C(n-j, k-1) / C(n, k)).
double random_top_fraction(const std::vector<double>& measured, size_t k);

// The problem's successful configurations as samples for fit_prior (registers as `registers`
// says, or the table's).
std::vector<PriorSample> prior_samples(const RecordedProblem& recorded, const KernelSpec* spec,
                                       const DeviceModel& device, const ResourceTable* resources,
                                       RegisterSource registers);

}  // namespace gemmtune
