// SPDX-License-Identifier: Apache-2.0
#include "search/tuning/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

namespace gemmtune {

bool better_result(const Result& candidate, const std::optional<Result>& best, double flops) {
  const double t = result_time_ms(candidate, flops);
  if (!candidate.ok() || t <= 0) return false;
  return !best || t < result_time_ms(*best, flops);
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_from(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A runtime sibling waiting to be measured: ranked by its measured relative's rate, fastest
// first (then by index, for a fixed order).
struct Sibling {
  double relative_gflops = 0;
  size_t index = 0;
  bool operator<(const Sibling& o) const {
    return relative_gflops != o.relative_gflops ? relative_gflops > o.relative_gflops
                                                : index < o.index;
  }
};

// One search's shared state. Each lane (a device) takes the next proposal, measures it outside
// the lock and hands the result back; the searcher, the journal and the counts are touched only
// under the lock, so the lanes measure at once and everything else happens one result at a time.
class TuneLoop {
 public:
  TuneLoop(const std::vector<Evaluator*>& lanes, const Problem& problem, const SearchSpace& space,
           Searcher& searcher, const TuneSettings& settings)
      : lanes_(lanes),
        problem_(problem),
        space_(space),
        searcher_(searcher),
        settings_(settings),
        flops_(problem.flops()),
        start_(Clock::now()),
        issued_(space.size(), false) {
    progress_.limit = settings.stop.eval_limit(space.size());
  }

  TuneOutcome run() {
    tell_earlier_results();
    queue_warm_start();
    std::thread proposer;
    if (settings_.propose_while_measuring) proposer = std::thread([this] { propose_ahead(); });
    if (lanes_.size() == 1) {
      measure_on(*lanes_.front());
    } else {
      std::vector<std::thread> threads;
      for (Evaluator* lane : lanes_) threads.emplace_back([this, lane] { measure_on(*lane); });
      for (auto& t : threads) t.join();
    }
    if (proposer.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stop("the devices have stopped");  // keeps the first reason given
      }
      proposer.join();
      // Results that came after the proposer's last round: the searcher's record stays whole.
      for (auto& [index, r] : pending_) searcher_.tell(index, r, flops_);
      pending_.clear();
    }
    if (failure_) std::rethrow_exception(failure_);
    out_.elapsed_s = elapsed();
    return std::move(out_);
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Whether the searcher took `r` (a result of an earlier run) as one of its evaluations.
  bool tell_known(const Result& r) {
    const auto index = space_.index_of(r.config);
    if (!index || searcher_.seen(*index)) return false;  // not in this space, or recorded twice
    issued_[*index] = true;
    searcher_.tell(*index, r, flops_);
    ++out_.evaluations;
    if (!r.ok()) ++out_.failed;
    if (better_result(r, out_.best, flops_)) out_.best = r;
    return true;
  }

  void tell_earlier_results() {
    for (const auto& r : settings_.known) learn_kernel_limit(r);
    for (const auto& r : settings_.cached) learn_kernel_limit(r);
    for (const auto& r : settings_.known) {
      if (tell_known(r)) {
        ++out_.resumed;
      } else if (!space_.index_of(r.config)) {
        ++out_.not_in_space;
      }
    }
    // The journal gets them too: it stays the whole record of this search (and a replay file).
    for (const auto& r : settings_.cached) {
      if (!tell_known(r)) continue;
      ++out_.cached;
      if (settings_.journal) settings_.journal->append(settings_.kernel, problem_, r, 0);
    }
    if (out_.not_in_space > 0) {
      spdlog::warn("{} journalled results are not in this space; ignored", out_.not_in_space);
    }
  }

  void queue_warm_start() {
    std::vector<Configuration> warm;
    for (const auto& c : settings_.warm_start) {
      const auto index = space_.index_of(c);
      if (!index || !searcher_.claim(*index)) continue;
      issued_[*index] = true;
      queue_.push_back(*index);
      warm.push_back(c);
    }
    out_.warm_started = warm.size();
    if (!warm.empty()) lanes_.front()->prepare(problem_, warm);
  }

  // Ends the search for every lane (the first reason given is kept).
  void stop(const std::string& reason) {
    if (out_.stop_reason.empty()) out_.stop_reason = reason;
    stopped_ = true;
    changed_.notify_all();
  }

  // Keeps `lookahead` proposals in flight per lane beyond the first (as many as the strategy
  // takes now: it may take more as it learns), never more than the budget has room for. The
  // first lane's evaluator is told what comes, to build it ahead.
  void propose_more() {
    claim(std::exchange(unclaimed_, {}));
    const size_t want = wanted();
    if (want == 0) return;
    const auto t0 = Clock::now();
    auto fresh = searcher_.ask(want);
    out_.strategy_s += seconds_from(t0);
    queue_proposals(fresh);
  }

  // Proposals the lanes, the strategy's pace and the budget have room for now. Touches the
  // searcher: the thread that owns it calls this.
  size_t wanted() const {
    const size_t per_search =
        std::max<size_t>(1, std::min(settings_.lookahead, searcher_.max_batch(pace())));
    const size_t target = per_search + lanes_.size() - 1;
    // Proposals only: a sibling being measured takes no proposal's place.
    const size_t proposals_measuring = measuring_ - siblings_measuring_.size();
    const size_t started = budgeted() + proposals_measuring + queue_.size();
    const size_t room = progress_.limit > started ? progress_.limit - started : 0;
    const size_t in_flight = queue_.size() + proposals_measuring;
    return std::min(target > in_flight ? target - in_flight : 0, room);
  }

  // Under the lock. A proposal that a lane has meanwhile queued as a runtime sibling is left to
  // that sibling's measurement (whose result the searcher is told for it).
  void queue_proposals(const std::vector<size_t>& fresh) {
    std::vector<Configuration> configs;
    for (size_t i : fresh) {
      if (issued_[i]) continue;
      issued_[i] = true;
      queue_.push_back(i);
      configs.push_back(space_.config(i));
    }
    if (!configs.empty()) lanes_.front()->prepare(problem_, configs);
  }

  // A result for the searcher: told now, or with a proposer thread handed to it, which alone
  // touches the searcher while the lanes measure.
  void tell(size_t index, const Result& r) {
    if (settings_.propose_while_measuring) {
      pending_.emplace_back(index, r);
      ++changes_;
    } else {
      const auto t0 = Clock::now();
      searcher_.tell(index, r, flops_);
      out_.strategy_s += seconds_from(t0);
    }
  }

  // Proposals in flight that keep the devices busy (Little's law): each device measures one
  // while the next ones build, and a build lasts build/measuring times as long as a measurement,
  // so that many per device are building at any time; one more absorbs the spread. Before any
  // measurement it is the least, one building per device: a model-based strategy would otherwise
  // fill the whole lookahead with guesses made before its first result. A build is averaged over
  // the proposals (a runtime sibling has none), a measurement over every evaluation.
  size_t pace() const {
    const size_t measured = out_.measured, proposals = out_.measured - out_.siblings;
    if (measuring_ms_ <= 0 || proposals == 0) return lanes_.size() + 1;
    const double build_ms = compile_ms_ / double(proposals);
    const double measure_ms = measuring_ms_ / double(measured);
    const double builds = build_ms / measure_ms * double(lanes_.size());
    return size_t(std::ceil(builds)) + lanes_.size() + 1;
  }

  // The proposer's loop (propose_while_measuring): tells the searcher the results that came in
  // and tops the queue up whenever a result or a taken proposal changes what is in flight, so
  // that the lanes find their next configuration waiting. The strategy thinks without the lock:
  // the lanes record results and take proposals meanwhile.
  void propose_ahead() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopped_) {
      const uint64_t seen = changes_;
      std::vector<std::pair<size_t, Result>> tells(std::make_move_iterator(pending_.begin()),
                                                   std::make_move_iterator(pending_.end()));
      pending_.clear();
      const std::vector<size_t> siblings = std::exchange(unclaimed_, {});
      std::exception_ptr failed;
      size_t want = 0;
      std::vector<size_t> fresh;
      try {
        lock.unlock();
        const auto thinking = Clock::now();
        claim(siblings);
        for (const auto& [index, r] : tells) searcher_.tell(index, r, flops_);
        double thought = seconds_from(thinking);
        lock.lock();
        want = stopped_ ? 0 : wanted();
        lock.unlock();
        const auto asking = Clock::now();
        if (want > 0) fresh = searcher_.ask(want);
        thought += seconds_from(asking);
        lock.lock();
        out_.strategy_s += thought;
      } catch (...) {
        if (!lock.owns_lock()) lock.lock();
        failed = std::current_exception();
      }
      if (failed) {
        if (!failure_) failure_ = failed;
        stop("the strategy failed");
        break;
      }
      if (stopped_) break;
      queue_proposals(fresh);
      if (fresh.empty() && want > 0 && queue_.empty() && siblings_.empty() && measuring_ == 0 &&
          pending_.empty()) {
        stop("the strategy has nothing more to propose");
        break;
      }
      changed_.notify_all();
      if (tells.empty() && fresh.empty() && changes_ == seen) changed_.wait(lock);
    }
  }

  // The evaluations the budget counts: runtime siblings are measured in time a device would
  // otherwise wait, beside the strategy's proposals, never instead of one.
  size_t budgeted() const { return out_.evaluations - out_.siblings; }

  // Under the lock: the configurations that differ from `r`'s only in a runtime parameter, in the
  // space and never issued, queued for the lanes at once (ranked by `r`'s speed) and marked for
  // the searcher to be claimed from it: waiting for the strategy's thread, busy thinking, would
  // leave the devices idle while their builds are under way.
  void queue_siblings(const Result& r) {
    const Configuration& config = r.config;
    bool queued = false;
    for (const auto& runtime : settings_.runtime_parameters) {
      const auto own = config.find(runtime.name);
      // A value built in is a build of its own: it has no siblings.
      if (own == config.end() || !runtime.argued(own->second)) continue;
      for (const auto& p : space_.parameters()) {
        if (p.name != runtime.name) continue;
        for (int64_t value : p.values) {
          if (value == own->second || !runtime.argued(value)) continue;
          Configuration sibling = config;
          sibling[runtime.name] = value;
          const auto index = space_.index_of(sibling);
          if (!index || issued_[*index]) continue;
          issued_[*index] = true;
          siblings_.insert({r.gflops, *index});
          unclaimed_.push_back(*index);
          queued = true;
        }
      }
    }
    if (queued) changed_.notify_all();
  }

  // Claims queued siblings from the searcher, so that it never proposes them. One it proposed
  // meanwhile stays its proposal, answered by the sibling's result. Touches the searcher: the
  // thread that owns it calls this.
  void claim(const std::vector<size_t>& siblings) {
    for (size_t i : siblings) searcher_.claim(i);
  }

  // Under the lock: where in the queue the first proposal `lane` can measure without waiting for
  // its build is. Builds finish out of order: one that is done never waits behind one that is not.
  std::optional<size_t> first_ready(Evaluator& lane) const {
    for (size_t i = 0; i < queue_.size(); ++i) {
      if (lane.ready(problem_, space_.config(queue_[i]))) return i;
    }
    return std::nullopt;
  }

  // Under the lock: a sibling for `lane` to measure when no proposal is ready (or none is there)
  // and a sibling is.
  std::optional<size_t> take_sibling() {
    if (siblings_.empty()) return std::nullopt;
    // The fastest relative's first: the waits a build leaves may not reach the slow ones.
    const size_t index = siblings_.begin()->index;
    siblings_.erase(siblings_.begin());
    siblings_measuring_.insert(index);
    return index;
  }

  // The next configuration for a lane to measure, or none when the search ends.
  std::optional<size_t> next(std::unique_lock<std::mutex>& lock, Evaluator& lane) {
    while (!stopped_) {
      if (settings_.interrupt && settings_.interrupt->load()) {
        out_.interrupted = true;
        stop("interrupted");
        break;
      }
      if (auto why = settings_.stop.reached(budgeted(), elapsed(), space_.size())) {
        stop(*why);
        break;
      }
      // With a proposer thread the lanes never touch the strategy: they wait for its proposals.
      if (!settings_.propose_while_measuring) propose_more();
      const auto ready = first_ready(lane);
      if (!ready) {
        if (auto sibling = take_sibling()) {
          ++measuring_;
          return sibling;
        }
      }
      if (!queue_.empty()) {
        out_.max_in_flight = std::max(out_.max_in_flight, queue_.size() + measuring_);
        const auto taken = queue_.begin() + std::ptrdiff_t(ready.value_or(0));
        const size_t index = *taken;
        queue_.erase(taken);
        if (answer_over_limit(index)) continue;
        ++measuring_;
        if (settings_.propose_while_measuring) {
          ++changes_;
          changed_.notify_all();
        }
        return index;
      }
      // The budget is not reached (checked above): the strategy has run dry (the proposer
      // thread says so itself).
      if (!settings_.propose_while_measuring && measuring_ == 0) {
        stop("the strategy has nothing more to propose");
        break;
      }
      // Another lane's result may let the strategy propose again, or end the search.
      changed_.wait(lock);
    }
    return std::nullopt;
  }

  // Whether proposal `index` needs more work-items than the device's built kernels allow (known
  // once one was refused for it); if so it is journalled and told as a device_limit result
  // without a build.
  bool answer_over_limit(size_t index) {
    if (!settings_.work_group_size || !kernel_limit_refused_ || largest_kernel_limit_ <= 0) {
      return false;
    }
    const Configuration config = space_.config(index);
    const int64_t wg = settings_.work_group_size(config);
    if (wg <= largest_kernel_limit_) return false;
    const Result r = Result::failure(
        config, Status::kDeviceLimit,
        fmt::format("needs {} work-items per group; no kernel built on this device allowed more "
                    "than {} (CL_KERNEL_WORK_GROUP_SIZE)",
                    wg, largest_kernel_limit_));
    if (settings_.journal) settings_.journal->append(settings_.kernel, problem_, r, elapsed());
    tell(index, r);
    ++out_.over_kernel_limit;
    if (out_.over_kernel_limit == 1) {
      spdlog::info(
          "configurations over {} work-items per group are passed over without a build: "
          "this device's kernels allow no more",
          largest_kernel_limit_);
    }
    return true;
  }

  // What a result teaches about the per-kernel work-group limit.
  void learn_kernel_limit(const Result& r) {
    if (!r.usage.max_work_group_size) return;
    largest_kernel_limit_ = std::max(largest_kernel_limit_, *r.usage.max_work_group_size);
    if (r.status == Status::kDeviceLimit && settings_.work_group_size &&
        settings_.work_group_size(r.config) > *r.usage.max_work_group_size) {
      kernel_limit_refused_ = true;
    }
  }

  void record(size_t index, Result r) {
    learn_kernel_limit(r);
    --measuring_;
    ++out_.evaluations;
    ++out_.measured;
    const bool sibling = siblings_measuring_.erase(index) > 0;
    out_.siblings += sibling ? 1 : 0;
    if (!sibling) compile_ms_ += std::max(0.0, r.compile_ms);
    measuring_ms_ += r.measuring_ms();
    tell(index, r);
    if (r.ok()) queue_siblings(r);
    if (!r.ok()) ++out_.failed;
    if (r.ok()) ++out_.verified;
    const bool improved = better_result(r, out_.best, flops_);
    if (improved) out_.best = r;
    report_progress(r, improved);
    changed_.notify_all();
  }

  void report_progress(const Result& r, bool improved) {
    if (!settings_.on_progress) return;
    progress_.done = budgeted();
    progress_.failed = out_.failed;
    progress_.measured = out_.measured;
    progress_.elapsed_s = elapsed();
    const double per_eval = progress_.elapsed_s / double(out_.measured);
    double remaining = per_eval * double(progress_.limit - std::min(progress_.limit, budgeted()));
    if (settings_.stop.time_budget_s > 0) {
      remaining =
          std::min(remaining, std::max(0.0, settings_.stop.time_budget_s - progress_.elapsed_s));
    }
    progress_.remaining_s = remaining;
    progress_.best = out_.best;
    progress_.last = &r;
    progress_.new_best = improved;
    settings_.on_progress(progress_);
  }

  // What the next measurement is told: where it may stop, from the best so far.
  EvaluationHint hint_now() const {
    EvaluationHint hint;
    if (settings_.stop_above_best > 1 && out_.best) {
      hint.stop_above_ms = settings_.stop_above_best * result_time_ms(*out_.best, flops_);
    }
    return hint;
  }

  // One lane's loop. An error of one lane (a lost device) ends every lane's search and is
  // thrown once they have stopped.
  void measure_on(Evaluator& evaluator) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto waiting_since = Clock::now();
    while (auto index = next(lock, evaluator)) {
      const auto taken = Clock::now();
      out_.proposal_wait_s += std::chrono::duration<double>(taken - waiting_since).count();
      const Configuration config = space_.config(*index);
      const EvaluationHint hint = hint_now();
      lock.unlock();
      Result r;
      try {
        r = evaluator.evaluate_hinted(problem_, config, hint);
      } catch (...) {
        lock.lock();
        --measuring_;
        if (!failure_) failure_ = std::current_exception();
        stop("an evaluator failed");
        break;
      }
      r.config = config;
      const auto done = Clock::now();
      // Written before the result counts, outside the lock: the other lanes and the proposer
      // need not wait for the disk.
      if (settings_.journal) settings_.journal->append(settings_.kernel, problem_, r, elapsed());
      if (settings_.on_measured) settings_.on_measured(r);
      lock.lock();
      out_.evaluating_s += std::chrono::duration<double>(done - taken).count();
      out_.timing_s += r.measuring_ms() * 1e-3;
      record(*index, std::move(r));
      waiting_since = Clock::now();
    }
  }

