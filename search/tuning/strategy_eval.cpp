// SPDX-License-Identifier: Apache-2.0
#include "search/tuning/strategy_eval.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

#include "search/tuning/tuner.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

namespace {

const double kInf = std::numeric_limits<double>::infinity();
constexpr double kMsPerSecond = 1e3;
constexpr double kEps = 1e-12;  // a fraction equal to a threshold reaches it

// Answers from a shared recording; one per run, so the recording is never copied. With a clock,
// the simulated time at which each evaluation finished is kept.
class SharedReplay : public Evaluator {
 public:
  SharedReplay(const ReplayEvaluator& replay, ReplayClock* clock)
      : replay_(replay), clock_(clock) {}
  void prepare(const Problem& p, const std::vector<Configuration>& upcoming) override {
    if (!clock_) return;
    for (const auto& c : upcoming) clock_->proposed(replay_.lookup(p, c));
  }
  Result evaluate(const Problem& p, const Configuration& c) override {
    Result r = replay_.lookup(p, c);
    if (clock_) finish_s.push_back(clock_->measured(r));
    return r;
  }
  std::string description() const override { return replay_.description(); }
  std::vector<double> finish_s;

 private:
  const ReplayEvaluator& replay_;
  ReplayClock* clock_;
};

double compile_s(const Result& r) {
  return std::max(0.0, r.compile_ms) / kMsPerSecond;
}

double measure_s(const Result& r) {
  return r.measuring_ms() / kMsPerSecond;
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

// A run that stopped early (the whole space seen) keeps its last value at later budgets.
double at_budget(const std::vector<double>& traj, int evals) {
  if (traj.empty()) return 0.0;
  return traj[std::min<size_t>(traj.size(), size_t(evals)) - 1];
}

// The best fraction among the evaluations finished by `seconds`.
double at_time(const std::vector<double>& traj, const std::vector<double>& finish, double seconds) {
  double f = 0;
  for (size_t i = 0; i < traj.size() && i < finish.size() && finish[i] <= seconds; ++i) f = traj[i];
  return f;
}

// Runs every seed of one strategy (in `settings.threads` threads), filling the trajectories.
void run_seeds(const ReplayEvaluator& replay, const Problem& problem, const SearchSpace& space,
               const StrategyEvalSettings& settings, double optimum_ms, StrategyEval& eval) {
  const OptionValues options =
      settings.options.count(eval.strategy) ? settings.options.at(eval.strategy) : OptionValues{};
  eval.trajectories.assign(settings.seeds, {});
  eval.finish_s.assign(settings.seeds, {});
  std::atomic<int> next{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto worker = [&] {
    while (true) {
      const int run = next++;
      if (run >= settings.seeds) return;
      try {
        ReplayClock clock(settings.compile_processes);
        SharedReplay evaluator(replay, settings.times_s.empty() ? nullptr : &clock);
        auto searcher =
            make_searcher(eval.strategy, space, settings.first_seed + uint64_t(run), options);
        TuneSettings ts;
        ts.stop.max_evals = settings.max_evals;
        ts.lookahead = settings.lookahead;
        run_search(evaluator, problem, space, *searcher, ts);
        std::vector<double> traj;
        double best_ms = kInf;
        for (const auto& o : searcher->history()) {
          if (o.ok) best_ms = std::min(best_ms, o.time_ms);
          traj.push_back(std::isfinite(best_ms) ? optimum_ms / best_ms : 0.0);
        }
        eval.trajectories[run] = std::move(traj);
        eval.finish_s[run] = std::move(evaluator.finish_s);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = settings.seeds;
      }
    }
  };
  const int threads = std::max(1, std::min(settings.threads, settings.seeds));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

void summarize(const StrategyEvalSettings& settings, StrategyEval& eval) {
  const double runs = double(std::max(1, settings.seeds));
  for (double thr : settings.thresholds) {
    ThresholdStats ts;
    ts.threshold = thr;
    std::vector<double> needed;
    int reached = 0;
    for (const auto& traj : eval.trajectories) {
      double n = kInf;
      for (size_t i = 0; i < traj.size(); ++i) {
        if (traj[i] >= thr - kEps) {
          n = double(i + 1);
          break;
        }
      }
      if (std::isfinite(n)) ++reached;
      needed.push_back(n);
    }
    ts.median = quantile(needed, 0.5);
    ts.q1 = quantile(needed, 0.25);
    ts.q3 = quantile(needed, 0.75);
    ts.reached = double(reached) / runs;
    eval.thresholds.push_back(ts);
  }
  for (int b : settings.budgets) {
    if (b > settings.max_evals) continue;
    BudgetStats bs;
    bs.budget = b;
    double sum = 0;
    int good = 0;
    for (const auto& traj : eval.trajectories) {
      const double f = at_budget(traj, b);
      sum += f;
      good += f >= kReportedFraction - kEps ? 1 : 0;
    }
    bs.mean_fraction = sum / runs;
    bs.reached_95 = double(good) / runs;
    eval.budgets.push_back(bs);
  }
  for (double t : settings.times_s) {
    TimeStats ts;
    ts.seconds = t;
    double sum = 0;
    int good = 0, ended = 0;
    for (size_t r = 0; r < eval.trajectories.size(); ++r) {
      const auto& finish = eval.finish_s[r];
      const double f = at_time(eval.trajectories[r], finish, t);
      sum += f;
      good += f >= kReportedFraction - kEps ? 1 : 0;
      ended += !finish.empty() && finish.back() < t ? 1 : 0;
    }
    ts.mean_fraction = sum / runs;
    ts.reached_95 = double(good) / runs;
    ts.runs_ended = double(ended) / runs;
    eval.times.push_back(ts);
  }
}

}  // namespace

void ReplayClock::proposed(const Result& recorded) {
  if (free_.empty()) return;  // the measuring process builds it when it comes to it
  auto process = std::min_element(free_.begin(), free_.end());
  *process = std::max(now_, *process) + compile_s(recorded);
  ready_[to_string(recorded.config)] = *process;
}

double ReplayClock::measured(const Result& recorded) {
  const auto it = ready_.find(to_string(recorded.config));
  double ready = now_ + compile_s(recorded);
  if (it != ready_.end()) {
    ready = it->second;
    ready_.erase(it);
  }
  now_ = std::max(now_, ready) + measure_s(recorded);
  return now_;
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return kInf;
  std::sort(values.begin(), values.end());
  const double pos = q * double(values.size() - 1);
  const size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  if (!std::isfinite(values[hi])) return kInf;
  return values[lo] + (pos - double(lo)) * (values[hi] - values[lo]);
}

StrategyEvalReport evaluate_strategies(const ReplayEvaluator& replay, const Problem& problem,
                                       const StrategyEvalSettings& settings) {
  StrategyEvalReport report;
  report.kernel = replay.kernel();
  report.problem = problem;
  const auto configs = replay.configurations(problem);
  SearchSpace space = SearchSpace::from_configurations(configs);
  if (settings.spec) {
    space.add_spec_features(*settings.spec,
                            Context{{"ELEM_BYTES", element_bytes(problem.precision)}});
  }
  report.space_size = space.size();
  const auto best = replay.best(problem);
  if (!best) {
    throw invalid_argument("replay " + replay.path() + " holds no valid result for " +
                           problem.shape.to_string());
  }
  report.optimum_ms = best->time.median_ms;
  report.optimum = best->config;
  const double flops = problem.flops();
  for (const auto& c : configs) {
    const Result r = replay.lookup(problem, c);
    if (r.ok() && result_time_ms(r, flops) > 0) ++report.valid;
  }

  for (const auto& name : settings.strategies) {
    find_strategy(name);
    StrategyEval eval;
    eval.strategy = name;
    const auto t0 = std::chrono::steady_clock::now();
    run_seeds(replay, problem, space, settings, report.optimum_ms, eval);
    eval.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    summarize(settings, eval);
    report.strategies.push_back(std::move(eval));
  }
  return report;
}

void to_json(nlohmann::json& j, const ThresholdStats& t) {
  j = {{"threshold", t.threshold},
       {"median_evals", finite_or_null(t.median)},
       {"q1_evals", finite_or_null(t.q1)},
       {"q3_evals", finite_or_null(t.q3)},
       {"reached", t.reached}};
}

void to_json(nlohmann::json& j, const BudgetStats& b) {
  j = {{"budget", b.budget}, {"mean_fraction", b.mean_fraction}, {"reached_95", b.reached_95}};
}

void to_json(nlohmann::json& j, const TimeStats& t) {
  j = {{"seconds", t.seconds},
       {"mean_fraction", t.mean_fraction},
       {"reached_95", t.reached_95},
       {"runs_ended", t.runs_ended}};
}

void to_json(nlohmann::json& j, const StrategyEval& s) {
  j = {{"strategy", s.strategy},
       {"thresholds", s.thresholds},
       {"budgets", s.budgets},
       {"times", s.times},
       {"seconds", s.seconds}};
}

void to_json(nlohmann::json& j, const StrategyEvalReport& r) {
  j = {{"problem", problem_json(r.problem, r.kernel)},
       {"space_size", r.space_size},
       {"valid", r.valid},
       {"optimum_ms", r.optimum_ms},
       {"optimum", configuration_to_json(r.optimum)},
       {"strategies", r.strategies}};
}

}  // namespace gemmtune
