// SPDX-License-Identifier: Apache-2.0
// The tuning loop for one problem: asks the searcher for configurations, keeps the evaluator's
// compiler ahead of the device (prepare() gets the next proposals while the current one is timed),
// journals each result the moment it is known and stops on the first limit reached or on request.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/strategies/searcher.hpp"
#include "src/db/journal.hpp"
#include "src/eval/evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

struct TuneProgress {
  size_t done = 0;      // evaluations, resumed ones included
  size_t limit = 0;     // evaluations allowed
  size_t failed = 0;    // results that are not ok
  size_t measured = 0;  // evaluations run by this call
  double elapsed_s = 0;
  double remaining_s = 0;  // estimate
  std::optional<Result> best;
  const Result* last = nullptr;
  bool new_best = false;
};

struct TuneSettings {
  StopCondition stop;
  // Proposals in flight: one timed, the others compiling (with several devices, one more per
  // device beyond the first).
  size_t lookahead = 2;
  // Proposals are made by a thread of their own while the devices measure, rather than by each
  // device between two measurements: the strategy's thinking then costs no device time, but the
  // order in which results reach it depends on timing, so a replay is no longer repeatable.
  bool propose_while_measuring = false;
  // Above 1: a measurement stops once even its fastest sample is slower than this multiple of the
  // search's best time so far (EvaluationHint): ranking it needs no more (0 = every measurement
  // takes the timing settings' samples).
  double stop_above_best = 0;
  const std::atomic<bool>* interrupt = nullptr;
  JournalWriter* journal = nullptr;
  std::string kernel = kDefaultKernel;  // the template measured, journalled with each result
  // Results known from an earlier run (a resumed journal): told to the searcher, never measured.
  std::vector<Result> known;
  // Results of earlier searches of the same problem (the evaluation cache): told like `known`,
  // but one outside this space (another space, another shard) is passed over without a warning.
  std::vector<Result> cached;
  // Configurations measured first, before the strategy proposes any (the best of related
  // problems: a workload's other shapes); the strategy learns them like its own. Ones outside
  // this space or already known are passed over.
  std::vector<Configuration> warm_start;
  // The work-items per group of a configuration (0 = unknown). With it the search learns the
  // per-kernel limit of the device (CL_KERNEL_WORK_GROUP_SIZE, which may be far below the
  // device's): once a built kernel was refused for its work-group size, a proposal larger than
  // every built kernel allowed is answered without a build (status device_limit, not counted
  // against the evaluation budget).
  std::function<int64_t(const Configuration&)> work_group_size;
  // The template's runtime parameters (kernel arguments, KernelSpec::runtime_parameters): a
  // configuration that differs from a built one only there needs no build of its own, so a lane
  // whose next proposal is still being built (Evaluator::ready) measures such a sibling of a
  // measured configuration meanwhile, the strategy learning it like its own proposals. Empty: none.
  RuntimeParameters runtime_parameters;
  // Called with each result measured now, after the journal has it.
  std::function<void(const Result&)> on_measured;
  std::function<void(const TuneProgress&)> on_progress;
};

struct TuneOutcome {
  std::optional<Result> best;
  size_t evaluations = 0;  // resumed ones included
  size_t measured = 0;
  size_t verified = 0;  // measured now, ran and matched the reference
  size_t resumed = 0;
  size_t warm_started = 0;  // configurations of `warm_start` queued before the strategy's
  size_t cached = 0;  // results taken from the evaluation cache (also counted in `evaluations`)
  size_t failed = 0;
  size_t over_kernel_limit = 0;  // proposals answered by the learned per-kernel limit
  // Runtime siblings of measured configurations measured while a proposal's build was under way
  // (also counted in `measured`).
  size_t siblings = 0;
  size_t not_in_space = 0;  // known results whose configuration is not in this space
  // Most configurations proposed and not yet measured at once (the one being measured included):
  // how far ahead of the device the compiler could work.
  size_t max_in_flight = 0;
  double elapsed_s = 0;
  // Where the devices' time went, summed over the lanes: timing (the timed samples), the rest of
  // an evaluation (waiting for its build, verifying, transfers), and waiting for a proposal.
  double timing_s = 0, evaluating_s = 0, proposal_wait_s = 0;
  // The strategy's own time (taking in results, proposing), on whichever thread ran it: near
  // elapsed_s, the strategy's pace bounds the search.
  double strategy_s = 0;
  std::string stop_reason;
  bool interrupted = false;
  double evaluations_per_minute() const {
    return elapsed_s > 0 ? 60.0 * double(measured) / elapsed_s : 0;
  }
};

// Proposals to keep in flight so that `processes` compile processes stay busy while the device
// measures: one build running and one waiting per process, plus the one being measured.
inline size_t pool_lookahead(size_t processes) {
  return 2 * processes + 1;
}

// Whether `candidate` is faster than `best` (none counts as slower than anything valid).
bool better_result(const Result& candidate, const std::optional<Result>& best, double flops);

TuneOutcome run_search(Evaluator& evaluator, const Problem& problem, const SearchSpace& space,
                       Searcher& searcher, const TuneSettings& settings);
// The same search measured on several devices at once, one evaluator (`lanes`) per device: each
// lane measures the next proposal as soon as it is free, the searcher learns every result, and
// the journal gets them in the order they end. The first lane is told what comes (prepare()), to
// build it ahead for all. With one lane it is the search above, on this thread.
TuneOutcome run_search(const std::vector<Evaluator*>& lanes, const Problem& problem,
                       const SearchSpace& space, Searcher& searcher, const TuneSettings& settings);

}  // namespace gemmtune