  const std::vector<Evaluator*>& lanes_;
  const Problem& problem_;
  const SearchSpace& space_;
  Searcher& searcher_;
  const TuneSettings& settings_;
  const double flops_;
  const Clock::time_point start_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<size_t> queue_;             // proposed, not yet taken by a lane
  std::set<Sibling> siblings_;           // queued runtime siblings of measured configurations
  std::set<size_t> siblings_measuring_;  // those taken by a lane, result not yet recorded
  std::vector<size_t> unclaimed_;        // siblings queued, not yet claimed from the searcher
  // Every row put in flight or told (proposals, siblings, warm starts, earlier results): a row is
  // measured once.
  std::vector<bool> issued_;
  // Results the proposer thread has yet to tell the searcher, and a count of the changes it
  // waits for (a result, a proposal taken).
  std::deque<std::pair<size_t, Result>> pending_;
  uint64_t changes_ = 0;
  size_t measuring_ = 0;  // taken by a lane, result not yet recorded
  // The largest CL_KERNEL_WORK_GROUP_SIZE of the kernels built so far, and whether one was
  // refused for needing more (answer_over_limit).
  int64_t largest_kernel_limit_ = 0;
  bool kernel_limit_refused_ = false;
  double compile_ms_ = 0;  // build and measuring times of the results measured, for pace()
  double measuring_ms_ = 0;
  bool stopped_ = false;
  std::exception_ptr failure_;
  TuneOutcome out_;
  TuneProgress progress_;
};

}  // namespace

TuneOutcome run_search(const std::vector<Evaluator*>& lanes, const Problem& problem,
                       const SearchSpace& space, Searcher& searcher, const TuneSettings& settings) {
  if (lanes.empty()) throw std::logic_error("run_search: no evaluator");
  return TuneLoop(lanes, problem, space, searcher, settings).run();
}

TuneOutcome run_search(Evaluator& evaluator, const Problem& problem, const SearchSpace& space,
                       Searcher& searcher, const TuneSettings& settings) {
  return run_search(std::vector<Evaluator*>{&evaluator}, problem, space, searcher, settings);
}

}  // namespace gemmtune
